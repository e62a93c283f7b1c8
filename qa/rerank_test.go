package qa_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"sort"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
	"github.com/stretchr/testify/require"
)

// TestPipelineUsesHTTPReranker checks a configured rerank endpoint orders
// the context: a scripted server scores passages by length.
func TestPipelineUsesHTTPReranker(t *testing.T) {
	lib := shared(t)
	var docs []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		var req struct {
			Documents []string `json:"documents"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		docs = req.Documents
		// Score by length: the longest passage must lead the context.
		type result struct {
			Index int     `json:"index"`
			Score float64 `json:"relevance_score"`
		}
		var out []result
		for i, d := range req.Documents {
			out = append(out, result{i, float64(len(d))})
		}
		require.NoError(t, json.NewEncoder(w).Encode(map[string]any{"results": out}))
	}))
	defer srv.Close()
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{},
		func(d *qa.Deps) { d.Reranker = qa.NewHTTPReranker(srv.URL, "", "", srv.Client()) })
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "How do I change the length of an object?"}, nil)
	require.NoError(t, err)
	require.Greater(t, len(docs), 1)
	longest := docs[0]
	for _, d := range docs {
		if len(d) > len(longest) {
			longest = d
		}
	}
	first, err := lib.Vectors.Get(context.Background(), a.Trace.Context[:1])
	require.NoError(t, err)
	require.Contains(t, longest, first[0].Text)
	var reranked int
	for _, h := range a.Trace.Retrieved {
		if h.Rerank > 0 {
			reranked++
		}
	}
	require.Equal(t, len(docs), reranked)
}

// TestBuiltinRerankerPutsEvidenceFirst: without an endpoint or a model
// the context's passages are ordered by their best window (evidenceOrder).
// On Johnson & Johnson's 8-K fusion ranks first a passage that names the
// question's terms apart (FinanceBench dev questions 01488 and 01490); the
// passage on page 4 that states the answer comes first in the context and
// is the one quoted.
func TestBuiltinRerankerPutsEvidenceFirst(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, q := range []string{
		"Which business segment of JnJ will be treated as a discontinued operation from August 30, 2023 onward?",
		"What is the amount of the gain accruing to JnJ as a result of the separation of its Consumer Health business segment, as of August 30, 2023?",
	} {
		a, err := p.Ask(context.Background(), analyst, qa.Request{Question: q, K: 5}, nil)
		require.NoError(t, err)
		require.False(t, a.Refused, a.Trace.Answerability.Reason)
		require.NotEmpty(t, a.Citations, q)
		first := ""
		for _, h := range a.Trace.Retrieved {
			if h.RerankRank == 1 {
				first = h.ChunkID
			}
		}
		require.Equal(t, first, a.Citations[0].ChunkID, "%s: the passage ranked first is the one quoted", q)
		require.Equal(t, 4, a.Citations[0].Page, q)
		// Search orders its hits the same way: the first is the one quoted.
		res, err := p.Search(context.Background(), analyst, qa.Request{Question: q, K: 5})
		require.NoError(t, err)
		require.NotEmpty(t, res[0].Hits, q)
		require.Equal(t, first, res[0].Hits[0].Chunk.ID, "%s: search's first hit is the passage quoted", q)
	}
}

// TestNoRerankerKeepsRetrievalOrder: the builtin reranker only reorders:
// the fused best passage stays first when it answers best, and the trace's
// Kept marks exactly the candidates Search returns — the best k kept, in
// the builtin reranker's evidence order. (Until 2026-12-03 it asked "How do
// I change the length of an object?"; once "change" is searched as
// "changing" too, a footnote chunk joins the five kept that Search's
// order, read from bare chunks without the neighbours Ask reads, puts
// first: see the README's note on word forms.)
func TestNoRerankerKeepsRetrievalOrder(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	req := qa.Request{Question: "How do I remove objects from the workspace?", K: 5}
	a, err := p.Ask(context.Background(), alice, req, nil)
	require.NoError(t, err)
	require.NotEmpty(t, a.Trace.Context)
	var best *qa.TraceHit
	kept := map[string]bool{}
	for i, h := range a.Trace.Retrieved {
		if h.Kept {
			kept[h.ChunkID] = true
			if best == nil || h.Fused > best.Fused {
				best = &a.Trace.Retrieved[i]
			}
		}
		if h.RerankRank > 0 {
			require.Zero(t, h.Rerank, "no reranker scored %s", h.ChunkID)
		}
	}
	require.NotNil(t, best)
	require.Equal(t, 1, best.RerankRank)
	require.Contains(t, a.Trace.Context, best.ChunkID)
	require.Less(t, len(kept), len(a.Trace.Retrieved), "the threshold dropped some candidates")

	// Search returns the best kept candidates.
	res, err := p.Search(context.Background(), alice, req)
	require.NoError(t, err)
	require.Len(t, res, 1)
	var keptHits []qa.TraceHit
	for _, h := range a.Trace.Retrieved {
		if h.Kept {
			keptHits = append(keptHits, h)
		}
	}
	sort.SliceStable(keptHits, func(i, j int) bool { return keptHits[i].Fused > keptHits[j].Fused })
	var want, got []string
	for _, h := range keptHits[:min(len(keptHits), req.K)] {
		want = append(want, h.ChunkID)
	}
	for _, h := range res[0].Hits {
		got = append(got, h.Chunk.ID)
	}
	require.ElementsMatch(t, want, got)
	require.Equal(t, best.ChunkID, got[0], "the fused best answers best here, and comes first")
}

// TestSearchLeadsWithTheAnswersPassage: Search's builtin order weighs each
// hit's fused score against the first's as the answer's context does
// (ContextChunk.Lead), so a hit retrieval put far below the first does not
// lead Search on a few more of the question's words while the answer's
// evidence order keeps the first (before 2026-12-05 these questions' search
// led with another chunk than the one the answer's context put first).
func TestSearchLeadsWithTheAnswersPassage(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, c := range []struct {
		who citebook.Principal
		q   string
	}{
		{alice, "How should I write unit tests for the functions in my R package so they run automatically, for example with testthat?"},
		{bob, "Is the flattened device tree a better way to describe hardware than ACPI? Which should I use for a new board?"},
	} {
		req := qa.Request{Question: c.q, K: 5}
		a, err := p.Ask(context.Background(), c.who, req, nil)
		require.NoError(t, err)
		first := ""
		for _, h := range a.Trace.Retrieved {
			if h.RerankRank == 1 {
				first = h.ChunkID
			}
		}
		require.NotEmpty(t, first, c.q)
		res, err := p.Search(context.Background(), c.who, req)
		require.NoError(t, err)
		require.NotEmpty(t, res[0].Hits, c.q)
		require.Equal(t, first, res[0].Hits[0].Chunk.ID, "%s: search leads with the answer's first passage", c.q)
	}
}
