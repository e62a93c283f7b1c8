package qa

import (
	"context"
	"regexp"
	"strings"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// latinWord matches a word of a question that a spelling rule may apply to.
var latinWord = regexp.MustCompile(`[A-Za-z]{4,}`)

// respell writes the question's words in the books' spelling where the
// reader's British or American spelling (analysis.Spellings) is one no
// chunk in f holds and the other is one they do: "neighbouring" is
// searched and assessed as the "neighboring" Walden prints. Without it the
// word matches nothing, in BM25, in the hashed vectors or in the
// answerability check, and weighs there as the rarest of terms. It returns
// the question as searched and the words changed ("neighbouring →
// neighboring"); the question unchanged when no word needs it or without
// statistics.
func (p *Pipeline) respell(ctx context.Context, question string, f citebook.Filter) (string, []string) {
	if p.deps.Stats == nil || p.deps.Terms == nil || len(f.Books) == 0 {
		return question, nil
	}
	type word struct {
		surface string
		alts    []string
	}
	var words []word
	var terms []string
	seen := map[string]bool{}
	for _, w := range latinWord.FindAllString(question, -1) {
		lw := strings.ToLower(w)
		if seen[lw] {
			continue
		}
		seen[lw] = true
		// The spelling rules first: they are string tests and apply to few
		// words, where segmenting every word of every question would not.
		spellings := analysis.Spellings(lw)
		if len(spellings) == 0 {
			continue
		}
		own := p.deps.Terms(lw)
		if len(own) != 1 {
			continue
		}
		var alts, altTerms []string
		for _, a := range spellings {
			if ts := p.deps.Terms(a); len(ts) == 1 {
				alts, altTerms = append(alts, a), append(altTerms, ts[0])
			}
		}
		if len(alts) == 0 {
			continue
		}
		words = append(words, word{surface: lw, alts: alts})
		terms = append(append(terms, own[0]), altTerms...)
	}
	if len(words) == 0 {
		return question, nil
	}
	df, _, err := p.deps.Stats.DocFreq(ctx, terms, f)
	if err != nil || len(df) != len(terms) {
		return question, nil
	}
	to := map[string]string{}
	var changed []string
	k := 0
	for _, w := range words {
		own := df[k]
		k++
		best, bestDF := "", 0
		for _, a := range w.alts {
			if df[k] > bestDF {
				best, bestDF = a, df[k]
			}
			k++
		}
		if own == 0 && best != "" {
			to[w.surface] = best
			changed = append(changed, w.surface+" → "+best)
		}
	}
	if len(to) == 0 {
		return question, nil
	}
	out := latinWord.ReplaceAllStringFunc(question, func(w string) string {
		alt, ok := to[strings.ToLower(w)]
		if !ok {
			return w
		}
		if r := []rune(w); unicode.IsUpper(r[0]) {
			return strings.ToUpper(alt[:1]) + alt[1:]
		}
		return alt
	})
	return out, changed
}
