package eval

import (
	"math"
	"strings"
	"testing"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/qa"
)

func ids(xs ...string) []Ranked {
	out := make([]Ranked, len(xs))
	for i, x := range xs {
		out[i] = Ranked{ChunkID: x, Score: float64(len(xs) - i)}
	}
	return out
}

func set(xs ...string) map[string]bool {
	m := map[string]bool{}
	for _, x := range xs {
		m[x] = true
	}
	return m
}

// Hand-computed cases: ranking a b c d e, relevant {b, d, z}.
func TestRankingMetrics(t *testing.T) {
	rs := ids("a", "b", "c", "d", "e")
	rel := set("b", "d", "z")
	for _, tc := range []struct {
		name string
		got  float64
		want float64
	}{
		{"recall@1", RecallAtK(rs, rel, 1), 0},
		{"recall@2", RecallAtK(rs, rel, 2), 1.0 / 3},
		{"recall@5", RecallAtK(rs, rel, 5), 2.0 / 3},
		{"recall@10 beyond list", RecallAtK(rs, rel, 10), 2.0 / 3},
		{"mrr@1", MRRAtK(rs, rel, 1), 0},
		{"mrr@5", MRRAtK(rs, rel, 5), 0.5},
		{"hit@1", HitAtK(rs, rel, 1), 0},
		{"hit@2", HitAtK(rs, rel, 2), 1},
		// DCG = 1/log2(3) + 1/log2(5); IDCG (3 relevant) = 1 + 1/log2(3) + 1/log2(4)
		{"ndcg@5", NDCGAtK(rs, rel, 5), (1/math.Log2(3) + 1/math.Log2(5)) / (1 + 1/math.Log2(3) + 0.5)},
		// K=2 caps the ideal at two relevant: IDCG = 1 + 1/log2(3)
		{"ndcg@2", NDCGAtK(rs, rel, 2), (1 / math.Log2(3)) / (1 + 1/math.Log2(3))},
		{"recall no relevant", RecallAtK(rs, set(), 5), 0},
		{"ndcg perfect", NDCGAtK(ids("b", "d", "z"), rel, 10), 1},
	} {
		assert.InDelta(t, tc.want, tc.got, 1e-12, tc.name)
	}
}

func TestRankBreaksTiesByChunkID(t *testing.T) {
	got := Rank([]Ranked{{ChunkID: "c", Score: 1}, {ChunkID: "a", Score: 1}, {ChunkID: "b", Score: 2}})
	assert.Equal(t, []string{"b", "a", "c"}, []string{got[0].ChunkID, got[1].ChunkID, got[2].ChunkID})
}

func TestPageRecall(t *testing.T) {
	rs := []Ranked{
		{ChunkID: "x", BookID: "b1", PageStart: 3, PageEnd: 4},
		{ChunkID: "y", BookID: "b2", PageStart: 10},
		{ChunkID: "z", BookID: "b1", PageStart: 9, PageEnd: 9},
	}
	gold := []Page{{"b1", 4}, {"b2", 10}, {"b1", 9}, {"b1", 50}}
	assert.InDelta(t, 0.25, PageRecallAtK(rs, gold, 1), 1e-12)
	assert.InDelta(t, 0.5, PageRecallAtK(rs, gold, 2), 1e-12)
	assert.InDelta(t, 0.75, PageRecallAtK(rs, gold, 3), 1e-12)
	assert.Equal(t, 0.0, PageRecallAtK(rs, nil, 3))
	// the same page number in another book does not count
	assert.Equal(t, 0.0, PageRecallAtK(rs, []Page{{"b2", 4}}, 3))
}

func TestPercentileNearestRank(t *testing.T) {
	xs := []float64{15, 20, 35, 40, 50}
	assert.Equal(t, 35.0, Percentile(xs, 50))
	assert.Equal(t, 50.0, Percentile(xs, 95))
	assert.Equal(t, 15.0, Percentile(xs, 0))
	assert.Equal(t, 0.0, Percentile(nil, 50))
}

func TestDuplicationRate(t *testing.T) {
	a := []string{"1", "2", "3", "4", "5", "6", "7", "8", "9", "10"}
	b := []string{"3", "4", "5", "6", "7", "8", "9", "10", "x", "y"}
	// b's first 8 tokens repeat a shingle of a: 8 of 20 tokens.
	assert.InDelta(t, 8.0/20, DuplicationRate([][]string{a, b}), 1e-12)
	assert.Equal(t, 0.0, DuplicationRate([][]string{a, {"p", "q"}}))
	assert.Equal(t, 0.0, DuplicationRate(nil))
}

