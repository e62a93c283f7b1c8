package qa

import (
	"context"
	"log/slog"
	"runtime"
	"time"

	"github.com/gertd/go-pluralize"

	"github.com/citebook/citebook"
)

// Embedder embeds queries; its Version must equal the version the library
// was indexed with, or the vectors are not comparable.
type Embedder interface {
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
	Version() citebook.EmbeddingVersion
}

// VectorSearcher is the vector side of retrieval. Get lets verification
// tell a real but withheld chunk from an invented ID.
type VectorSearcher interface {
	Search(ctx context.Context, vec []float32, f citebook.Filter, k int) ([]citebook.Hit, error)
	Get(ctx context.Context, ids []string) ([]citebook.Chunk, error)
}

// LexicalSearcher is the keyword side of retrieval.
type LexicalSearcher interface {
	// Search is BM25 inside f with the statistics of lib, the reader's
	// library (found.library): scores must not depend on what it is denied
	// (index.LexicalIndex).
	Search(ctx context.Context, query string, f, lib citebook.Filter, k int) ([]citebook.Hit, error)
	// SearchForms is Search with a query term matched in its other forms
	// too, counted as one term (forms: term → its other forms, as terms).
	SearchForms(ctx context.Context, query string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error)
}

// ChunkTerms gives a chunk's terms as analysis.EachTerm segments its
// heading path (joined by spaces; head true) and then its text: w is the
// term's index in want (-1: another term), name() the term, asked only
// when needed and only during that call of fn; false when it does not hold
// the chunk with this ID, heading path and text (lexical.Index.ChunkTerms).
//
// HoldsAll tells for each chunk of cs, bit i for want[i] (the first 64),
// which of want its heading path and text hold, without reading its
// terms; ok[i] false as ChunkTerms. One call for all of a query's
// candidates, so the index looks the terms up once.
//
// ChunkSentences gives the text's terms alone, each with the index of its
// sentence among analysis.Sentences(c.Text), as segmenting the sentences
// one by one gives them — with first non-nil, only those whose first byte
// it marks; false as ChunkTerms, or when it kept no sentence boundaries
// for the chunk.
type ChunkTerms interface {
	ChunkTerms(c *citebook.Chunk, ref citebook.RowRef, want []string, fn func(w int, head bool, name func() string)) bool
	HoldsAll(cs []*citebook.Chunk, refs []citebook.RowRef, want []string) (held []uint64, ok []bool)
	ChunkSentences(c *citebook.Chunk, ref citebook.RowRef, want []string, starts []uint16, fn func(w, sent int, name func() string)) bool
}

// Library is the metadata the pipeline reads and the hit counts it bumps.
type Library interface {
	Book(ctx context.Context, id string) (*citebook.Book, error)
	EmbeddingVersion(ctx context.Context) (v citebook.EmbeddingVersion, ok bool, err error)
	// Neighbours returns, for each chunk ID, the chunk and up to n chunks
	// either side of it in reading order, from the version the chunk is
	// served in; unknown IDs are absent. One call per question, so
	// expansion costs one store round trip, not one per chunk.
	Neighbours(ctx context.Context, ids []string, n int) (map[string][]citebook.Chunk, error)
	IncrementHits(ctx context.Context, ids []string) error
}

// GeometrySource returns the word boxes of chunks by ID (the metadata
// store), so verified citations can be drawn on their pages.
type GeometrySource interface {
	Geometry(ctx context.Context, ids []string) (map[string][]citebook.WordBox, error)
}

// Access resolves what a principal may read (acl.Resolver).
type Access interface {
	Filter(ctx context.Context, p citebook.Principal) (citebook.Filter, error)
}

// Planner splits a question into sub-queries.
type Planner interface {
	SubQueries(ctx context.Context, question string) ([]string, error)
}

// Reranker scores documents against a query, higher is better; scores[i]
// belongs to docs[i].
type Reranker interface {
	Rerank(ctx context.Context, query string, docs []string) ([]float64, error)
}

