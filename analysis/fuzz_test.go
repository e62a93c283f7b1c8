package analysis

import (
	"testing"
	"unicode"
	"unicode/utf8"
)

// FuzzTerms checks the segmenter's invariants on arbitrary input: no empty
// terms, CJK terms of one or two characters, and other terms stable under
// re-segmentation (lowercasing and stemming are idempotent), so a term taken
// from a chunk always matches itself in a query.
func FuzzTerms(f *testing.F) {
	for _, s := range []string{"Vectors and Graphs", "中文检索系统", "R语言3.5版", "Café NAÏVE classes' flies", "\xff\xfe", "İstanbul ẞ", "x <<- 1; y %in% z", "(\"$$\") #!/bin/sh a->b && c |> d std::x \\\\", "%%in% %a%b% ----- ...:: C++", "＄＄ 符号$$来写"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		for _, term := range Terms(s) {
			if term == "" {
				t.Fatalf("empty term from %q", s)
			}
			if !utf8.ValidString(term) {
				t.Fatalf("invalid UTF-8 term %q from %q", term, s)
			}
			r, _ := utf8.DecodeRuneInString(term)
			if IsCJK(r) {
				if n := utf8.RuneCountInString(term); n > 2 {
					t.Fatalf("CJK term %q of %d characters from %q", term, n, s)
				}
				continue
			}
			if again := Terms(term); len(again) != 1 || again[0] != term {
				t.Fatalf("term %q from %q re-segments to %q", term, s, again)
			}
		}
	})
}

// FuzzQueryTerms checks that a query looks up only terms its text yields
// (or their letter and digit parts), each once, and never nothing for text
// that has terms.
func FuzzQueryTerms(f *testing.F) {
	for _, s := range []string{"What is 3M's FY2018 capex?", "检索系统是什么？", "年", "the of and", "\xff"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		all := map[string]bool{}
		for _, term := range Terms(s) {
			all[term] = true
			for _, p := range compoundParts(term) {
				all[p] = true
			}
		}
		q := QueryTerms(s)
		seen := map[string]bool{}
		for _, term := range q {
			if !all[term] || seen[term] {
				t.Fatalf("query term %q of %q: from the text %v, repeated %v", term, s, all[term], seen[term])
			}
			seen[term] = true
		}
		if len(all) > 0 && len(q) == 0 {
			t.Fatalf("no query terms for %q with terms %v", s, all)
		}
	})
}

// FuzzScriptsVariants checks the script converter on arbitrary question
// text: it never fails or panics, a variant is valid UTF-8 and differs from
// the text, and it changes nothing but Han characters — the words, numbers
// and symbols around them (\TeX, $$, 13) are searched as typed.
func FuzzScriptsVariants(f *testing.F) {
	for _, s := range []string{"為什麼我在 \\TeX 後面敲的空格，在輸出裡不見了？", "写页码范围（比如第 13 到 67 页）", "头发和乾隆", "English only", "\xff\xfe編", "𠀀𪚥 ㄅㄆ 〇"} {
		f.Add(s)
	}
	s := NewScripts()
	nonHan := func(t string) string {
		var b []rune
		for _, r := range t {
			if !(r >= 0x2E80 && unicode.Is(unicode.Han, r)) {
				b = append(b, r)
			}
		}
		return string(b)
	}
	f.Fuzz(func(t *testing.T, text string) {
		vs, err := s.Variants(text)
		if err != nil {
			t.Fatalf("Variants(%q): %v", text, err)
		}
		for _, v := range vs {
			if v == text {
				t.Fatalf("variant of %q equals it", text)
			}
			if utf8.ValidString(text) && !utf8.ValidString(v) {
				t.Fatalf("variant %q of %q is not UTF-8", v, text)
			}
			if utf8.ValidString(text) && nonHan(v) != nonHan(text) {
				t.Fatalf("variant %q of %q changed more than Han characters", v, text)
			}
		}
	})
}
