package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"strings"
	"time"

	"github.com/spf13/cobra"
	"github.com/spf13/pflag"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/qa"
)

// answerOptions configure the answering side of the app: the model (or
// none, for the extractive answerer), the reranker and the threshold.
type answerOptions struct {
	LLM         string // none, openai or ollama
	LLMURL      string
	LLMModel    string
	LLMKey      string // from CITEBOOK_LLM_KEY only, never a flag
	LLMTimeout  time.Duration
	RerankURL   string
	RerankModel string
	RerankKey   string // from CITEBOOK_RERANK_KEY only
	MinScore    float64
	K           int
	Coverage    float64 // answerability bar; 0 means the default, negative turns it off
}

// addAnswerFlags registers the answering flags with environment defaults.
func addAnswerFlags(fs *pflag.FlagSet) *answerOptions {
	o := &answerOptions{
		LLM:       envOr("CITEBOOK_LLM", "none"),
		LLMURL:    os.Getenv("CITEBOOK_LLM_URL"),
		LLMModel:  os.Getenv("CITEBOOK_LLM_MODEL"),
		LLMKey:    os.Getenv("CITEBOOK_LLM_KEY"),
		RerankURL: os.Getenv("CITEBOOK_RERANK_URL"),
		RerankKey: os.Getenv("CITEBOOK_RERANK_KEY"),
	}
	fs.StringVar(&o.LLM, "llm", o.LLM, "answerer: none (extractive, no model), openai or ollama (env CITEBOOK_LLM; key in env CITEBOOK_LLM_KEY)")
	fs.StringVar(&o.LLMURL, "llm-url", o.LLMURL, "model API base URL, e.g. http://localhost:8000/v1 (env CITEBOOK_LLM_URL)")
	fs.StringVar(&o.LLMModel, "llm-model", o.LLMModel, "model name (env CITEBOOK_LLM_MODEL)")
	fs.DurationVar(&o.LLMTimeout, "llm-timeout", 0, "longest one model call may take before the extractive answer stands in (default "+qa.DefaultLLMTimeout.String()+")")
	fs.StringVar(&o.RerankURL, "rerank-url", o.RerankURL, "rerank endpoint, e.g. http://localhost:8001/v1/rerank (env CITEBOOK_RERANK_URL); default: term overlap")
	fs.StringVar(&o.RerankModel, "rerank-model", o.RerankModel, "rerank model name")
	fs.Float64Var(&o.MinScore, "min-score", 0, "vector cosine below which chunks are dropped (default 0.2)")
	fs.IntVar(&o.K, "k", 0, "passages in the context (default 5)")
	fs.Float64Var(&o.Coverage, "answer-coverage", 0, "IDF-weighted share of the question's key terms the best evidence must hold to answer (default 0.21; negative: never refuse for coverage)")
	return o
}

func envOr(key, def string) string {
	if v := os.Getenv(key); v != "" {
		return v
	}
	return def
}

// answerer names the answering setup as reports and traces show it.
func (o answerOptions) answerer() string {
	if o.LLM == "" || o.LLM == "none" {
		return "extractive"
	}
	return o.LLM + "/" + o.LLMModel
}

// openAnswering opens the library and wires the QA pipeline to it, the
// start every answering command (ask, serve, eval) shares. The caller
// closes the app; on error nothing is left open.
func openAnswering(ctx context.Context, ao appOptions, o answerOptions) (*app, *qa.Pipeline, error) {
	a, err := openApp(ctx, ao)
	if err != nil {
		return nil, nil, err
	}
	p, err := newPipeline(a, o)
	if err != nil {
		a.Close()
		return nil, nil, err
	}
	return a, p, nil
}

// writeJSON prints v indented and with HTML characters left as they are, the
// form every --json flag promises.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}

// newPipeline wires the QA pipeline to an opened library.
func newPipeline(a *app, o answerOptions) (*qa.Pipeline, error) {
	deps := qa.Deps{
		Embedder: a.Embed,
		Vectors:  index.FreshVectors{VectorStore: a.Vectors, F: a.Follow},
		Lexical:  index.FreshLexical{LexicalIndex: a.Lexical, F: a.Follow},
		Library:  a.Meta,
		Access:   acl.NewResolver(a.Meta, acl.NewStore(a.Meta.SQL()), a.Meta),
		Terms:    analysis.Terms,
		Books:    a.Meta,
		Logger:   a.Log,
		Geometry: a.Meta,
	}
	// Answerability weighs the question's terms by the lexical index's
	// document frequencies. FreshLexical hides them (it embeds the
	// LexicalIndex interface), so they are passed on their own; the search
	// that precedes every assessment has already synced the index.
	if s, ok := a.Lexical.(qa.TermStats); ok {
		deps.Stats = s
	} else {
		a.Log.Warn("the lexical index gives no term statistics; answerability weighs terms equally")
	}
	if tok, err := ingest.NewTokenizer(); err == nil {
		deps.Tokens = tok
	} else {
		a.Log.Warn("tokenizer unavailable; estimating context tokens", "err", err)
	}
	switch o.LLM {
	case "", "none":
		deps.Answerer = qa.NewExtractive(analysis.Terms)
	case "openai", "ollama":
		cfg := qa.ModelConfig{Provider: o.LLM, URL: o.LLMURL, Model: o.LLMModel, Key: o.LLMKey}
		m, err := qa.OpenModel(cfg)
		if err != nil {
			return nil, err
		}
		deps.Answerer = qa.NewLLMAnswerer(m, o.answerer()).Constrain(cfg).Timeout(o.LLMTimeout)
		deps.Fallback = qa.NewExtractive(analysis.Terms)
		deps.Planner = qa.NewLLMPlanner(m)
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "unknown --llm %q (none, openai or ollama)", o.LLM)
	}
	if o.RerankURL != "" {
		deps.Reranker = qa.NewHTTPReranker(o.RerankURL, o.RerankModel, o.RerankKey, nil)
	}
	opts := qa.Options{MinScore: o.MinScore, K: o.K, AnswerCoverage: o.Coverage}
	return qa.NewPipeline(deps, opts)
}

