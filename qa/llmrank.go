package qa

import (
	"context"
	"encoding/json"
	"fmt"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/tmc/langchaingo/llms"
	"github.com/tmc/langchaingo/llms/openai"

	"github.com/citebook/citebook"
)

// The model on the query side of retrieval: a listwise rerank of the first
// fused passages and keyword rewrites of the question. Both only ever add
// to what lexical retrieval decided — a rerank moves passages up and drops
// none, a rewrite is searched beside the question inside the same access
// filter — and both fail soft: a failing, slow or lying model leaves the
// fused order and the question's own search as they were.

// LLMRerankOptions bound what the model reads when it reranks.
type LLMRerankOptions struct {
	// Passages is how many of the first fused passages the model sees; the
	// rest keep their fused order below them.
	Passages int
	// Chars is each passage's budget in characters (runes): the retrieved
	// chunk's text, cut at a word boundary.
	Chars int
}

// DefaultLLMRerankOptions are the rerank's defaults: eight passages of 600
// characters, about 1,300 prompt tokens, which a 0.5B model on a CPU reads
// in seconds and whose first places hold the gold page of most misses.
func DefaultLLMRerankOptions() LLMRerankOptions { return LLMRerankOptions{Passages: 8, Chars: 600} }

// chatCall is one model call with its own bound, held to a JSON schema when
// the provider can constrain output (OpenAI-compatible servers; llama.cpp
// turns the schema into a grammar) and in JSON mode otherwise.
type chatCall struct {
	cfg     ModelConfig
	plain   llms.Model
	timeout time.Duration
}

func newChatCall(cfg ModelConfig) (*chatCall, error) {
	m, err := OpenModel(cfg)
	if err != nil {
		return nil, err
	}
	t := cfg.Timeout
	if t <= 0 {
		t = DefaultLLMTimeout
	}
	return &chatCall{cfg: cfg, plain: m, timeout: t}, nil
}

// reply sends msgs and returns the reply's text.
func (c *chatCall) reply(ctx context.Context, msgs []llms.MessageContent, schema *openai.ResponseFormat, maxTokens int) (string, error) {
	m := c.plain
	var opts []llms.CallOption
	if c.cfg.Provider == "openai" && schema != nil {
		cfg := c.cfg
		cfg.responseFormat = schema
		cm, err := OpenModel(cfg)
		if err != nil {
			return "", err
		}
		m = cm
	} else {
		opts = append(opts, llms.WithJSONMode())
	}
	ch, err := complete(ctx, m, msgs, maxTokens, c.timeout, opts...)
	if err != nil {
		return "", err
	}
	return ch.Content, nil
}

// rerankSystem asks for passage numbers only: a 0.5B model follows a
// numbered list and a short JSON shape, and numbers are checked
// mechanically, so a made-up one is caught.
const rerankSystem = `You judge passages from a book. Given a question and numbered passages, pick the passages that answer the question, best first.
Reply with one JSON object and nothing else: {"ranking":[n,...]} with at most 3 passage numbers. If no passage answers it, reply {"ranking":[]}.`

// LLMReranker reranks with a chat model: it shows the model the first
// passages of the fused order, each trimmed to a budget, and asks which
// answer the question, best first. The passages it names move to the top
// in its order; every other passage keeps its fused order below them, so
// the model can promote a passage but never drop one. A malformed reply, a
// number outside the list, an empty pick or a failed call is an error, and
// the pipeline keeps the fused order.
type LLMReranker struct {
	call *chatCall
	opts LLMRerankOptions
}

// NewLLMReranker uses the model cfg names; zero options take
// DefaultLLMRerankOptions.
func NewLLMReranker(cfg ModelConfig, opts LLMRerankOptions) (*LLMReranker, error) {
	c, err := newChatCall(cfg)
	if err != nil {
		return nil, err
	}
	d := DefaultLLMRerankOptions()
	orDefault(&opts.Passages, d.Passages)
	orDefault(&opts.Chars, d.Chars)
	return &LLMReranker{call: c, opts: opts}, nil
}

