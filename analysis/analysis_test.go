package analysis

import (
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

func TestTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"Vectors and Graphs", []string{"vector", "and", "graph"}},
		{"The classes' libraries", []string{"the", "class", "library"}},
		{"中文检索", []string{"中", "文", "中文", "检", "文检", "索", "检索"}},
		{"R语言3.5版", []string{"r", "语", "言", "语言", "3", "5", "版"}},
		{"Café NAÏVE Gödel Erdős cafés", []string{"cafe", "naive", "godel", "erdo", "cafe"}},
		// Folded only whole: a letter without an ASCII base keeps the word.
		{"Søren Ελλάδα Łódź straße", []string{"søren", "ελλάδα", "łódź", "straße"}},
		{"the ﬁle ＰＤＦ ２０２４年", []string{"the", "file", "pdf", "2024", "年"}},
		{`"quoted" NEAR(a* -b) col:x`, []string{"quoted", "near", "a", "b", "col", "x"}},
		{"  ,.;  ", nil},
		// Operators and markup are terms; prose punctuation, single
		// symbols, rules and underscores are not.
		{`Why not $$ for display maths?`, []string{"why", "not", "$$", "for", "display", "math"}},
		{`x <<- 3; y %in% z %*% w`, []string{"x", "<<-", "3", "y", "%in%", "z", "%*%", "w"}},
		{`#!/bin/sh`, []string{"#!/", "bin", "sh"}},
		{`a -> b && c |> f(x) std::vector "\\" C++`, []string{"a", "->", "b", "&&", "c", "|>", "f", "x", "std", "::", "vector", `\\`, "c", "++"}},
		{`("$$"), e.g., p. 3. ----- ... __init__ 50% a/b`, []string{"$$", "e", "g", "p", "3", "init", "50", "a", "b"}},
		{"符号＄＄来写", []string{"符", "号", "符号", "$$", "来", "写", "来写"}},
		// A full-width sentence end folds to "!", but ends the run as it ends
		// the sentence (Sentences splits there): "!$$" is no term.
		{"好！$$ 行", []string{"好", "$$", "行"}},
		{"！!000", []string{"000"}},
		{"(1,577) $ 12,345,678 1,2,3 2018,2019 a,123", []string{"1577", "12345678", "1", "2", "3", "2018", "2019", "a", "123"}},
		// An acronym's plural is the acronym, whatever the plural rules
		// make of the lower-cased word ("ids", "cpus", "apis" keep their
		// "s"); capitals throughout or one capital are no acronym plural.
		{"IDs CPUs APIs VMs URLs PDFs", []string{"id", "cpu", "api", "vm", "url", "pdf"}},
		{"ids cpus IDS Ms MP3s ÉTATs", []string{"ids", "cpus", "ids", "ms", "mp3", "etat"}},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			require.Equal(t, tt.want, Terms(tt.in))
		})
	}
}

func TestQueryTerms(t *testing.T) {
	tests := []struct {
		in   string
		want []string
	}{
		{"What does the sink function do?", []string{"sink", "function"}},
		{"What is it?", []string{"what", "is", "it"}}, // nothing but stop words: keep them
		{"检索系统是什么？", []string{"检索", "索系", "系统", "统是", "是什"}},
		{"R语言3.5版", []string{"r", "语言", "3", "5", "版"}}, // a lone character stays
		{"年", []string{"年"}},
		{"Vectors vectors VECTOR", []string{"vector"}},
		{"What does <<- do?", []string{"<<-"}},
		{"Which shell runs #!/bin/sh scripts?", []string{"shell", "run", "bin", "sh", "script"}}, // a glued symbol is not looked up
		{"3M FY2018 10-K capex in Q2", []string{"3m", "fy2018", "fy", "2018", "10", "k", "capex", "q2"}},
		{"Pfizer revenues in Q22023", []string{"pfizer", "revenue", "q22023", "2023"}}, // Q2 2023, not the number 22023
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			require.Equal(t, tt.want, QueryTerms(tt.in))
		})
	}
}

// The stop list is checked against terms as Terms emits them, so a listed
// word must survive its own analysis unchanged or be listed in its analysed
// form too.
func TestStopwordsAnalysed(t *testing.T) {
	for w := range stopwords {
		ts := Terms(w)
		for _, x := range ts {
			if len([]rune(x)) == 1 && IsCJK([]rune(x)[0]) && len(ts) > 1 {
				continue // a multi-character Chinese stop word is matched as its bigram
			}
			assert.True(t, IsStopword(x), "%q analyses to %q, which is not a stop word", w, x)
		}
	}
	assert.Empty(t, ContentTerms(Terms("What is it that you would explain?")))
	assert.Equal(t, []string{"capital", "expenditure"}, ContentTerms(Terms("What were the capital expenditures?")))
	assert.Equal(t, []string{"plot", "show", "sure", "empty"}, ContentTerms(Terms("Why doesn’t the plot show? Sure it isn't empty, I haven't")))
}