// Rewriter rewrites a question into short keyword queries in the wording a
// book would likely use (LLMRewriter), searched beside the question.
type Rewriter interface {
	Rewrite(ctx context.Context, question string) ([]string, error)
}

// TokenCounter counts tokens the way the model does (ingest.Tokenizer).
type TokenCounter interface {
	Count(s string) int
}

// Deps are the collaborators of a pipeline. Embedder, Vectors, Lexical,
// Library, Access, Answerer and Terms are required; Planner, Reranker and
// Tokens are optional (no splitting, the fused order, an estimate).
type Deps struct {
	Embedder Embedder
	Vectors  VectorSearcher
	Lexical  LexicalSearcher
	Library  Library
	Access   Access
	Answerer Answerer
	// Fallback answers when Answerer fails or gives no usable reply (the
	// extractive answerer behind a model); nil refuses instead.
	Fallback Answerer
	Planner  Planner
	Reranker Reranker
	// Rewriter, optional, gives keyword rewrites of the question whose
	// BM25 joins the fusion (Fusion.Rewrite); nil: none.
	Rewriter Rewriter
	Tokens   TokenCounter
	// Terms segments text into search terms the way the lexical index does
	// (analysis.Terms), for thresholding, reranking and extraction.
	Terms func(string) []string
	// EachTerm, optional, yields the terms Terms returns without building
	// the list (analysis.EachTerm): the threshold checks every hit's text
	// on each search. nil: Terms.
	EachTerm func(text string, fn func(term []byte))
	// ChunkTerms, optional, reads a candidate's terms as the lexical index
	// analysed them at index time (lexical.Index), so the threshold and the
	// query features need not segment every candidate's text on each
	// search; nil, or a chunk it does not hold as given: EachTerm.
	ChunkTerms ChunkTerms
	// Begin, optional, starts a question's retrieval: its searches run
	// under the context it returns (index.Follower.Begin: the library is
	// synced with other processes once per question instead of before
	// each search).
	Begin func(ctx context.Context) (context.Context, error)
	// Books reads a book's chunks for its cover page, which book routing
	// matches questions against besides titles; optional.
	Books BookChunks
	// Stats gives document frequencies in scope for answerability; when
	// nil and Lexical implements TermStats (lexical.Index does), Lexical is
	// used.
	Stats TermStats
	// Scripts, optional, converts a Chinese question to the script the
	// books print (analysis.Scripts); nil: questions are searched as
	// written.
	Scripts ScriptVariants
	Logger  *slog.Logger
	// Geometry is optional: without it citations carry no boxes.
	Geometry GeometrySource
}

