package qa_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"regexp"
	"slices"
	"sort"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// chatServer is an OpenAI-compatible chat endpoint whose reply is fn of the
// system prompt and the user's message; it records every user message.
func chatServer(t *testing.T, fn func(system, user string) string) (qa.ModelConfig, func() []string) {
	t.Helper()
	var mu sync.Mutex
	var users []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		msgs, err := chatMessages(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var system, user string
		for _, m := range msgs {
			if m.role == "system" {
				system = m.text
			} else {
				user = m.text
			}
		}
		mu.Lock()
		users = append(users, user)
		mu.Unlock()
		content := fn(system, user)
		if content == "HTTP 500" {
			http.Error(w, "model crashed", http.StatusInternalServerError)
			return
		}
		writeChat(w, system+user, content)
	}))
	t.Cleanup(srv.Close)
	cfg := qa.ModelConfig{Provider: "openai", URL: srv.URL + "/v1", Model: "scripted", Client: srv.Client()}
	return cfg, func() []string {
		mu.Lock()
		defer mu.Unlock()
		return append([]string(nil), users...)
	}
}

// shownPassage matches a passage of the rerank prompt: "[n] text".
var shownPassage = regexp.MustCompile(`(?m)^\[(\d+)\] (.*)$`)

// reranked lists the trace's reranked hits in their reranked order.
func reranked(tr qa.Trace) []qa.TraceHit {
	var out []qa.TraceHit
	for _, h := range tr.Retrieved {
		if h.RerankRank > 0 {
			out = append(out, h)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].RerankRank < out[j].RerankRank })
	return out
}

// requireFusedOrder checks hits are in fused order (one query: by score).
func requireFusedOrder(t *testing.T, hits []qa.TraceHit) {
	t.Helper()
	for i := 1; i < len(hits); i++ {
		require.GreaterOrEqual(t, hits[i-1].Fused, hits[i].Fused, "place %d is out of the fused order", i+1)
	}
}

const rerankQuestion = "How do I change the length of an object?"

// TestLLMRerankMovesPickFirst: a model that picks the last passage it was
// shown puts that passage first in the context; every other passage keeps
// its fused order below it, and none is dropped.
func TestLLMRerankMovesPickFirst(t *testing.T) {
	lib := shared(t)
	var mu sync.Mutex
	var shown [][]string
	cfg, _ := chatServer(t, func(_, user string) string {
		m := shownPassage.FindAllStringSubmatch(user, -1)
		mu.Lock()
		defer mu.Unlock()
		var texts []string
		for _, x := range m {
			texts = append(texts, x[2])
		}
		shown = append(shown, texts)
		return fmt.Sprintf(`{"ranking":[%d]}`, len(m))
	})
	rr, err := qa.NewLLMReranker(cfg, qa.LLMRerankOptions{Passages: 4})
	require.NoError(t, err)
	plain := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Reranker = fusedOrder{} })
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Reranker = rr })
	ctx := context.Background()
	before, err := plain.Ask(ctx, alice, qa.Request{Question: rerankQuestion}, nil)
	require.NoError(t, err)
	a, err := p.Ask(ctx, alice, qa.Request{Question: rerankQuestion}, nil)
	require.NoError(t, err)
	require.Empty(t, a.Trace.RerankError)
	require.Len(t, shown, 1, "one model call per question")
	n := len(shown[0])
	require.Equal(t, 4, n, "the model sees the first Passages passages")

	fused, got := reranked(before.Trace), reranked(a.Trace)
	require.Len(t, got, len(fused), "the rerank keeps every passage")
	require.Greater(t, len(fused), n)
	requireFusedOrder(t, fused)
	// The pick (the fourth fused passage) leads, the rest follow in fused order.
	require.Equal(t, fused[n-1].ChunkID, got[0].ChunkID)
	want := append([]string{fused[n-1].ChunkID}, ids(fused[:n-1])...)
	want = append(want, ids(fused[n:])...)
	require.Equal(t, want, ids(got))
	// The context starts with the pick's passage (the pick and the
	// neighbours read with it): no other passage's chunk comes before it.
	pick := slices.Index(a.Trace.Context, got[0].ChunkID)
	require.GreaterOrEqual(t, pick, 0, "the pick is in the context")
	for _, h := range got[1:] {
		if i := slices.Index(a.Trace.Context, h.ChunkID); i >= 0 {
			require.Less(t, pick, i, "the context starts with the model's pick")
		}
	}
	// What the model read of the pick is its chunk, trimmed to the budget.
	chunk, err := lib.Vectors.Get(ctx, []string{got[0].ChunkID})
	require.NoError(t, err)
	head := []rune(strings.Join(strings.Fields(chunk[0].Text), " "))
	require.Contains(t, shown[0][n-1], string(head[:min(len(head), 60)]))
	require.LessOrEqual(t, len([]rune(shown[0][n-1])), qa.DefaultLLMRerankOptions().Chars+len(" …")+200)
}

