package qa

import (
	"strings"
	"testing"
)

// FuzzDefine feeds book text to the abbreviation finder: it must not
// panic, and what it finds must be a short form in parentheses of the text
// with a long form of at least two words.
func FuzzDefine(f *testing.F) {
	for _, s := range []string{
		"Purchases of property, plant and equipment (PP&E) rose.",
		"capital expenditures (capex)", "(A)", "x (AB", "((((", "a b c (ABC)", "Ünïcödé wörds hëre (ÜWH)",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		defs := definitions{}
		define(s, defs)
		lower := strings.ToLower(s)
		for short, d := range defs {
			if !strings.Contains(lower, "("+short+")") {
				t.Fatalf("short form %q not in parentheses in %q", short, s)
			}
			if len(strings.Fields(d.long)) < 2 {
				t.Fatalf("long form %q of %q has fewer than two words", d.long, short)
			}
		}
		_ = expand(s, defs, nil, nil)
	})
}

// FuzzParseRanking feeds model replies to the rerank's decoder: it must
// not panic, and whatever it accepts names each passage of the list at
// most once and nothing outside it.
func FuzzParseRanking(f *testing.F) {
	for _, s := range []string{
		`{"ranking":[3,1]}`, `{"ranking":[]}`, `{"ranking":[99]}`, `{"ranking":[0]}`, `{"ranking":["2"]}`,
		`{"ranking":[1.5]}`, "```json\n{\"ranking\":[2,2,2]}\n```", `sure {"ranking":[-1]}`, `{"ranking":null}`, `[[[`,
	} {
		f.Add(s, 5)
	}
	f.Fuzz(func(t *testing.T, s string, n int) {
		n = n%20 + 1
		if n < 1 {
			n += 20
		}
		picks, err := parseRanking(s, n)
		if err != nil {
			return
		}
		if len(picks) == 0 {
			t.Fatalf("accepted an empty ranking from %q", s)
		}
		seen := map[int]bool{}
		for _, p := range picks {
			if p < 0 || p >= n || seen[p] {
				t.Fatalf("pick %d of %d passages (repeat %v) from %q", p, n, seen[p], s)
			}
			seen[p] = true
		}
		scores := rankScores(n, picks)
		for i := range scores {
			if scores[i] <= 0 {
				t.Fatalf("passage %d scored %v: a rerank must keep every passage", i, scores[i])
			}
		}
	})
}