// askFlags are the flags of `citebook ask`.
type askFlags struct {
	app    *appOptions
	answer *answerOptions
	books  []string
	tenant string
	user   string
	groups []string
	admin  bool
	split  bool
	json   bool
}

func newAskCmd() *cobra.Command {
	f := &askFlags{}
	cmd := &cobra.Command{
		Use:   `ask "QUESTION"`,
		Short: "Answer a question from the books, with verified citations",
		Long: `Ask retrieves the passages the principal (--tenant, --user, --groups) may
read, has the answerer write statements citing them, and keeps only the
statements whose quotes are found verbatim in the cited passage. Each
citation names the book, chapter, printed and physical page of the quote.
Without a model (--llm none) the answer quotes the best matching sentences.

--json prints {"answer","refused","citations":[{"n","chunk_id","book_id",
"book_title","heading_path","page","printed_page","quote","char_start",
"char_end"}],"trace"}; the trace lists what was retrieved, dropped, given to
the answerer and rejected.`,
		Args: cobra.ExactArgs(1),
		RunE: func(cmd *cobra.Command, args []string) error { return runAsk(cmd, f, args[0]) },
	}
	f.app = addAppFlags(cmd.Flags())
	f.answer = addAnswerFlags(cmd.Flags())
	fs := cmd.Flags()
	fs.StringSliceVar(&f.books, "book", nil, "only these book IDs (repeatable)")
	fs.StringVar(&f.tenant, "tenant", "default", "tenant asking")
	fs.StringVar(&f.user, "user", "", "user asking")
	fs.StringSliceVar(&f.groups, "groups", nil, "groups of the user")
	fs.BoolVar(&f.admin, "admin", false, "ask as a tenant admin (sees every book of the tenant)")
	fs.BoolVar(&f.split, "split", false, "let the model split the question into sub-queries")
	fs.BoolVar(&f.json, "json", false, "print the answer as JSON")
	return cmd
}

func runAsk(cmd *cobra.Command, f *askFlags, question string) error {
	ctx := cmd.Context()
	req := qa.Request{Question: question, BookIDs: f.books, Split: f.split}
	// The same check as HTTP and MCP, before the library is opened.
	if err := qa.Validate(&req); err != nil {
		return err
	}
	a, p, err := openAnswering(ctx, *f.app, *f.answer)
	if err != nil {
		return err
	}
	defer a.Close()
	pr := citebook.Principal{Tenant: f.tenant, User: f.user, Groups: f.groups, Admin: f.admin}
	out := cmd.OutOrStdout()
	var onDelta func(string)
	if !f.json {
		onDelta = func(s string) { fmt.Fprint(out, s) }
	}
	ans, err := p.Ask(ctx, pr, req, onDelta)
	if err != nil {
		return err
	}
	if f.json {
		return writeJSON(out, ans)
	}
	fmt.Fprintln(out)
	writeCitations(out, ans.Citations)
	return nil
}

// writeCitations prints numbered citations the way a reader looks them up:
// [1] Title — Chapter > Section, p. 31 (physical 37): “quote”.
func writeCitations(w io.Writer, cs []citebook.Citation) {
	if len(cs) > 0 {
		fmt.Fprintln(w)
	}
	for _, c := range cs {
		var b strings.Builder
		fmt.Fprintf(&b, "[%d] %s", c.N, c.BookTitle)
		if h := citebook.HeadingString(c.HeadingPath); h != "" {
			b.WriteString(" — " + h)
		}
		switch {
		case c.PrintedPage != "" && c.PrintedPage != fmt.Sprint(c.Page):
			fmt.Fprintf(&b, ", p. %s (physical %d)", c.PrintedPage, c.Page)
		case c.Page > 0:
			fmt.Fprintf(&b, ", p. %d", c.Page)
		}
		fmt.Fprintf(&b, ": “%s”", strings.Join(strings.Fields(c.Quote), " "))
		fmt.Fprintln(w, b.String())
	}
}