// Rerank scores docs (in fused order): the model's picks above 1, in its
// order, and the rest in (0, 1] falling with their fused position.
func (r *LLMReranker) Rerank(ctx context.Context, query string, docs []string) ([]float64, error) {
	n := min(len(docs), r.opts.Passages)
	var b strings.Builder
	fmt.Fprintf(&b, "Question: %s\n\n", query)
	for i := range n {
		fmt.Fprintf(&b, "[%d] %s\n\n", i+1, trimRunes(docs[i], r.opts.Chars))
	}
	fmt.Fprintf(&b, "Question: %s\nWhich passages answer it? Reply {\"ranking\":[...]}.", query)
	msgs := []llms.MessageContent{
		llms.TextParts(llms.ChatMessageTypeSystem, rerankSystem),
		llms.TextParts(llms.ChatMessageTypeHuman, b.String()),
	}
	text, err := r.call.reply(ctx, msgs, rankingSchema(n), 40)
	if err != nil {
		return nil, err
	}
	picks, err := parseRanking(text, n)
	if err != nil {
		return nil, err
	}
	return rankScores(len(docs), picks), nil
}

// parseRanking reads {"ranking":[...]} with passage numbers 1..n and
// returns them 0-based, repeats removed. Any number outside the list makes
// the whole reply untrustworthy: the model did not read the list it was
// given, so none of its picks are used.
func parseRanking(text string, n int) ([]int, error) {
	out, ok := decodeFirst[struct {
		Ranking []json.Number `json:"ranking"`
	}](text, nil)
	if !ok || out.Ranking == nil {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "no ranking JSON in the model's reply")
	}
	seen := map[int]bool{}
	var picks []int
	for _, x := range out.Ranking {
		v, err := x.Int64()
		if err != nil || v < 1 || v > int64(n) {
			return nil, citebook.Errorf(citebook.EUNAVAILABLE, "the model ranked passage %s of %d", x, n)
		}
		if !seen[int(v)] {
			seen[int(v)] = true
			picks = append(picks, int(v)-1)
		}
	}
	if len(picks) == 0 {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "the model picked no passage")
	}
	return picks, nil
}

// rankScores puts picks first in their order and every other document after
// them in its given order.
func rankScores(n int, picks []int) []float64 {
	out := make([]float64, n)
	for i := range out {
		out[i] = 1 - float64(i)/float64(n)
	}
	for pos, i := range picks {
		out[i] = 1 + float64(len(picks)-pos)
	}
	return out
}

// rankingSchema holds the reply to passage numbers 1..n.
func rankingSchema(n int) *openai.ResponseFormat {
	enum := make([]any, n)
	for i := range enum {
		enum[i] = i + 1
	}
	return &openai.ResponseFormat{Type: "json_schema", JSONSchema: &openai.ResponseFormatJSONSchema{
		Name: "ranking", Strict: true,
		Schema: &openai.ResponseFormatJSONSchemaProperty{Type: "object", Required: []string{"ranking"},
			Properties: map[string]*openai.ResponseFormatJSONSchemaProperty{
				"ranking": {Type: "array", Items: &openai.ResponseFormatJSONSchemaProperty{Type: "integer", Enum: enum}}}},
	}}
}

// trimRunes cuts s to at most n runes at a word boundary.
func trimRunes(s string, n int) string {
	s = strings.Join(strings.Fields(s), " ")
	if utf8.RuneCountInString(s) <= n {
		return s
	}
	cut := 0
	for i := range s {
		if n == 0 {
			cut = i
			break
		}
		n--
	}
	if sp := strings.LastIndexByte(s[:cut], ' '); sp > cut/2 {
		cut = sp
	}
	return s[:cut] + " …"
}

// rewriteSystem asks for short keyword queries as a book would word them:
// the paraphrase gap between a reader's question and the book's text is
// what BM25 alone cannot bridge.
const rewriteSystem = `You help search a book. Rewrite the user's question as 1 or 2 short keyword search queries using the words the book itself would likely use (technical terms, command or function names). Keep the language of the question.
Reply with one JSON object and nothing else: {"queries":["...","..."]}`

// Rewrite limits: how many rewrites are searched and how long each may be.
const (
	maxRewrites     = 2
	maxRewriteRunes = 120
)

// LLMRewriter asks a chat model for keyword rewrites of a question.
type LLMRewriter struct{ call *chatCall }

