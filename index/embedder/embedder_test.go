package embedder

import (
	"context"
	"encoding/json"
	"fmt"
	"hash/fnv"
	"math"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/storetest"
	"github.com/stretchr/testify/require"
)

func cosine(a, b []float32) float64 {
	var d, na, nb float64
	for i := range a {
		d += float64(a[i]) * float64(b[i])
		na += float64(a[i]) * float64(a[i])
		nb += float64(b[i]) * float64(b[i])
	}
	return d / math.Sqrt(na*nb)
}

func TestBuiltinDeterministicAndNormalised(t *testing.T) {
	ctx := context.Background()
	texts := []string{"An Introduction to R", "一份（不太）简短的 LaTeX2ε 介绍", "Call me Ishmael. Some years ago—never mind how long precisely"}
	a, err := NewBuiltin(0).EmbedDocuments(ctx, texts)
	require.NoError(t, err)
	b, err := NewBuiltin(384).EmbedDocuments(ctx, texts)
	require.NoError(t, err)
	require.Equal(t, a, b)
	for i, v := range a {
		require.Len(t, v, 384)
		require.InDelta(t, 1.0, cosine(v, v), 1e-6)
		q, err := NewBuiltin(0).EmbedQuery(ctx, texts[i])
		require.NoError(t, err)
		require.Equal(t, v, q, "a query embeds exactly like a document")
	}
	require.Equal(t, citebook.EmbeddingVersion{Provider: "builtin", Model: "hash-ngram-v1", Dimension: 384}, NewBuiltin(0).Version())

	small, err := NewBuiltin(64).EmbedQuery(ctx, texts[0])
	require.NoError(t, err)
	require.Len(t, small, 64)
	require.Equal(t, 64, NewBuiltin(64).Version().Dimension)

	empty, err := NewBuiltin(0).EmbedQuery(ctx, " ,. ")
	require.NoError(t, err)
	require.Len(t, empty, 384)
	for _, x := range empty {
		require.Zero(t, x)
	}
}

func TestBuiltinSimilarity(t *testing.T) {
	ctx := context.Background()
	e := NewBuiltin(0)
	tests := []struct {
		name, text, near, far string
	}{
		{"chinese one character changed",
			"生命数耗完即算为踢爆，重生者在一定时间内为无敌状态。",
			"生命数耗完即算为踢爆，重生者在一定时间内为无故状态。",
			"中国大陆由盛大游戏运营，台湾由游戏橘子运营。"},
		{"english plural and case",
			"Vectors and lists in R",
			"VECTOR and list in r",
			"The Pequod sailed from Nantucket"},
		{"english typo",
			"the harpooneer Queequeg",
			"the harpoonerr Queequeg",
			"device tree compiler"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			vs, err := e.EmbedDocuments(ctx, []string{tt.text, tt.near, tt.far})
			require.NoError(t, err)
			near, far := cosine(vs[0], vs[1]), cosine(vs[0], vs[2])
			require.Greater(t, near, 0.7)
			require.Greater(t, near, far+0.3, "near %.3f far %.3f", near, far)
		})
	}
}

// TestBuiltinRetrievesCMRC embeds the 256 CMRC 2018 articles and checks that
// questions find their article: lexical hashing is no semantic model, but it
// must be useful on Chinese.
func TestBuiltinRetrievesCMRC(t *testing.T) {
	ctx := context.Background()
	var docs, questions []string
	var owner []int
	for _, p := range storetest.CMRC(t) {
		docs = append(docs, p.Context)
		for _, q := range p.Questions {
			questions = append(questions, q)
			owner = append(owner, len(docs)-1)
		}
	}
	e := NewBuiltin(0)
	dv, err := e.EmbedDocuments(ctx, docs)
	require.NoError(t, err)
	found := 0
	for i, q := range questions {
		qv, err := e.EmbedQuery(ctx, q)
		require.NoError(t, err)
		own := cosine(qv, dv[owner[i]])
		better := 0
		for j := range dv {
			if j != owner[i] && cosine(qv, dv[j]) > own {
				better++
			}
		}
		if better < 10 {
			found++
		}
	}
	recall := float64(found) / float64(len(questions))
	t.Logf("builtin CMRC recall@10 = %.3f over %d questions", recall, len(questions))
	require.GreaterOrEqual(t, recall, 0.8)
}

