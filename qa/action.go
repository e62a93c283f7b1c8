package qa

import (
	"context"
	"regexp"
	"strings"

	"github.com/citebook/citebook"
)

// asksHowTo finds the action a question asks how to do: "How do I merge
// …", "how can we reshape …", "How should one enroll …" (an adverb before
// the verb is skipped: "how can I still call"). English only.
var asksHowTo = regexp.MustCompile(`(?i)\bhow\s+(?:do|can|could|should|would|shall|must|might)\s+(?:i|you|we|one)\s+(?:(?:still|also|even|just|then|now|best|ever|actually|first|\w+ly)\s+)?([a-z]+)\b`)

// absentAction returns the action a "how do I …" question asks how to do
// when no chunk in f holds the verb in any of its regular forms ("merge",
// "merges", "merged", "merging"), and "" otherwise. A book that never names
// the action does not describe doing it in the asker's words: the passages
// that share the question's other words ("data frame", "column") are about
// something else, and quoting them answered "How do I merge two data
// frames on a shared ID column, like a database join?" from R-intro's
// attach() — every reader question books-dev asks of this kind the books
// do not cover. A paraphrased action whose forms the book prints
// ("warns" of "warned") is left to the coverage check; irregular forms
// ("sent" of "send") are not looked for.
func (p *Pipeline) absentAction(ctx context.Context, question string, keys []keyTerm, f citebook.Filter) string {
	m := asksHowTo.FindStringSubmatch(question)
	if m == nil || p.deps.Stats == nil {
		return ""
	}
	verb := strings.ToLower(m[1])
	own := p.deps.Terms(verb)
	if len(own) != 1 {
		return ""
	}
	absent := false
	for _, k := range keys {
		if k.text == own[0] && k.kind == kindWord && k.df == 0 {
			absent = true
		}
	}
	if !absent {
		return ""
	}
	var terms []string
	for _, form := range verbForms(verb) {
		if ts := p.deps.Terms(form); len(ts) == 1 && ts[0] != own[0] {
			terms = append(terms, ts[0])
		}
	}
	if len(terms) > 0 {
		df, _, err := p.deps.Stats.DocFreq(ctx, terms, f)
		if err != nil || len(df) != len(terms) {
			return ""
		}
		for _, d := range df {
			if d > 0 {
				return ""
			}
		}
	}
	return verb
}

// verbForms are a verb's regular inflections: -s/-es, -ed/-d, -ing, with
// a final e dropped, a final y turned to i and a final consonant doubled
// where English spelling may do so ("merging", "copied", "stopped").
func verbForms(v string) []string {
	out := []string{v + "s", v + "es", v + "ed", v + "d", v + "ing"}
	n := len(v)
	if n < 3 {
		return out
	}
	last := v[n-1]
	switch {
	case last == 'e':
		out = append(out, v[:n-1]+"ing")
	case last == 'y' && !isVowel(v[n-2]):
		out = append(out, v[:n-1]+"ies", v[:n-1]+"ied")
	case !isVowel(last) && isVowel(v[n-2]) && !isVowel(v[n-3]) && !strings.ContainsRune("wxy", rune(last)):
		out = append(out, v+string(last)+"ed", v+string(last)+"ing")
	}
	return out
}

func isVowel(b byte) bool { return strings.IndexByte("aeiou", b) >= 0 }