func ids(hs []qa.TraceHit) []string {
	out := make([]string, len(hs))
	for i, h := range hs {
		out[i] = h.ChunkID
	}
	return out
}

// fusedOrder is a reranker that keeps the fused order, the baseline the
// model's rerank is compared with.
type fusedOrder struct{}

func (fusedOrder) Rerank(_ context.Context, _ string, docs []string) ([]float64, error) {
	out := make([]float64, len(docs))
	for i := range out {
		out[i] = float64(len(docs) - i)
	}
	return out, nil
}

// TestLLMRerankBadRepliesKeepFusedOrder: malformed, empty and out-of-range
// rankings, a failing server and a model slower than its bound all leave
// the fused order, say why in the trace, and never fail the answer.
func TestLLMRerankBadRepliesKeepFusedOrder(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	plain := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Reranker = fusedOrder{} })
	want, err := plain.Ask(ctx, alice, qa.Request{Question: rerankQuestion}, nil)
	require.NoError(t, err)
	for _, tc := range []struct{ name, reply, reason string }{
		{"prose", "The second passage answers it.", "no ranking JSON"},
		{"empty", `{"ranking":[]}`, "picked no passage"},
		{"no ranking", `{"queries":["x"]}`, "no ranking JSON"},
		{"out of range", `{"ranking":[99]}`, "ranked passage 99"},
		{"zero", `{"ranking":[0]}`, "ranked passage 0"},
		{"one bad of two", `{"ranking":[2,9]}`, "ranked passage 9"},
		{"negative", `{"ranking":[-1]}`, "ranked passage -1"},
		{"not a number", `{"ranking":["first"]}`, "no ranking JSON"},
		{"fraction", `{"ranking":[1.5]}`, "ranked passage 1.5"},
		{"server error", "HTTP 500", "failed"},
		{"empty reply", " ", "empty reply"},
		{"slow", "SLEEP", "failed"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg, _ := chatServer(t, func(_, _ string) string {
				if tc.reply == "SLEEP" {
					time.Sleep(500 * time.Millisecond)
					return `{"ranking":[3]}`
				}
				return tc.reply
			})
			cfg.Timeout = 50 * time.Millisecond
			rr, err := qa.NewLLMReranker(cfg, qa.LLMRerankOptions{Passages: 4})
			require.NoError(t, err)
			p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Reranker = rr })
			a, err := p.Ask(ctx, alice, qa.Request{Question: rerankQuestion}, nil)
			require.NoError(t, err)
			require.Contains(t, a.Trace.RerankError, tc.reason)
			require.Equal(t, ids(reranked(want.Trace)), ids(reranked(a.Trace)))
			require.Equal(t, want.Trace.Context, a.Trace.Context)
			require.Equal(t, want.Answer, a.Answer)
		})
	}
}

// TestLLMRerankDirect checks the scores of a valid reply: picks first in
// the model's order, repeats ignored, the rest in the order given.
func TestLLMRerankDirect(t *testing.T) {
	cfg, users := chatServer(t, func(_, _ string) string { return "```json\n{\"ranking\":[3,1,3]}\n```" })
	rr, err := qa.NewLLMReranker(cfg, qa.LLMRerankOptions{Passages: 4, Chars: 20})
	require.NoError(t, err)
	docs := []string{"alpha beta gamma delta epsilon zeta", "b", "c", "d", "e"}
	scores, err := rr.Rerank(context.Background(), "q?", docs)
	require.NoError(t, err)
	order := make([]int, len(docs))
	for i := range order {
		order[i] = i
	}
	sort.SliceStable(order, func(i, j int) bool { return scores[order[i]] > scores[order[j]] })
	require.Equal(t, []int{2, 0, 1, 3, 4}, order)
	require.Len(t, users(), 1)
	require.Contains(t, users()[0], "[1] alpha beta gamma …")
	require.Contains(t, users()[0], "[4] d")
	require.NotContains(t, users()[0], "[5]", "only Passages passages are shown")
}