// TestSentenceStart: a capital after a sentence's end (opening quotes,
// brackets and Markdown emphasis aside) or after nothing is grammar; inside
// a sentence it may be a name.
func TestSentenceStart(t *testing.T) {
	for before, want := range map[string]bool{
		"":                        true,
		"  ":                      true,
		"It ends. ":               true,
		"Does it? (":              true,
		"Note: ":                  true,
		"first; ":                 true,
		"[1] ":                    true,
		"Done. “":                 true,
		"**":                      true,
		"He said “":               false,
		"See **":                  false,
		"句子结束。":                   true,
		"install ":                false,
		"the value of ":           false,
		"e.g, ":                   false,
		"version 2 of the book, ": false,
	} {
		if got := SentenceStart(before); got != want {
			t.Errorf("SentenceStart(%q) = %v, want %v", before, got, want)
		}
	}
}

// TestStemBytes checks the in-place stemmer against the rules written on
// strings (the form Terms used before it stemmed in its buffer).
func TestStemBytes(t *testing.T) {
	ref := func(w string) string {
		switch {
		case len(w) < 4 || !isASCII(w):
			return w
		case strings.HasSuffix(w, "ies") && len(w) > 4:
			return w[:len(w)-3] + "y"
		case strings.HasSuffix(w, "sses"):
			return w[:len(w)-2]
		case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
			return w[:len(w)-1]
		}
		return w
	}
	for _, w := range []string{"", "s", "is", "ies", "ties", "studies", "classes", "sses", "class", "glass", "status", "analysis",
		"vectors", "bus", "gas", "does", "2018s", "fy2018", "naïves", "cafés", "series", "yes", "uses", "axes"} {
		require.Equal(t, ref(w), string(stemWord([]byte(w), true, true)), w)
	}
}

// Sibilant plurals meet their singulars; an "e" a singular can end in
// stays, and so does every form the v1 rule already handled.
func TestStemBytesSibilants(t *testing.T) {
	for in, want := range map[string]string{
		"taxes": "tax", "boxes": "box", "indexes": "index", "fixes": "fix", "hashes": "hash", "pushes": "push",
		"matches": "match", "patches": "patch", "searches": "search", "branches": "branch", "buzzes": "buzz",
		"caches": "cache", "aches": "ache", "niches": "niche", "axes": "axe", "classes": "class", "uses": "use",
		"matrices": "matrix", "indices": "index", "vertices": "vertex", "hypotheses": "hypothesis", "parentheses": "parenthesis",
		"theses": "thesis", "analyses": "analysis", "crises": "crisis", "criteria": "criterion", "phenomena": "phenomenon",
		"prices": "price", "devices": "device", "cheeses": "cheese", "noses": "nose", "doses": "dose", "houses": "house",
		"bases": "base", "antenna": "antenna", "hysteria": "hysteria", "hypothesis": "hypothesis", "matrix": "matrix",
		"tax": "tax", "box": "box", "cache": "cache", "studies": "study", "vectors": "vector", "naïxes": "naix", "søxes": "søxes",
	} {
		require.Equal(t, want, string(stemWord([]byte(in), true, false)), in)
	}
	// Query and text meet: a plural question word finds the singular.
	require.Equal(t, Terms("income tax box"), Terms("Income taxes boxes"))
	require.Equal(t, Terms("matrix index hypothesis"), Terms("Matrices indices hypotheses"))
}

// Asker words are matched against analysed terms, and stay searchable:
// they are not stop words.
func TestAskerWords(t *testing.T) {
	for _, w := range []string{"I", "me", "My", "myself"} {
		ts := Terms(w)
		require.Len(t, ts, 1, w)
		assert.True(t, IsAskerWord(ts[0]), "%q analyses to %q, which is not an asker word", w, ts[0])
	}
	for _, w := range []string{"we", "us", "you", "he", "she", "they", "mind", "mines"} {
		assert.False(t, IsAskerWord(Terms(w)[0]), w)
	}
	assert.Equal(t, []string{"call", "me", "ishmael"}, ContentTerms(Terms("Call me Ishmael")))
}

func TestFold(t *testing.T) {
	for in, want := range map[string]string{
		"分子式为CHCONH。":                "分子式为chconh",
		"The  Vector-object (p. 12)": "thevectorobjectp12",
		"line\nbreak, ‘quoted’":      "linebreakquoted",
		"":                           "",
	} {
		require.Equal(t, want, Fold(in), in)
	}
}

// TestPeriodYear: a quarter or half glued to its year is that year; other
// words of letters and digits are not periods.
func TestPeriodYear(t *testing.T) {
	for in, want := range map[string]string{
		"Q22023": "2023", "q42019": "2019", "H12024": "2024", "q12099": "2099",
		"Q52023": "", "Q22": "", "Q2023": "", "FY2018": "", "x22023": "", "Q21999x": "", "Q23023": "", "q2": "",
	} {
		require.Equal(t, want, PeriodYear(in), in)
	}
}
