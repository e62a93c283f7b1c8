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