// TestSummarizeCountsGuards: the summary adds up refusals by reason, the
// model guards and the answerer's rejected citations by reason, so a run
// with a real model shows which guard caught what.
func TestSummarizeCountsGuards(t *testing.T) {
	rs := []QuestionResult{
		{ID: "a", Answerable: true, Guards: qa.Guards{Attempts: 2, Retried: true, Fallback: "extractive"},
			Rejected: []qa.Rejected{{ChunkID: "c1", Reason: citation.QuoteNotFound}, {ChunkID: "c2", Reason: citation.Unsupported}}},
		{ID: "b", Refused: true, Answerability: qa.Answerability{Code: qa.CodeLowCoverage},
			Guards: qa.Guards{Attempts: 1, Fallback: "refusal"}, Rejected: []qa.Rejected{{ChunkID: "c3", Reason: citation.QuoteNotFound}}},
		{ID: "c", Error: "boom", Rejected: []qa.Rejected{{ChunkID: "c4", Reason: citation.NotInContext}}},
		// the model's own answer, one snapped quote shown, one snapped
		// quote whose statement was then dropped
		{ID: "d", Answerable: true, Guards: qa.Guards{Attempts: 1},
			Snapped: []citation.Snapped{{ChunkID: "c5", Kept: true}, {ChunkID: "c6"}}},
		// snapped and kept, but the fallback's answer was shown
		{ID: "e", Answerable: true, Guards: qa.Guards{Attempts: 1, Fallback: "extractive"},
			Snapped: []citation.Snapped{{ChunkID: "c7", Kept: true}}},
	}
	s := Summarize(rs, Setup{})
	require.Equal(t, map[string]int{"quote_not_found": 2, "quote_does_not_support": 1}, s.RejectedCitations)
	require.Equal(t, map[string]int{"low_coverage": 1}, s.RefusalReasons)
	require.Equal(t, GuardCounts{ModelCalls: 5, ConstrainedRetries: 1, FallbackExtractive: 2, FallbackRefusal: 1,
		ModelAnswers: 1, QuotesSnapped: 3, SnappedKept: 2, SnappedShown: 1}, s.Guards)
	require.Equal(t, 1, s.Errors)
	require.Contains(t, Markdown(&Results{Summary: s}), "| Quotes snapped to the book's text (kept / shown) / left rejected | 3 (2 / 1) / 2 |")
	require.Contains(t, Markdown(&Results{Summary: s}), "| Citations rejected by reason | quote_not_found 2, quote_does_not_support 1 |")
}

// TestSummarizeGoldAnswerHeld: an answered question's answer holds its gold
// answer whatever the spacing, punctuation and case; refused questions and
// questions without a gold answer are not counted.
func TestSummarizeGoldAnswerHeld(t *testing.T) {
	rs := []QuestionResult{
		{ID: "a", Answerable: true, GoldAnswer: "CH3CONH2", Answer: "乙酰胺是由乙酸衍生出的酰胺，分子式为 ch3conh2。 [1]"},
		{ID: "b", Answerable: true, GoldAnswer: "放线菌酮是一种具苦味的物质", Answer: "放线菌酮 放线菌酮是一种具苦味的物质，…"},
		{ID: "c", Answerable: true, GoldAnswer: "column major order", Answer: "The first value is the number of rows."},
		{ID: "d", Answerable: true, Refused: true, GoldAnswer: "seven miles", Answer: "I cannot confirm this from the book."},
		{ID: "e", Answerable: true, Answer: "No gold answer to hold."},
		{ID: "f", Answerable: true, GoldAnswer: "…", Answer: "Punctuation alone is no gold answer."},
	}
	s := Summarize(rs, Setup{})
	require.Equal(t, 3, s.GoldAnswered)
	require.InDelta(t, 2.0/3, s.GoldAnswerHeld, 1e-9)
	require.Contains(t, Markdown(&Results{Summary: s}), "| Answers holding the gold answer | 0.667 of 3 |")
	require.Contains(t, Markdown(&Results{Summary: Summarize(nil, Setup{})}), "| Answers holding the gold answer | n/a |")
}

// TestQuoteAt: a citation shown is fabricated unless every part of its
// quote is the chunk's text between its offsets, in order.
func TestQuoteAt(t *testing.T) {
	text := "Alpha beta gamma. Delta epsilon zeta. Eta theta."
	end := strings.Index(text, " Eta")
	for _, tt := range []struct {
		quote      string
		start, end int
		want       bool
	}{
		{"Alpha beta gamma.", 0, len("Alpha beta gamma."), true},
		{"Alpha beta … epsilon zeta.", 0, end, true},
		{"Alpha beta … Delta … zeta.", 0, end, true},
		{"Alpha beta … omega zeta.", 0, end, false},
		{"Alpha beta … Eta theta.", 0, end, false},          // a part beyond the end offset
		{"epsilon zeta … Alpha beta", 0, end, false},        // out of order
		{"Alpha beta … epsilon zeta.", 1, end, false},       // wrong start
		{"Alpha beta … epsilon zeta.", 0, len(text), false}, // wrong end
	} {
		c := citebook.Citation{Quote: tt.quote, CharStart: tt.start, CharEnd: tt.end}
		require.Equal(t, tt.want, quoteAt(text, c), tt.quote)
	}
}

// TestOnGoldPage: a quote printed across a page break points the reader at
// every page it runs over, so it is on the gold page when any of them is.
func TestOnGoldPage(t *testing.T) {
	gold := map[Page]bool{{BookID: "debian", Page: 121}: true}
	for _, tt := range []struct {
		name string
		c    citebook.Citation
		want bool
	}{
		{"on the gold page", citebook.Citation{BookID: "debian", Page: 121}, true},
		{"another page", citebook.Citation{BookID: "debian", Page: 120}, false},
		{"across the break onto the gold page", citebook.Citation{BookID: "debian", Page: 120, Pages: []int{120, 121}}, true},
		{"across another break", citebook.Citation{BookID: "debian", Page: 119, Pages: []int{119, 120}}, false},
		{"the gold page of another book", citebook.Citation{BookID: "r-intro", Page: 121}, false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, onGoldPage(gold, tt.c))
		})
	}
}