// Options tune retrieval; zero values take the defaults below.
type Options struct {
	K             int     // chunks (passages) in the context; default 5
	MaxK          int     // upper bound on Request.K; default 20
	OverFetch     int     // each retriever returns OverFetch×K candidates; default 4
	Fusion        Fusion  // retriever weights; zero: DefaultFusion of the embedder's kind
	Depth         int     // candidates each keyword search returns for fusion, at least OverFetch×K; default 80 (20 before the query features, which rerank what BM25 ranks low)
	VectorDepth   int     // candidates the vector search returns, at least OverFetch×K; default 20
	RouteBonus    float64 // fused score a routed book's chunks gain, times the book's share of the best book score; default 1
	MinScore      float64 // vector cosine below which a chunk is dropped; default 0.2
	StrongScore   float64 // vector cosine that keeps a chunk without shared terms; default 0.45
	LexicalRank   int     // a chunk this high in the lexical ranking may survive a low cosine; default 3
	LexicalCover  float64 // ... if it contains this share of the query's terms; default 0.6
	Neighbours    int     // paragraphs added either side of a retrieved chunk; default 1
	ContextTokens int     // token budget of the context; default 3000
	RerankPool    int     // passages reranked, as a multiple of K; default 3
	SplitQueries  int     // most sub-queries asked of the planner; default 5
	// Concurrency is how many questions retrieve at once; the others wait
	// their turn in arrival order (default GOMAXPROCS). Retrieval is pure
	// CPU, so more at once only time-slices the cores: with 16 callers on
	// 2 cores a search that costs 3 ms of CPU took 25 ms and more, while in
	// turn every search waits about as long as any other (bench/load.sh:
	// p95 33–36 → see README, issue 13).
	Concurrency int
	// AnswerCoverage is the IDF-weighted share of a question's key terms
	// that the best evidence window must hold before anything is answered
	// (see assess); default DefaultAnswerCoverage. A negative value turns
	// the check off.
	AnswerCoverage float64
	// AnswerCoverageCJK is the bar for a question written in CJK script;
	// default DefaultAnswerCoverageCJK. Such a question is weighed by its
	// character pairs, and the pairs that cross its words ("用两" of
	// "用两个") are terms no passage holds, so the same evidence covers a
	// smaller share of them.
	AnswerCoverageCJK float64
	NothingMessage    string // the answer when nothing relevant is found
	// ModelMayRefuse lets a model's reply of no statements refuse a
	// question the answerability check judged answerable. By default the
	// extractive answer (verified by construction) stands in, as for a
	// reply whose statements all fail verification: Qwen2.5-Coder-0.5B's
	// empty replies came on answerable questions 14 times of 14 over
	// books-dev and the third and seventh held-out sets, and the extractive
	// answer cited the gold page in 13 of them (README). A model that
	// judges passages well may be trusted with its refusals.
	ModelMayRefuse bool
	// Synonyms are groups of phrases naming the same thing, which expand a
	// question besides the books' own definitions; nil: DefaultSynonyms,
	// an empty list: none.
	Synonyms [][]string
	// Statements are the kinds of page a question may ask about without
	// naming them, by the items they report; nil: DefaultStatements, an
	// empty list: none.
	Statements []PageKind
}

// DefaultAnswerCoverage is the answerability bar for the lexical evidence
// check; it depends on the question and the books, not on the embedder,
// which only decides what reaches the context. Chosen on books-dev and a
// held-out set over three other books together (see README, "Answers on
// books outside the dev set"); DefaultAnswerCoverageCJK keeps the bar
// CMRC and lshort-zh-cn were calibrated at.
const (
	DefaultAnswerCoverage    = 0.25
	DefaultAnswerCoverageCJK = 0.21
)

// DefaultNothingMessage is the answer when retrieval finds nothing relevant.
const DefaultNothingMessage = "Nothing in the books you can read is relevant to this question."

// DefaultOptions are the pipeline's defaults, written once: NewPipeline
// fills every zero field from them, and the command line shows them as the
// flags' defaults. Fusion stays zero (DefaultFusion of the embedder's kind).
func DefaultOptions() Options {
	return Options{
		K: 5, MaxK: 20, OverFetch: 4, Depth: 80, VectorDepth: 20,
		RouteBonus:  1, // 0.3 and 0.5 lost CMRC passages to title matches; FinanceBench shared gained alike
		MinScore:    0.2,
		StrongScore: 0.45, LexicalRank: 3, LexicalCover: 0.6,
		Neighbours: 1, ContextTokens: 3000, RerankPool: 3, SplitQueries: 5,
		Concurrency:       runtime.GOMAXPROCS(0),
		AnswerCoverage:    DefaultAnswerCoverage,
		AnswerCoverageCJK: DefaultAnswerCoverageCJK,
		NothingMessage:    DefaultNothingMessage,
	}
}