// fakeVec is the vector a scripted server returns for text: dimension 8,
// derived from the text so tests can check vectors come back in order.
func fakeVec(text string) []float32 {
	h := fnv.New32a()
	h.Write([]byte(text))
	v := make([]float32, 8)
	v[0] = float32(h.Sum32() % 1000)
	v[1] = 1
	return v
}

// scripted is an embedding server that answers with the statuses in script
// first (0 = answer normally) and records the batch size of every call.
type scripted struct {
	mu       sync.Mutex
	requests int // every request, including those rejected before the script
	script   []int
	batches  []int
	inputs   []string
}

func (s *scripted) next(n int, inputs []string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.batches = append(s.batches, n)
	s.inputs = append(s.inputs, inputs...)
	if len(s.script) == 0 {
		return 0
	}
	st := s.script[0]
	s.script = s.script[1:]
	return st
}

func (s *scripted) calls() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	return len(s.batches)
}

func openAIServer(t *testing.T, s *scripted) *httptest.Server {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		s.mu.Lock()
		s.requests++
		s.mu.Unlock()
		if r.URL.Path != "/v1/embeddings" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		if r.Header.Get("Authorization") != "Bearer sk-test" {
			http.Error(w, `{"error":{"message":"bad key"}}`, http.StatusUnauthorized)
			return
		}
		var req struct {
			Model string   `json:"model"`
			Input []string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "test-embed" {
			http.Error(w, `{"error":{"message":"bad request"}}`, http.StatusBadRequest)
			return
		}
		if st := s.next(len(req.Input), req.Input); st != 0 {
			w.WriteHeader(st)
			fmt.Fprintf(w, `{"error":{"message":"scripted %d"}}`, st)
			return
		}
		type item struct {
			Object    string    `json:"object"`
			Embedding []float32 `json:"embedding"`
			Index     int       `json:"index"`
		}
		resp := struct {
			Object string `json:"object"`
			Data   []item `json:"data"`
			Model  string `json:"model"`
		}{Object: "list", Model: req.Model}
		for i, in := range req.Input {
			resp.Data = append(resp.Data, item{"embedding", fakeVec(in), i})
		}
		w.Header().Set("Content-Type", "application/json")
		json.NewEncoder(w).Encode(resp)
	}))
	t.Cleanup(srv.Close)
	return srv
}

func openAIConfig(url string) Config {
	return Config{Provider: "openai", BaseURL: url + "/v1", Model: "test-embed", APIKey: "sk-test", Dimension: 8, Timeout: 5 * time.Second}
}

func TestOpenAIBatches(t *testing.T) {
	s := &scripted{}
	srv := openAIServer(t, s)
	e, err := New(openAIConfig(srv.URL))
	require.NoError(t, err)
	require.Equal(t, citebook.EmbeddingVersion{Provider: "openai", Model: "test-embed", Dimension: 8}, e.Version())
	texts := make([]string, 450)
	for i := range texts {
		texts[i] = fmt.Sprintf("paragraph %d\nsecond line", i)
	}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	require.Equal(t, []int{200, 200, 50}, s.batches)
	require.Len(t, vecs, 450)
	for i := range texts {
		require.Equal(t, fakeVec(texts[i]), vecs[i], "vector %d belongs to text %d", i, i)
	}
	require.Equal(t, texts, s.inputs, "texts are sent unchanged, newlines included")
	require.Equal(t, "paragraph 0\nsecond line", texts[0], "the caller's slice is not rewritten")
}

func TestOpenAIRetriesThenSucceeds(t *testing.T) {
	s := &scripted{script: []int{http.StatusTooManyRequests, http.StatusInternalServerError}}
	srv := openAIServer(t, s)
	e, err := NewOpenAI(openAIConfig(srv.URL))
	require.NoError(t, err)
	v, err := e.EmbedQuery(context.Background(), "which chapter covers factors?")
	require.NoError(t, err)
	require.Equal(t, fakeVec("which chapter covers factors?"), v)
	require.Equal(t, 3, s.calls(), "429, then 500, then success")
}

