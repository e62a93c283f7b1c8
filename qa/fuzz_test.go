package qa

import (
	"context"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
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

// FuzzExtractiveQuotes feeds chunk text, as tables or prose, to the
// extractive answerer. Invariant: every quote it returns is its chunk's own
// text (verification could otherwise never pass it), and every unit the
// answerability windows read is too.
func FuzzExtractiveQuotes(f *testing.F) {
	for _, s := range []string{
		"(Millions) 2018 2017 2016\nCash Flows from Investing Activities\nPurchases of property, plant and equipment (PP&E) (1,577) (1,373) (1,420)\nProceeds 262 49 58\nTotal 1 2 3\nOther — net 9 (6) (4)",
		"Year Ended June 30, 2016 2015 2014\nCost of revenue:\nProduct 17,880 21,410 16,681\nTotal cost of revenue 32,780 33,038 27,078",
		"R is an integrated suite of software facilities. It has 3 parts.", "\n\n\n", "2018 2017\n2018 2017\n1 2\n3 4\n5 6\n7 8",
	} {
		f.Add(s, "What was the capital expenditure in 2018 in the cash flow statement?")
	}
	e := NewExtractive(analysis.Terms)
	th := newThesaurus(DefaultSynonyms)
	f.Fuzz(func(t *testing.T, text, question string) {
		c := ContextChunk{Chunk: citebook.Chunk{ID: "c", Text: text, HeadingPath: []string{"Statement of Cash Flows"}}, Rank: 1}
		w := map[string]float64{}
		for _, k := range questionTerms(question, analysis.Terms) {
			w[k] = 1
		}
		d, err := e.AnswerWeighted(context.Background(), question, []ContextChunk{c}, Evidence{Weights: w, Aliases: th.aliases(question)})
		if err != nil {
			t.Fatal(err)
		}
		for _, s := range d.Statements {
			for _, cl := range s.Citations {
				if !strings.Contains(text, cl.Quote) || cl.Quote == "" {
					t.Fatalf("quote %q is not the chunk's text %q", cl.Quote, text)
				}
			}
		}
		for _, win := range windows([]ContextChunk{c}, newUnitCache(analysis.Terms, nil), 3) {
			for _, part := range strings.Split(win.text, " ") {
				if !strings.Contains(text, part) {
					t.Fatalf("window word %q not in %q", part, text)
				}
			}
		}
	})
}

// FuzzWhatIs: a question, which is the user's, becomes a regular
// expression when it asks what something is; reading it and matching any
// text against it never panics, and the subject it reads is bounded.
func FuzzWhatIs(f *testing.F) {
	for _, s := range []string{"What is a factor?", "Who was Queequeg?", "什么是导言区？", "What is a (?i)[?", "What is \\x00\\xff?", "宏包是什么？", "Define a.*b."} {
		f.Add(s, "A factor is a vector object. 这些扩展称为宏包。")
	}
	f.Fuzz(func(t *testing.T, question, text string) {
		d := whatIsAsked(question)
		if d == nil {
			return
		}
		if len(d.subject) > 4*maxSubject {
			t.Fatalf("subject of %d bytes from %q", len(d.subject), question)
		}
		_ = d.statedIn(text)
		_ = d.level(text)
	})
}