// TestLLMRewriteSearchedBesideQuestion: the model's rewrites appear in the
// trace, lift the passage worded as they are, and a failing rewrite leaves
// the question's own search, saying why.
func TestLLMRewriteSearchedBesideQuestion(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	q := "How do I get rid of objects I no longer need?"
	plain := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	base, err := plain.Ask(ctx, alice, qa.Request{Question: q}, nil)
	require.NoError(t, err)
	require.Empty(t, base.Trace.Rewrites)

	rewrites := []string{"rm function remove objects", "  ", q, "rm function remove objects", "permanently delete workspace objects", "third one"}
	raw, _ := json.Marshal(map[string]any{"queries": rewrites})
	cfg, users := chatServer(t, func(system, _ string) string { return string(raw) })
	rw, err := qa.NewLLMRewriter(cfg)
	require.NoError(t, err)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Rewriter = rw })
	a, err := p.Ask(ctx, alice, qa.Request{Question: q}, nil)
	require.NoError(t, err)
	require.Equal(t, []string{"rm function remove objects", "permanently delete workspace objects"}, a.Trace.Rewrites,
		"blank, repeated and the question itself are dropped, at most two kept")
	require.Empty(t, a.Trace.RewriteError)
	require.Equal(t, []string{q}, users(), "the model is asked about the question as written")
	require.Equal(t, []string{q}, a.Trace.SubQueries)

	// The chunk the rewrite's words find first gains fused score.
	best := bestFused(a.Trace)
	was := bestFused(base.Trace)
	lifted := 0
	for id, s := range best {
		if s > was[id]+1e-9 {
			lifted++
		}
	}
	require.Positive(t, lifted, "the rewrites' BM25 joins the fusion")

	for _, bad := range []string{"no JSON at all", "HTTP 500", `{"answer":"x"}`} {
		cfg, _ := chatServer(t, func(_, _ string) string { return bad })
		rw, err := qa.NewLLMRewriter(cfg)
		require.NoError(t, err)
		p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Rewriter = rw })
		a, err := p.Ask(ctx, alice, qa.Request{Question: q}, nil)
		require.NoError(t, err, bad)
		require.Empty(t, a.Trace.Rewrites, bad)
		require.NotEmpty(t, a.Trace.RewriteError, bad)
		require.Equal(t, base.Trace.Context, a.Trace.Context, bad)
		require.Equal(t, base.Answer, a.Answer, bad)
	}
}

func bestFused(tr qa.Trace) map[string]float64 {
	out := map[string]float64{}
	for _, h := range tr.Retrieved {
		out[h.ChunkID] = max(out[h.ChunkID], h.Fused)
	}
	return out
}

// TestLLMRewriteCannotWidenACL: rewrites quoting a chapter denied to the
// reader and another tenant's book verbatim, and a reranker picking
// whatever it is shown, bring nothing the reader may not read into the
// trace, the context or the citations.
func TestLLMRewriteCannotWidenACL(t *testing.T) {
	lib := shared(t)
	ctx := context.Background()
	var denied []citebook.Chunk
	for _, c := range lib.chunks(t, bookR) {
		if acl.HasPrefix(c.HeadingPath, lib.denied) && len(c.Text) > 200 {
			denied = append(denied, c)
		}
	}
	require.NotEmpty(t, denied)
	other := lib.chunks(t, bookDTC)
	quote := func(c citebook.Chunk) string { return strings.Join(strings.Fields(c.Text)[:12], " ") }
	raw, _ := json.Marshal(map[string]any{"queries": []string{quote(denied[0]), quote(other[len(other)/2])}})
	cfg, _ := chatServer(t, func(system, _ string) string {
		if strings.Contains(system, "judge passages") {
			return `{"ranking":[2,1]}`
		}
		return string(raw)
	})
	rw, err := qa.NewLLMRewriter(cfg)
	require.NoError(t, err)
	rr, err := qa.NewLLMReranker(cfg, qa.LLMRerankOptions{})
	require.NoError(t, err)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Rewriter, d.Reranker = rw, rr })

	forbidden := map[string]bool{}
	for _, c := range denied {
		forbidden[c.ID] = true
	}
	for _, c := range other {
		forbidden[c.ID] = true
	}
	for _, q := range []string{"What are the modes and attributes of an object?", "How do I read data from a file?"} {
		a, err := p.Ask(ctx, mallory, qa.Request{Question: q}, nil)
		require.NoError(t, err)
		require.Len(t, a.Trace.Rewrites, 2, "the rewrites were searched")
		for _, h := range a.Trace.Retrieved {
			require.False(t, forbidden[h.ChunkID], "retrieved %s", h.ChunkID)
			require.Equal(t, bookR, h.BookID)
		}
		for _, id := range a.Trace.Context {
			require.False(t, forbidden[id], "context %s", id)
		}
		for _, c := range a.Citations {
			require.False(t, forbidden[c.ChunkID], "cited %s", c.ChunkID)
		}
		res, err := p.Search(ctx, mallory, qa.Request{Question: q})
		require.NoError(t, err)
		for _, r := range res {
			for _, h := range r.Hits {
				require.False(t, forbidden[h.Chunk.ID], "searched %s", h.Chunk.ID)
			}
		}
	}
}