func TestOpenAIProbesDimension(t *testing.T) {
	s := &scripted{}
	srv := openAIServer(t, s)
	cfg := openAIConfig(srv.URL)
	cfg.Dimension = 0
	e, err := New(cfg)
	require.NoError(t, err)
	require.Equal(t, 8, e.Version().Dimension)
	require.Equal(t, 1, s.calls())

	cfg.Dimension = 16
	e, err = New(cfg)
	require.NoError(t, err)
	_, err = e.EmbedQuery(context.Background(), "x")
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	require.Contains(t, err.Error(), "dimension 8, expected 16")
}

func TestOpenAIFailures(t *testing.T) {
	always500 := &scripted{script: []int{500, 500, 500, 500, 500, 500}}
	srv500 := openAIServer(t, always500)
	slow := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		select {
		case <-r.Context().Done():
		case <-time.After(2 * time.Second):
		}
	}))
	t.Cleanup(slow.Close)

	tests := []struct {
		name     string
		cfg      Config
		contains []string
	}{
		{"server always fails", func() Config { c := openAIConfig(srv500.URL); c.MaxRetries = 2; return c }(),
			[]string{"embedding service openai at " + srv500.URL + "/v1", "500"}},
		{"wrong key", func() Config { c := openAIConfig(srv500.URL); c.APIKey = "sk-wrong"; return c }(),
			[]string{"401"}},
		{"timeout", func() Config {
			c := openAIConfig(slow.URL)
			c.Timeout, c.MaxRetries = 100*time.Millisecond, -1
			return c
		}(), []string{"embedding service openai", "timeout"}},
		{"nothing listening", func() Config { c := openAIConfig("http://127.0.0.1:1"); c.MaxRetries = 1; return c }(),
			[]string{"embedding service openai at http://127.0.0.1:1/v1"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			e, err := New(tt.cfg)
			require.NoError(t, err)
			_, err = e.EmbedDocuments(context.Background(), []string{"a", "b"})
			require.Error(t, err)
			require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
			for _, c := range tt.contains {
				require.Contains(t, err.Error(), c)
			}
		})
	}
	require.Equal(t, 3, always500.calls(), "two retries after the first 500")
	require.Equal(t, 3+1, always500.requests, "a 401 is not retried")
}

func TestNewRejectsBadConfig(t *testing.T) {
	tests := []struct {
		name string
		cfg  Config
	}{
		{"unknown provider", Config{Provider: "word2vec"}},
		{"openai without key", Config{Provider: "openai"}},
		{"openai bad url", Config{Provider: "openai", BaseURL: "localhost:8080", APIKey: "k"}},
		{"ollama bad url", Config{Provider: "ollama", BaseURL: "::nope"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := New(tt.cfg)
			require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "%v", err)
		})
	}
	e, err := New(Config{})
	require.NoError(t, err)
	require.Equal(t, "builtin/hash-ngram-v1/384", e.Version().String())
}

func TestOllama(t *testing.T) {
	s := &scripted{script: []int{http.StatusServiceUnavailable}}
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/api/embed" || r.Method != http.MethodPost {
			http.NotFound(w, r)
			return
		}
		var req struct {
			Model string `json:"model"`
			Input string `json:"input"`
		}
		if err := json.NewDecoder(r.Body).Decode(&req); err != nil || req.Model != "nomic-embed-text" {
			http.Error(w, `{"error":"bad request"}`, http.StatusBadRequest)
			return
		}
		if st := s.next(1, []string{req.Input}); st != 0 {
			w.WriteHeader(st)
			fmt.Fprint(w, `{"error":"loading model"}`)
			return
		}
		json.NewEncoder(w).Encode(map[string]any{"model": req.Model, "embeddings": [][]float32{fakeVec(req.Input)}})
	}))
	t.Cleanup(srv.Close)

	e, err := New(Config{Provider: "ollama", BaseURL: srv.URL, Timeout: 5 * time.Second})
	require.NoError(t, err)
	require.Equal(t, citebook.EmbeddingVersion{Provider: "ollama", Model: "nomic-embed-text", Dimension: 8}, e.Version())
	require.Equal(t, 2, s.calls(), "the dimension probe was retried once after a 503")

	texts := []string{"第一章 简介", "Chapter 3: Objects", "附录"}
	vecs, err := e.EmbedDocuments(context.Background(), texts)
	require.NoError(t, err)
	for i := range texts {
		require.Equal(t, fakeVec(texts[i]), vecs[i])
	}
	require.Equal(t, 5, s.calls())
	require.True(t, strings.HasPrefix(s.inputs[len(s.inputs)-3], "第一章"))
}
