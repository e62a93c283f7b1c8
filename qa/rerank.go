package qa

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"sort"
	"strings"

	"github.com/citebook/citebook"
)

// rerank orders passages by the reranker's score against the question,
// keeping the fused order among equals. A failing reranker degrades to the
// fused order instead of failing the answer; the trace says why. Every
// passage stays: a reranker only reorders what the filter admitted.
// Without a reranker (the default: no endpoint, no model) the fused order
// stands. The term-overlap reranker that used to be the default ranked
// worse than the fusion it reordered, which already holds key-term
// coverage (Fusion.Cover) beside BM25 and the query features: over the
// passages it saw, page recall@1 / @5 on books-dev 0.614 / 0.800 against
// 0.729 / 0.771 in fused order, and removing it lifted citation page
// accuracy (books-dev shared 0.823 → 0.855, FinanceBench book 0.196 →
// 0.217) with every refusal figure level (README, 2026-12-01).
func (p *Pipeline) rerank(ctx context.Context, tr *Trace, question string, ps []*passage) []*passage {
	defer func() {
		for i, x := range ps {
			x.primary.rerankRank = i + 1
		}
	}()
	if len(ps) < 2 || p.deps.Reranker == nil {
		return ps
	}
	docs := make([]string, len(ps))
	tc, chooses := p.deps.Reranker.(textChooser)
	for i, x := range ps {
		if chooses {
			docs[i] = tc.text(x)
		} else {
			docs[i] = x.text()
		}
	}
	scores, err := p.deps.Reranker.Rerank(ctx, question, docs)
	if err == nil && len(scores) != len(ps) {
		err = citebook.Errorf(citebook.EUNAVAILABLE, "the reranker scored %d of %d passages", len(scores), len(ps))
	}
	if err != nil {
		p.log.WarnContext(ctx, "rerank failed; keeping the fused order", "err", err, "docs", len(ps))
		tr.RerankError = citebook.ErrorMessage(err)
		return ps
	}
	for i, x := range ps {
		x.primary.rerank = scores[i]
	}
	sort.SliceStable(ps, func(i, j int) bool { return ps[i].primary.rerank > ps[j].primary.rerank })
	return ps
}

// textChooser is a reranker that picks what it reads of a passage; the
// model reranker reads the retrieved chunk alone, since within its
// character budget a passage would show mostly the paragraph before it.
type textChooser interface {
	text(ps *passage) string
}

// HTTPReranker calls a cross-encoder behind the rerank API that Jina, vLLM
// and TEI's OpenAI-compatible routes serve: POST {model, query, documents}
// → {results: [{index, relevance_score}]}.
type HTTPReranker struct {
	url, model, key string
	client          *http.Client
}

// NewHTTPReranker posts to url (the full endpoint, e.g.
// http://host:8000/v1/rerank) with an optional bearer key.
func NewHTTPReranker(url, model, key string, client *http.Client) *HTTPReranker {
	if client == nil {
		client = http.DefaultClient
	}
	return &HTTPReranker{url: url, model: model, key: key, client: client}
}

type rerankRequest struct {
	Model     string   `json:"model,omitempty"`
	Query     string   `json:"query"`
	Documents []string `json:"documents"`
}

type rerankResponse struct {
	Results []struct {
		Index          int     `json:"index"`
		RelevanceScore float64 `json:"relevance_score"`
	} `json:"results"`
}

// Rerank returns one relevance score per document.
func (r *HTTPReranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	body, err := json.Marshal(rerankRequest{Model: r.model, Query: query, Documents: docs})
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "encode rerank request")
	}
	req, err := http.NewRequestWithContext(ctx, http.MethodPost, r.url, bytes.NewReader(body))
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "bad rerank URL %q", r.url)
	}
	req.Header.Set("Content-Type", "application/json")
	if r.key != "" {
		req.Header.Set("Authorization", "Bearer "+r.key)
	}
	resp, err := r.client.Do(req)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "reranker unreachable")
	}
	defer resp.Body.Close()
	raw, err := io.ReadAll(io.LimitReader(resp.Body, 8<<20))
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "read rerank response")
	}
	if resp.StatusCode != http.StatusOK {
		return nil, citebook.Wrap(fmt.Errorf("status %d: %s", resp.StatusCode, strings.TrimSpace(string(raw[:min(len(raw), 300)]))),
			citebook.EUNAVAILABLE, "reranker failed")
	}
	var rr rerankResponse
	if err := json.Unmarshal(raw, &rr); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "reranker returned malformed JSON")
	}
	scores := make([]float64, len(docs))
	seen := make([]bool, len(docs))
	for _, x := range rr.Results {
		if x.Index < 0 || x.Index >= len(docs) || seen[x.Index] {
			return nil, citebook.Errorf(citebook.EUNAVAILABLE, "reranker returned index %d for %d documents", x.Index, len(docs))
		}
		seen[x.Index] = true
		scores[x.Index] = x.RelevanceScore
	}
	if len(rr.Results) != len(docs) {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "reranker scored %d of %d documents", len(rr.Results), len(docs))
	}
	return scores, nil
}
