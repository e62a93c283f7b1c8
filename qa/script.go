package qa

import (
	"context"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// ScriptVariants gives a text in Chinese's other scripts, simplified and
// traditional, each when it differs (analysis.Scripts).
type ScriptVariants interface {
	Variants(text string) ([]string, error)
}

// rescript writes a Chinese question in the script the books in f print
// when they hold more of its terms in another: "為什麼要編譯兩遍才能生成目錄"
// is searched and assessed as "为什么要编译两遍才能生成目录" over a
// simplified book, and the other way over a traditional one. In the
// script the books do not print the question's character bigrams match
// nothing and weigh, in the answerability check, as the rarest of terms. It
// returns the question as searched and the runs changed ("編譯兩遍 → 编译两遍");
// the question unchanged when no variant is held better or without
// statistics.
func (p *Pipeline) rescript(ctx context.Context, question string, f citebook.Filter) (string, []string) {
	if p.deps.Scripts == nil || p.deps.Stats == nil || len(f.Books) == 0 {
		return question, nil
	}
	vs, err := p.deps.Scripts.Variants(question)
	if err != nil {
		p.log.WarnContext(ctx, "Chinese script conversion unavailable", "err", err)
		return question, nil
	}
	if len(vs) == 0 {
		return question, nil
	}
	cands := append([]string{question}, vs...)
	var terms []string
	ends := make([]int, len(cands))
	for i, c := range cands {
		seen := map[string]bool{}
		for _, t := range p.deps.Terms(c) {
			if !seen[t] && hasCJK(t) && !analysis.IsStopword(t) {
				seen[t] = true
				terms = append(terms, t)
			}
		}
		ends[i] = len(terms)
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, terms, f)
	if err != nil || len(df) != len(terms) {
		return question, nil
	}
	// The variant whose terms the books hold most; the question as asked
	// on a tie.
	best, bestHeld, start := 0, -1, 0
	for i, end := range ends {
		held := 0
		for _, d := range df[start:end] {
			if d > 0 {
				held++
			}
		}
		if held > bestHeld {
			best, bestHeld = i, held
		}
		start = end
	}
	if best == 0 {
		return question, nil
	}
	return cands[best], changedRuns(question, cands[best])
}

// changedRuns lists the runs of characters b writes differently from a,
// as "a's run → b's run"; the whole texts when the conversion changed
// their length (a phrase converted to one of another length).
func changedRuns(a, b string) []string {
	ra, rb := []rune(a), []rune(b)
	if len(ra) != len(rb) {
		return []string{a + " → " + b}
	}
	var out []string
	for i := 0; i < len(ra); {
		if ra[i] == rb[i] {
			i++
			continue
		}
		j := i
		for j < len(ra) && ra[j] != rb[j] {
			j++
		}
		out = append(out, string(ra[i:j])+" → "+string(rb[i:j]))
		i = j
	}
	return out
}
