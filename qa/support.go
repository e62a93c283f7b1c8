package qa

import (
	"fmt"
	"maps"
	"slices"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
)

// contentTerms segments text into the lower-cased content terms that
// support verification compares (citation.SupportCheck.Content).
func (p *Pipeline) contentTerms(s string) []string {
	return analysis.ContentTerms(p.deps.Terms(s))
}

// answerShare is the part of the answerability bar the kept quotes must
// reach on their own: the context passed the full bar, and a precise
// answer ("Around 100 datasets are supplied with R") may repeat only a few
// of the question's words.
const answerShare = 0.5

// stillAnswers turns a verified answer into a refusal when what survived
// verification no longer answers: the quotes of the kept statements must
// hold a share (answerShare) of what the answerability bar asks of the
// context. A model that answered a different question with genuine,
// supporting quotes is caught here.
//
// A quote of a table's row holds what its table's title and header say
// (rowContext; the label row above it is not counted here), and a quote
// holding an alias of a phrase the question names holds that phrase
// (Evidence.Aliases), and the first sentence under a section's title line
// holds the title's (leadsSection); context gives the quoted chunks.
func (p *Pipeline) stillAnswers(res *citation.Result, tr *Trace, context map[string]citebook.Chunk) {
	a := &tr.Answerability
	if res.Refused {
		a.Answerable = false
		if a.Code == CodeAnswered || a.Code == "" {
			if res.Total == 0 {
				a.Code, a.Reason = CodeNoAnswer, "the answerer found no answer in the passages"
			} else {
				a.Code = CodeUnsupported
				a.Reason = fmt.Sprintf("no statement of the answer was supported by its citations (%d of %d dropped)", res.Unsupported, res.Total)
			}
		}
		return
	}
	if p.opts.AnswerCoverage <= 0 || len(a.weights) == 0 {
		return
	}
	var quotes []string
	cited := map[string]bool{}
	for _, k := range res.Kept {
		for _, c := range k.Quotes {
			quotes = append(quotes, c.Quote)
			cited[c.ChunkID] = true
			if ch, ok := context[c.ChunkID]; ok && leadsSection(&ch, c.CharStart) {
				// The first sentence under a section's title is read
				// with the title ("罗保铭" heads the article whose
				// "1992年4月，任……" answers what he did then).
				head, _ := leadHeading(&ch)
				quotes = append(quotes, head)
			}
		}
	}
	have := analysis.TermSet(p.deps.Terms(strings.Join(quotes, "\n")))
	for _, id := range slices.Sorted(maps.Keys(cited)) {
		if c, ok := context[id]; ok {
			for t := range rowContext(&c, splitTable(c.Text), p.deps.Terms) {
				have[t] = true
			}
		}
	}
	have = withAliases(have, a.aliases)
	// In a fixed order: a sum in map order varies in its last bits from run
	// to run, enough to flip the verdict at the bar.
	total, got, n := 0.0, 0.0, 0
	for _, t := range slices.Sorted(maps.Keys(a.weights)) {
		w := a.weights[t]
		total += w
		if have[t] {
			got += w
			n++
		}
	}
	if total == 0 || got/total >= a.Bar*answerShare {
		return
	}
	res.Refused = true
	a.Answerable = false
	a.Code = CodeUnsupported
	a.Reason = fmt.Sprintf("the supported statements cover %d of %d key terms of the question", n, len(a.weights))
}