// withDefaults fills the fields left zero (or negative, where that means
// nothing) from DefaultOptions; a negative AnswerCoverage stays, it turns
// the check off (for CJK questions too).
func (o Options) withDefaults() Options {
	d := DefaultOptions()
	orDefault(&o.K, d.K)
	orDefault(&o.MaxK, d.MaxK)
	orDefault(&o.OverFetch, d.OverFetch)
	orDefault(&o.LexicalRank, d.LexicalRank)
	orDefault(&o.Neighbours, d.Neighbours)
	orDefault(&o.ContextTokens, d.ContextTokens)
	orDefault(&o.RerankPool, d.RerankPool)
	orDefault(&o.SplitQueries, d.SplitQueries)
	orDefault(&o.Concurrency, d.Concurrency)
	orDefault(&o.Depth, d.Depth)
	orDefault(&o.VectorDepth, d.VectorDepth)
	orDefault(&o.RouteBonus, d.RouteBonus)
	orDefault(&o.MinScore, d.MinScore)
	orDefault(&o.StrongScore, d.StrongScore)
	orDefault(&o.LexicalCover, d.LexicalCover)
	if o.AnswerCoverage == 0 {
		o.AnswerCoverage = d.AnswerCoverage
	}
	if o.AnswerCoverageCJK == 0 {
		o.AnswerCoverageCJK = d.AnswerCoverageCJK
	}
	if o.NothingMessage == "" {
		o.NothingMessage = d.NothingMessage
	}
	if o.Synonyms == nil {
		o.Synonyms = DefaultSynonyms
	}
	if o.Statements == nil {
		o.Statements = DefaultStatements
	}
	return o
}

// orDefault sets *v to d when it is zero or negative.
func orDefault[T int | float64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// Pipeline answers questions; it is safe for concurrent use.
type Pipeline struct {
	deps  Deps
	opts  Options
	log   *slog.Logger
	books profiles // routing's cache of book profiles
	// thesaurus is Options.Synonyms ready for matching.
	thesaurus thesaurus
	pageKinds titleIndex // Options.Statements ready for matching
	// turns holds a token for each retrieval running (Options.Concurrency);
	// a channel's blocked senders are served in arrival order.
	turns chan struct{}
	// evidence scores windows for the builtin reranker (evidence.go).
	evidence *Extractive
	// nouns gives the singular and plural of an English noun, irregular
	// ones too ("indices" of "index"), for heldInSomeForm.
	nouns *pluralize.Client
}

// NewPipeline checks the required dependencies and applies defaults.
func NewPipeline(deps Deps, opts Options) (*Pipeline, error) {
	switch {
	case deps.Embedder == nil, deps.Vectors == nil, deps.Lexical == nil, deps.Library == nil,
		deps.Access == nil, deps.Answerer == nil, deps.Terms == nil:
		return nil, citebook.Errorf(citebook.EINTERNAL, "qa pipeline is missing a dependency")
	}
	log := deps.Logger
	if log == nil {
		log = slog.Default()
	}
	if deps.Stats == nil {
		if s, ok := deps.Lexical.(TermStats); ok {
			deps.Stats = s
		}
	}
	if deps.Tokens == nil {
		deps.Tokens = estimateTokens{}
	}
	opts = opts.withDefaults()
	if opts.Fusion == (Fusion{}) {
		opts.Fusion = DefaultFusion(EmbedderKind(deps.Embedder.Version()))
	}
	return &Pipeline{deps: deps, opts: opts, log: log, thesaurus: newThesaurus(opts.Synonyms),
		pageKinds: newTitleIndex(opts.Statements), turns: make(chan struct{}, opts.Concurrency),
		evidence: NewExtractive(deps.Terms), nouns: pluralize.NewClient()}, nil
}

// Options returns the pipeline's options with defaults applied, so reports
// can record the bars a run used.
func (p *Pipeline) Options() Options { return p.opts }

// Fusion reports the fusion weights in use, for reports that must say how
// their figures were obtained.
func (p *Pipeline) Fusion() Fusion { return p.opts.Fusion }

// stopwatch records step timings into a trace.
type stopwatch struct {
	tr   *Trace
	last time.Time
}

func newStopwatch(tr *Trace) *stopwatch {
	tr.TimingsMS = map[string]float64{}
	return &stopwatch{tr: tr, last: time.Now()}
}

// lap adds the time since the previous lap to step.
func (s *stopwatch) lap(step string) {
	now := time.Now()
	s.tr.TimingsMS[step] += float64(now.Sub(s.last).Microseconds()) / 1000
	s.last = now
}

func (p *Pipeline) k(req Request) int {
	k := req.K
	if k <= 0 {
		k = p.opts.K
	}
	return min(k, p.opts.MaxK)
}

func (p *Pipeline) minScore(req Request) float64 {
	if req.MinScore > 0 {
		return req.MinScore
	}
	return p.opts.MinScore
}
