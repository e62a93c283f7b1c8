package qa_test

import (
	"context"
	"slices"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// TestIndexedTermsRankAsSegmenting: reading candidates' terms from the
// lexical index (Deps.ChunkTerms) retrieves, scores, keeps and drops
// exactly what segmenting their texts on each search does, for English,
// FinanceBench and Chinese questions, including ones that name statements
// and synonyms (the heading and phrase features) and term pairs.
func TestIndexedTermsRankAsSegmenting(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	require.NotNil(t, lib.Deps().ChunkTerms, "the library's lexical index keeps chunks' terms")
	read := &countingTerms{src: lib.Deps().ChunkTerms}
	indexed := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.ChunkTerms = read })
	segmenting := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.ChunkTerms = nil })
	for _, tc := range []struct {
		p citebook.Principal
		q string
	}{
		{alice, "How do I change the length of an object?"},
		{alice, "What is a data frame and how is it created?"},
		{alice, "How are missing values represented in R?"},
		{alice, "Which function fits a linear model by least squares?"},
		{bob, "What is a device tree blob and how does the kernel read it?"},
		{bob, "what time is dinner today?"},
		{analyst, "What was the total revenue in the second quarter?"},
		{analyst, "Did cash flows from operating activities improve?"},
		{analyst, "What were the capital expenditures reported in the cash flow statement?"},
		{lin, "如何插入数学公式?"},
		{lin, "LaTeX 中如何设置页边距？"},
	} {
		a, err := indexed.Ask(ctx, tc.p, qa.Request{Question: tc.q, K: 10}, nil)
		require.NoError(t, err, tc.q)
		b, err := segmenting.Ask(ctx, tc.p, qa.Request{Question: tc.q, K: 10}, nil)
		require.NoError(t, err, tc.q)
		require.NotEmpty(t, b.Trace.Retrieved, tc.q)
		require.Equal(t, b.Trace.Retrieved, a.Trace.Retrieved, tc.q)
		require.Equal(t, b.Trace.Dropped, a.Trace.Dropped, tc.q)
		require.Equal(t, b.Answer, a.Answer, tc.q)
		require.Equal(t, b.Citations, a.Citations, tc.q)
	}
	// Every candidate is read from the index (the searches return the
	// chunks as indexed), none segmented.
	require.Positive(t, read.held.Load())
	require.Zero(t, read.missed.Load())
}

func (c *countingTerms) HoldsAll(cs []*citebook.Chunk, refs []citebook.RowRef, want []string) ([]uint64, []bool) {
	return c.src.HoldsAll(cs, refs, want)
}

func (c *countingTerms) ChunkSentences(ch *citebook.Chunk, ref citebook.RowRef, want []string, starts []uint16, fn func(int, int, func() string)) bool {
	return c.count(c.src.ChunkSentences(ch, ref, want, starts, fn))
}

type countingTerms struct {
	src          qa.ChunkTerms
	held, missed atomic.Int64
}

func (c *countingTerms) ChunkTerms(ch *citebook.Chunk, ref citebook.RowRef, want []string, fn func(int, bool, func() string)) bool {
	return c.count(c.src.ChunkTerms(ch, ref, want, fn))
}

// count tallies whether the index held the chunk as asked.
func (c *countingTerms) count(ok bool) bool {
	if ok {
		c.held.Add(1)
	} else {
		c.missed.Add(1)
	}
	return ok
}

// TestIndexedSentencesCoverAsSegmenting: the key-term coverage feature
// gives exactly the same value for every chunk of the real books when it
// reads the chunk's terms and sentence boundaries from the lexical index
// (ChunkSentences) as when it splits and segments the text, for key terms
// taken from the chunk itself (so windows hold several) and words that
// only share a prefix with them (sameWord), and the index holds sentence
// boundaries for every chunk.
func TestIndexedSentencesCoverAsSegmenting(t *testing.T) {
	lib := shared(t)
	src := lib.Deps().ChunkTerms
	require.NotNil(t, src)
	read := &countingTerms{src: src}
	compared, nonzero := 0, 0
	for _, book := range []string{bookR, bookDTC, bookJNJ, bookZH} {
		for _, c := range lib.chunks(t, book) {
			ts := analysis.Terms(c.Text)
			for _, stride := range []int{3, 11} {
				var terms []string
				var weights []float64
				for i := 1; i < len(ts) && len(terms) < 6; i += stride {
					t := ts[i]
					if len(t) >= 6 && i%2 == 0 {
						t = t[:5] + "x" // a prefix match only
					}
					if !slices.Contains(terms, t) {
						terms = append(terms, t)
						weights = append(weights, 0.5+float64(len(terms))/7)
					}
				}
				if len(terms) == 0 {
					continue
				}
				before := read.held.Load()
				got := qa.WindowCoverage(terms, weights, read, &c)
				require.Equal(t, before+1, read.held.Load(), "chunk %s is read from the index", c.ID)
				want := qa.WindowCoverage(terms, weights, nil, &c)
				require.Equal(t, want, got, "chunk %s, terms %q", c.ID, terms)
				compared++
				if want > 0 {
					nonzero++
				}
			}
		}
	}
	// One query's salient scores many candidates, reusing its scratch:
	// each chunk's value is the one it has alone, read from the index or
	// segmented.
	for _, book := range []string{bookR, bookZH} {
		cs := lib.chunks(t, book)
		ts := analysis.Terms(cs[len(cs)/2].Text)
		terms := slices.Compact(slices.Clone(ts[:min(len(ts), 5)]))
		weights := []float64{1, 0.7, 1.3, 0.9, 1.1}[:len(terms)]
		for _, src := range []qa.ChunkTerms{read, nil} {
			got := qa.WindowCoverages(terms, weights, src, cs)
			for i := range cs {
				require.Equal(t, qa.WindowCoverage(terms, weights, src, &cs[i]), got[i], "chunk %s", cs[i].ID)
			}
		}
	}
	require.Zero(t, read.missed.Load())
	t.Logf("%d comparisons, %d with coverage above 0", compared, nonzero)
	require.Greater(t, nonzero, compared/2)
}