// NewLLMRewriter uses the model cfg names.
func NewLLMRewriter(cfg ModelConfig) (*LLMRewriter, error) {
	c, err := newChatCall(cfg)
	if err != nil {
		return nil, err
	}
	return &LLMRewriter{call: c}, nil
}

// Rewrite returns up to two short queries, neither equal to the question.
func (r *LLMRewriter) Rewrite(ctx context.Context, question string) ([]string, error) {
	qs, err := r.call.askQueries(ctx, rewriteSystem, question, 80, nil, "queries")
	if err != nil {
		return nil, err
	}
	return cleanRewrites(question, qs), nil
}

// cleanRewrites keeps non-empty, distinct rewrites that differ from the
// question, each cut to maxRewriteRunes, at most maxRewrites of them.
func cleanRewrites(question string, qs []string) []string {
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(question)): true}
	var out []string
	for _, q := range qs {
		q = strings.TrimSpace(trimRunes(q, maxRewriteRunes))
		q = strings.TrimSuffix(q, " …")
		key := strings.ToLower(q)
		if q == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, q)
		if len(out) == maxRewrites {
			break
		}
	}
	return out
}

func queriesSchema() *openai.ResponseFormat {
	return &openai.ResponseFormat{Type: "json_schema", JSONSchema: &openai.ResponseFormatJSONSchema{
		Name: "queries", Strict: true,
		Schema: &openai.ResponseFormatJSONSchemaProperty{Type: "object", Required: []string{"queries"},
			Properties: map[string]*openai.ResponseFormatJSONSchemaProperty{
				"queries": {Type: "array", Items: &openai.ResponseFormatJSONSchemaProperty{Type: "string"}}}},
	}}
}

// text is what the model reads of a passage: the retrieved chunk under its
// innermost heading.
func (r *LLMReranker) text(ps *passage) string {
	c := ps.primary.chunk
	if h := c.HeadingPath; len(h) > 0 {
		return "(" + h[len(h)-1] + ") " + c.Text
	}
	return c.Text
}

// rewrite asks the Rewriter for keyword rewrites of the question and
// records them in the trace; without one, or when it fails, the question
// is searched alone (the trace says why).
func (p *Pipeline) rewrite(ctx context.Context, question string, tr *Trace) []string {
	if p.deps.Rewriter == nil || p.opts.Fusion.Rewrite <= 0 {
		return nil
	}
	rw, err := p.deps.Rewriter.Rewrite(ctx, question)
	if err != nil {
		p.log.WarnContext(ctx, "query rewrite failed; searching the question alone", "err", err)
		tr.RewriteError = citebook.ErrorMessage(err)
		return nil
	}
	if rw = cleanRewrites(question, rw); len(rw) == 0 {
		tr.RewriteError = "the model gave no rewrite other than the question"
		return nil
	}
	tr.Rewrites = rw
	return rw
}

// searchRewrites runs BM25 of each rewrite inside f — the filter the
// question is searched in, so a rewrite can name anything and still reach
// only what the reader may read.
func (p *Pipeline) searchRewrites(ctx context.Context, rewrites []string, f, lib citebook.Filter, k int) ([][]citebook.Hit, error) {
	out := make([][]citebook.Hit, 0, len(rewrites))
	for _, q := range rewrites {
		hits, err := p.deps.Lexical.Search(ctx, q, f, lib, k)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "keyword search failed")
		}
		out = append(out, keepMatching(hits, &f))
	}
	return out, nil
}

// rewriteScores normalises each rewrite's BM25 by its best hit and keeps a
// chunk's best share over the rewrites; get registers each chunk as a
// candidate of the fusion.
func rewriteScores(rewritten [][]citebook.Hit, get func(*citebook.Chunk) *candidate) map[string]float64 {
	out := map[string]float64{}
	for _, hits := range rewritten {
		top := 0.0
		for _, h := range hits {
			top = max(top, h.Score)
		}
		for i, h := range hits {
			get(&hits[i].Chunk)
			if top > 0 {
				out[h.Chunk.ID] = max(out[h.Chunk.ID], h.Score/top)
			}
		}
	}
	return out
}

// defaultRewriteWeight is Fusion.Rewrite's default: a rewrite's BM25 counts
// half the question's own, so the question keeps deciding and a rewrite
// lifts the passages worded the way the book words them.
const defaultRewriteWeight = 0.5
