package qa

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
)

// runs is how often each check repeats: Go starts every range over a map at
// a random entry, so a sum taken in map order comes out different in its
// last bits in about every other run.
const runs = 200

// keyWeights gives the content terms of s weights whose float sum depends
// on the order it is taken in, as IDF weights do.
func keyWeights(s string) map[string]float64 {
	w := map[string]float64{}
	for i, t := range analysis.ContentTerms(analysis.Terms(s)) {
		w[t] = 0.1 + 0.37*float64(i) + 0.013*float64(i*i)
	}
	return w
}

// TestExtractiveSameAnswerEveryRun: a sentence that adds none of the key
// terms never extends the quoted passage, in every run. When coverage was
// summed in map order, the same term set scored a few ULPs higher or lower
// from one sum to the next, so such a sentence joined the answer in some
// runs and not in others (books-dev rintro-08, debian-10, lshort-02/03/07).
func TestExtractiveSameAnswerEveryRun(t *testing.T) {
	first := "The main reason for mentioning this is that R and S have different defaults for unordered factors, S using Helmert contrasts."
	second := "This is the default in R for unordered factors."
	chunk := ContextChunk{Chunk: citebook.Chunk{ID: "c1", Text: first + " " + second}, Rank: 1, Primary: true}
	weights := keyWeights(first)
	e := NewExtractive(analysis.Terms)
	for i := 0; i < runs; i++ {
		d, err := e.AnswerWeighted(context.Background(), "Why mention the default contrasts?", []ContextChunk{chunk}, Evidence{Weights: weights})
		require.NoError(t, err)
		require.Len(t, d.Statements, 1, "run %d: %+v", i, d.Statements)
		require.Equal(t, first, d.Statements[0].Citations[0].Quote)
	}
}

// TestStillAnswersSameVerdictEveryRun: whether the kept quotes still answer
// is decided the same way in every run, even with the bar exactly at a
// share that only some summation orders reach.
func TestStillAnswersSameVerdictEveryRun(t *testing.T) {
	question := "Which package lets LaTeX check the syntax quickly without producing DVI or PDF output files for documents?"
	weights := keyWeights(question)
	quote := "LaTeX can check the syntax of documents quickly."
	have := analysis.TermSet(analysis.Terms(quote))

	// The shares a sum in map order comes out at.
	lo, hi := 2.0, -1.0
	for i := 0; i < 1000; i++ {
		total, got := 0.0, 0.0
		for k, w := range weights {
			total += w
			if have[k] {
				got += w
			}
		}
		lo, hi = min(lo, got/total), max(hi, got/total)
	}
	require.Less(t, lo, hi, "the weights must make the sum depend on its order, or this test checks nothing")

	p := &Pipeline{opts: Options{AnswerCoverage: 0.2}, deps: Deps{Terms: analysis.Terms}}
	verdicts := map[bool]int{}
	for i := 0; i < runs; i++ {
		res := &citation.Result{Total: 1, Kept: []citation.KeptStatement{{Text: quote,
			Quotes: []citebook.Citation{{ChunkID: "c1", Quote: quote}}}}}
		tr := &Trace{Answerability: Answerability{Answerable: true, Code: CodeAnswered, Bar: hi / answerShare, weights: weights}}
		p.stillAnswers(res, tr, nil)
		verdicts[res.Refused]++
	}
	require.Len(t, verdicts, 1, "refused/answered counts over %d runs: %v", runs, verdicts)
}
