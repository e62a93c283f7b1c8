package eval

import (
	"context"
	"log/slog"
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/qa"
)

// Indexer puts a book file into the library; index.Builder is the real one,
// so evaluation indexes exactly as `citebook index` does and an unchanged
// book is skipped on the next run.
type Indexer interface {
	Index(ctx context.Context, in index.BookInput) (*index.JobResult, error)
}

// Pipeline answers questions; it is the same qa.Pipeline the server uses,
// so the numbers describe what readers get.
type Pipeline interface {
	Ask(ctx context.Context, pr citebook.Principal, req qa.Request, onDelta func(string)) (*qa.Answer, error)
}

// Library reads back what indexing stored, to turn page and evidence gold
// into relevant chunk IDs and to learn the page ranges and text of the
// chunks the trace names (the metadata DB, index/metadb).
type Library interface {
	Book(ctx context.Context, id string) (*citebook.Book, error)
	ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error)
	ChunksByID(ctx context.Context, ids []string) ([]citebook.Chunk, error)
}

// Scopes a run can search in.
const (
	ScopeBook   = "book"   // each question searches only its own books
	ScopeShared = "shared" // every question searches every book of the dataset (and only those)
)

// Ks are the cut-offs reported for recall and page recall; the curve in the
// reports covers 1..MaxK.
var Ks = []int{1, 5, 10}

// MaxK is the deepest rank the ranking metrics look at.
const MaxK = 10

// evidenceCover is the share of an evidence text's terms a chunk must hold
// to count as containing it ("most of the normalized evidence").
const evidenceCover = 0.6

// quoteOverlap is the share of a citation quote's terms that must occur in a
// gold evidence text for the quote to support it.
const quoteOverlap = 0.6

// Setup describes what was measured, so numbers are never quoted without it.
type Setup struct {
	Dataset  string `json:"dataset"`
	Embedder string `json:"embedder"`
	Store    string `json:"store"`
	Scope    string `json:"scope"`
	Answerer string `json:"answerer"`
	// RetrievalModel is the model that reranked and rewrote, when one did.
	RetrievalModel string `json:"retrieval_model,omitempty"`
	Fusion         string `json:"fusion,omitempty"` // the embedder kind and its retriever weights (qa.Fusion)
	// MinScore is the vector relevance bar and AnswerCoverage the
	// answerability bar the run used: both belong to the configuration the
	// numbers describe (the relevance bar depends on the embedder).
	MinScore       float64 `json:"min_score,omitempty"`
	AnswerCoverage float64 `json:"answer_coverage,omitempty"`
	// AnswerCoverageCJK is the answerability bar of questions in CJK script.
	AnswerCoverageCJK float64 `json:"answer_coverage_cjk,omitempty"`
	Tenant            string  `json:"tenant"`
	Date              string  `json:"date"`
}

// Config tunes a run. Terms must segment text as the lexical index does
// (analysis.Terms) so evidence matching agrees with retrieval's notion of a
// term.
type Config struct {
	Scope    string                // ScopeBook (default) or ScopeShared
	Tenant   string                // tenant the books are indexed under; default "eval-<dataset>"
	Setup    Setup                 // embedder, store and answerer descriptions for the report
	Terms    func(string) []string // required
	Logger   *slog.Logger
	Progress func(done, total int) // called after every question
	Now      func() time.Time      // clock for the setup date; default time.Now
}

// Harness runs a dataset through indexing and the QA pipeline.
type Harness struct {
	ix  Indexer
	p   Pipeline
	lib Library
	cfg Config
	log *slog.Logger
}

// New wires a harness; its collaborators are the ones the server uses.
func New(ix Indexer, p Pipeline, lib Library, cfg Config) (*Harness, error) {
	if ix == nil || p == nil || lib == nil || cfg.Terms == nil {
		return nil, citebook.Errorf(citebook.EINTERNAL, "eval harness is missing a dependency")
	}
	switch cfg.Scope {
	case "":
		cfg.Scope = ScopeBook
	case ScopeBook, ScopeShared:
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "unknown scope %q (book or shared)", cfg.Scope)
	}
	if cfg.Now == nil {
		cfg.Now = time.Now
	}
	log := cfg.Logger
	if log == nil {
		log = slog.Default()
	}
	return &Harness{ix: ix, p: p, lib: lib, cfg: cfg, log: log}, nil
}

// Hit is one ranked retrieval result as reports show it.
type Hit struct {
	ChunkID   string  `json:"chunk_id"`
	BookID    string  `json:"book_id"`
	Score     float64 `json:"score"`
	PageStart int     `json:"page_start,omitempty"`
	PageEnd   int     `json:"page_end,omitempty"`
	Relevant  bool    `json:"relevant"`
}

// CitationResult is one verified citation and whether the gold supports it.
type CitationResult struct {
	ChunkID    string `json:"chunk_id"`
	BookID     string `json:"book_id"`
	Page       int    `json:"page,omitempty"`
	Quote      string `json:"quote"`
	Pages      []int  `json:"pages,omitempty"` // a quote printed across a page break: the pages it runs over
	OnGoldPage bool   `json:"on_gold_page"`
	Supports   bool   `json:"supports"`
	// SupportsSentence: the quote supports the answer sentence citing it
	// (citation.SupportCheck, checked again here on what was shown).
	SupportsSentence bool `json:"supports_sentence"`
	// Fabricated: the citation names a chunk the answerer was not given, or
	// its quote is not at its offsets in that chunk. Must never happen.
	Fabricated bool `json:"fabricated"`
}

// QuestionResult is everything measured for one question.
type QuestionResult struct {
	ID         string   `json:"id"`
	Question   string   `json:"question"`
	Books      []string `json:"books"`
	Answerable bool     `json:"answerable"`
	Error      string   `json:"error,omitempty"`

	Answer  string `json:"answer"`
	Refused bool   `json:"refused"`
	// Answerability is the pipeline's decision and its reason (why a
	// refusal refused).
	Answerability qa.Answerability `json:"answerability"`
	Guards        qa.Guards        `json:"guards"`
	// Rewrites are the model's keyword rewrites searched beside the
	// question; RewriteError and RerankError say why the model's rewrite
	// or rerank was not used.
	Rewrites     []string `json:"rewrites,omitempty"`
	RewriteError string   `json:"rewrite_error,omitempty"`
	RerankError  string   `json:"rerank_error,omitempty"`
	// StatementsDropped counts the answerer's statements removed for lack
	// of a verified, supporting citation; NotSupported those among them
	// whose real quotes did not support them.
	StatementsDropped int `json:"statements_dropped"`
	NotSupported      int `json:"statements_not_supported"`
	// Rejected lists the answerer's citations that failed verification,
	// with the reason, so a run shows what a model got wrong.
	Rejected []qa.Rejected `json:"rejected,omitempty"`
	// Snapped lists the answerer's quotes not found verbatim that were
	// replaced by the chunk's real text (citation.Snapped).
	Snapped    []citation.Snapped `json:"snapped,omitempty"`
	GoldAnswer string             `json:"gold_answer,omitempty"`
	Citations  []CitationResult   `json:"citations"`

	Relevant   int       `json:"relevant"` // relevant chunks of the question
	GoldPages  []Page    `json:"gold_pages,omitempty"`
	Ranked     []Hit     `json:"ranked"`         // top MaxK by fused score (eval.Rank ties)
	RecallAt   []float64 `json:"recall_at"`      // RecallAt[k-1] = Recall@k, k = 1..MaxK
	PageRecall []float64 `json:"page_recall_at"` // PageRecall[k-1] = Page Recall@k
	MRR        float64   `json:"mrr_at_10"`
	NDCG       float64   `json:"ndcg_at_10"`
	Hit        float64   `json:"hit_at_10"`
	HitAt      []float64 `json:"hit_at"` // HitAt[k-1] = Hit@k

	// Signals rank the same candidates by each retriever alone (and fused).
	Signals map[string]SignalResult `json:"signals,omitempty"`

	ContextTokens int     `json:"context_tokens"`
	Duplication   float64 `json:"context_duplication_rate"`
	LatencyMS     float64 `json:"latency_ms"`
}

// ranked reports whether the question takes part in the ranking metrics.
func (r *QuestionResult) ranked() bool { return r.Error == "" && r.Answerable && r.Relevant > 0 }

// Results is a finished run: the summary and every question.
type Results struct {
	Summary   Summary          `json:"summary"`
	Questions []QuestionResult `json:"questions"`
}

// Run indexes the dataset's books (unchanged ones are skipped by the
// builder) and asks every question through the pipeline.
func (h *Harness) Run(ctx context.Context, ds *Dataset) (*Results, error) {
	tenant := h.cfg.Tenant
	if tenant == "" {
		tenant = "eval-" + ds.Name
	}
	failed := map[string]string{}
	for _, b := range ds.Books {
		res, err := h.ix.Index(ctx, index.BookInput{BookID: b.ID, Title: b.Title, Tenant: tenant, Path: b.Path})
		if err == nil && res != nil && res.Status == string(citebook.VersionFailed) {
			err = citebook.Errorf(citebook.EINTERNAL, "indexing failed: %s", res.Error)
		}
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			h.log.WarnContext(ctx, "eval: book not indexed; its questions are errors", "book", b.ID, "err", err)
			failed[b.ID] = citebook.ErrorMessage(err)
		}
	}

	// Shared scope searches every book of the dataset, named explicitly so
	// other books the tenant may hold in the same library do not count.
	var all []string
	for _, b := range ds.Books {
		all = append(all, b.ID)
	}
	pr := citebook.Principal{Tenant: tenant, User: "eval", Admin: true}
	chunks := newChunkCache(h.lib)
	var qs []Question
	for _, q := range ds.Questions {
		if h.cfg.Scope == ScopeShared && q.BookScopeOnly {
			continue
		}
		qs = append(qs, q)
	}
	out := &Results{Questions: make([]QuestionResult, 0, len(qs))}
	for i, q := range qs {
		if err := ctx.Err(); err != nil {
			return nil, err
		}
		r := QuestionResult{ID: q.ID, Question: q.Question, Books: q.Books, Answerable: q.Answerable,
			GoldAnswer: q.Gold.Answer, GoldPages: q.Gold.Pages, Citations: []CitationResult{}}
		for _, b := range q.Books {
			if msg, ok := failed[b]; ok {
				r.Error = "book " + b + " not indexed: " + msg
			}
		}
		if r.Error == "" {
			if err := h.ask(ctx, pr, q, all, chunks, &r); err != nil {
				if ctx.Err() != nil {
					return nil, ctx.Err()
				}
				h.log.WarnContext(ctx, "eval: question failed", "id", q.ID, "err", err)
				r.Error = citebook.ErrorMessage(err)
			}
		}
		out.Questions = append(out.Questions, r)
		if h.cfg.Progress != nil {
			h.cfg.Progress(i+1, len(qs))
		}
	}
	setup := h.cfg.Setup
	setup.Dataset, setup.Scope, setup.Tenant = ds.Name, h.cfg.Scope, tenant
	setup.Date = h.cfg.Now().UTC().Format(time.RFC3339)
	out.Summary = Summarize(out.Questions, setup)
	return out, nil
}

// ask runs one question and scores it.
func (h *Harness) ask(ctx context.Context, pr citebook.Principal, q Question, all []string, cc *chunkCache, r *QuestionResult) error {
	req := qa.Request{Question: q.Question, BookIDs: all}
	if h.cfg.Scope == ScopeBook {
		req.BookIDs = q.Books
	}
	start := time.Now()
	ans, err := h.p.Ask(ctx, pr, req, nil)
	r.LatencyMS = float64(time.Since(start).Microseconds()) / 1000
	if err != nil {
		return err
	}
	r.Answer, r.Refused = ans.Answer, ans.Refused
	r.Answerability = ans.Trace.Answerability
	r.Guards = ans.Trace.Guards
	r.Rewrites, r.RewriteError, r.RerankError = ans.Trace.Rewrites, ans.Trace.RewriteError, ans.Trace.RerankError
	r.StatementsDropped, r.NotSupported = ans.Trace.Unsupported, ans.Trace.NotSupported
	r.Rejected, r.Snapped = ans.Trace.Rejected, ans.Trace.Snapped
	r.ContextTokens = ans.Trace.ContextTokens

	relevant, err := h.relevant(ctx, q, cc)
	if err != nil {
		return err
	}
	r.Relevant = len(relevant)

	ranked, err := h.rankTrace(ctx, ans.Trace.Retrieved, Signals[0], cc)
	if err != nil {
		return err
	}
	if r.Signals, err = h.scoreSignals(ctx, ans.Trace.Retrieved, q, relevant, cc); err != nil {
		return err
	}
	r.RecallAt = make([]float64, MaxK)
	r.PageRecall = make([]float64, MaxK)
	r.HitAt = make([]float64, MaxK)
	for k := 1; k <= MaxK; k++ {
		r.HitAt[k-1] = HitAtK(ranked, relevant, k)
		r.RecallAt[k-1] = RecallAtK(ranked, relevant, k)
		r.PageRecall[k-1] = PageRecallAtK(ranked, q.Gold.Pages, k)
	}
	r.MRR = MRRAtK(ranked, relevant, MaxK)
	r.NDCG = NDCGAtK(ranked, relevant, MaxK)
	r.Hit = HitAtK(ranked, relevant, MaxK)
	r.Ranked = make([]Hit, 0, MaxK)
	for _, x := range top(ranked, MaxK) {
		r.Ranked = append(r.Ranked, Hit{ChunkID: x.ChunkID, BookID: x.BookID, Score: x.Score,
			PageStart: x.PageStart, PageEnd: x.PageEnd, Relevant: relevant[x.ChunkID]})
	}

	ctxChunks, err := cc.byID(ctx, ans.Trace.Context)
	if err != nil {
		return err
	}
	var toks [][]string
	for _, id := range ans.Trace.Context {
		if c, ok := ctxChunks[id]; ok {
			toks = append(toks, h.cfg.Terms(c.Text))
		}
	}
	r.Duplication = DuplicationRate(toks)

	gold := goldMatcher{pages: map[Page]bool{}, chunks: relevant, terms: h.cfg.Terms}
	for _, p := range q.Gold.Pages {
		gold.pages[p] = true
	}
	if len(q.Gold.Pages) > 0 {
		// Page gold is about pages: a chunk straddling a gold page does
		// not make a quote from its other page supporting.
		gold.chunks = nil
	}
	for _, e := range q.Gold.Evidence {
		gold.evidence = append(gold.evidence, termSet(h.cfg.Terms(e)))
	}
	shown := map[string]bool{}
	for _, id := range ans.Trace.Context {
		shown[id] = true
	}
	var citedIDs []string
	for _, c := range ans.Citations {
		citedIDs = append(citedIDs, c.ChunkID)
	}
	cited, err := cc.byID(ctx, citedIDs)
	if err != nil {
		return err
	}
	sentences := citedSentences(ans.Answer)
	sc := citation.SupportCheck{Content: func(s string) []string { return analysis.ContentTerms(h.cfg.Terms(s)) }}
	for _, c := range ans.Citations {
		onPage := onGoldPage(gold.pages, c)
		cr := CitationResult{ChunkID: c.ChunkID, BookID: c.BookID, Page: c.Page, Pages: c.Pages,
			Quote: c.Quote, OnGoldPage: onPage, Supports: q.Answerable && gold.supports(c, onPage)}
		ch, ok := cited[c.ChunkID]
		cr.Fabricated = !ok || !shown[c.ChunkID] || !quoteAt(ch.Text, c)
		cr.SupportsSentence = !ans.Refused
		for _, st := range sentences[c.N] {
			var quotes []string
			for _, n := range st.cites {
				for _, o := range ans.Citations {
					if o.N == n {
						quotes = append(quotes, o.Quote)
					}
				}
			}
			if ok, _ := sc.Supported(st.text, quotes); !ok {
				cr.SupportsSentence = false
			}
		}
		if len(sentences[c.N]) == 0 {
			cr.SupportsSentence = false // shown but cited by no sentence
		}
		r.Citations = append(r.Citations, cr)
	}
	return nil
}

// citedSentence is one sentence of a shown answer and the citation
// numbers after it.
type citedSentence struct {
	text  string
	cites []int
}

var citedRun = regexp.MustCompile(`((?:\s*\[\d+\])+)`)

// citedSentences splits an answer rendered by citation.Verify ("text [1]
// [2] text [3]") into sentences by citation number.
func citedSentences(answer string) map[int][]citedSentence {
	out := map[int][]citedSentence{}
	rest := answer
	for {
		loc := citedRun.FindStringIndex(rest)
		if loc == nil {
			return out
		}
		text := rest[:loc[0]]
		if i := strings.LastIndex(text, "\n\n"); i >= 0 {
			text = text[i+2:] // a lead paragraph ("The book covers this in …:") is no statement
		}
		st := citedSentence{text: strings.TrimSpace(text)}
		for _, m := range regexp.MustCompile(`\d+`).FindAllString(rest[loc[0]:loc[1]], -1) {
			n, _ := strconv.Atoi(m)
			st.cites = append(st.cites, n)
		}
		for _, n := range st.cites {
			out[n] = append(out[n], st)
		}
		rest = rest[loc[1]:]
	}
}

// quoteAt checks a shown citation against its chunk independently of the
// verifier: the offsets lie inside the text and the quote's first part is
// what the text holds there (the quote's parts are joined with " … ").
func quoteAt(text string, c citebook.Citation) bool {
	if c.CharStart < 0 || c.CharEnd > len(text) || c.CharStart >= c.CharEnd {
		return false
	}
	// Every part of a quote shortened with " … " (the answerer's ellipsis,
	// or a snapped quote's pieces) is the book's text, in order, from the
	// start to the end offset.
	parts := strings.Split(c.Quote, " … ")
	span := text[c.CharStart:c.CharEnd]
	if !strings.HasPrefix(span, parts[0]) || !strings.HasSuffix(span, parts[len(parts)-1]) {
		return false
	}
	for _, p := range parts {
		i := strings.Index(span, p)
		if i < 0 {
			return false
		}
		span = span[i+len(p):]
	}
	return true
}

// rankTrace turns the trace's candidates into the ranked list the metrics
// read: one entry per chunk (its best score over sub-queries; candidates the
// score leaves out as NaN are dropped), ordered by Rank, with page ranges
// from the metadata DB. Candidates the signal places ahead are scored
// above every other, best place highest.
func (h *Harness) rankTrace(ctx context.Context, hits []qa.TraceHit, s Signal, cc *chunkCache) ([]Ranked, error) {
	best := map[string]Ranked{}
	place := map[string]int{}
	for _, th := range hits {
		if s.ahead != nil {
			if p := s.ahead(th); p > 0 && (place[th.ChunkID] == 0 || p < place[th.ChunkID]) {
				place[th.ChunkID] = p
			}
		}
		sc := s.score(th)
		if math.IsNaN(sc) {
			continue
		}
		if b, ok := best[th.ChunkID]; !ok || sc > b.Score {
			best[th.ChunkID] = Ranked{ChunkID: th.ChunkID, BookID: th.BookID, Score: sc, PageStart: th.Page}
		}
	}
	if len(place) > 0 {
		top, last := 0.0, 0
		for id, r := range best {
			if place[id] == 0 {
				top = max(top, r.Score)
			}
		}
		for _, p := range place {
			last = max(last, p)
		}
		for _, th := range hits {
			if p := place[th.ChunkID]; p > 0 {
				r := best[th.ChunkID]
				r.ChunkID, r.BookID, r.PageStart = th.ChunkID, th.BookID, th.Page
				r.Score = top + 1 + float64(last-p)
				best[th.ChunkID] = r
			}
		}
	}
	rs := make([]Ranked, 0, len(best))
	for _, r := range best {
		rs = append(rs, r)
	}
	rs = Rank(rs)
	ids := make([]string, 0, MaxK)
	for _, x := range top(rs, MaxK) {
		ids = append(ids, x.ChunkID)
	}
	got, err := cc.byID(ctx, ids)
	if err != nil {
		return nil, err
	}
	for i := range rs[:len(ids)] {
		if c, ok := got[rs[i].ChunkID]; ok {
			rs[i].PageStart, rs[i].PageEnd = c.PageStart, c.PageEnd
		}
	}
	return rs, nil
}

// relevant resolves a question's gold into chunk IDs (see Gold for the
// order of precedence). Page gold marks every chunk whose page range covers
// a gold page: the honest unit when the gold names pages, not passages.
func (h *Harness) relevant(ctx context.Context, q Question, cc *chunkCache) (map[string]bool, error) {
	rel := map[string]bool{}
	if !q.Answerable {
		return rel, nil
	}
	g := q.Gold
	if len(g.ChunkIDs) > 0 {
		for _, id := range g.ChunkIDs {
			rel[id] = true
		}
		return rel, nil
	}
	if len(g.Pages) > 0 {
		for _, p := range g.Pages {
			cs, err := cc.book(ctx, p.BookID)
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				if c.PageStart > 0 && c.PageStart <= p.Page && p.Page <= max(c.PageEnd, c.PageStart) {
					rel[c.ID] = true
				}
			}
		}
		return rel, nil
	}
	if g.WholeBook {
		for _, b := range q.Books {
			cs, err := cc.book(ctx, b)
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				rel[c.ID] = true
			}
		}
		return rel, nil
	}
	for _, e := range g.Evidence {
		want := termSet(h.cfg.Terms(e))
		if len(want) == 0 {
			continue
		}
		for _, b := range q.Books {
			cs, err := cc.book(ctx, b)
			if err != nil {
				return nil, err
			}
			for _, c := range cs {
				if cover(want, termSet(h.cfg.Terms(c.Text))) >= evidenceCover {
					rel[c.ID] = true
				}
			}
		}
	}
	return rel, nil
}

// goldMatcher decides whether a citation supports the gold (ALCE-style
// precision with gold matching in place of NLI).
type goldMatcher struct {
	pages    map[Page]bool
	chunks   map[string]bool // gold chunks when the gold is not pages
	evidence []map[string]bool
	terms    func(string) []string
}

// onGoldPage reports whether a citation points the reader at a gold page.
// A quote printed across a page break is cited as the pages it runs over
// ("pp. 120–121"); a reader who turns to them finds the gold page among
// them, so it counts as on the gold page when any of its pages is one. A
// quote covers at most a few consecutive sentences of one chunk, so this
// widens a citation by a page break, never to a chapter.
func onGoldPage(gold map[Page]bool, c citebook.Citation) bool {
	if gold[Page{BookID: c.BookID, Page: c.Page}] {
		return true
	}
	for _, p := range c.Pages {
		if gold[Page{BookID: c.BookID, Page: p}] {
			return true
		}
	}
	return false
}

func (g goldMatcher) supports(c citebook.Citation, onPage bool) bool {
	if onPage || g.chunks[c.ChunkID] {
		return true
	}
	q := termSet(g.terms(c.Quote))
	if len(q) == 0 {
		return false
	}
	for _, e := range g.evidence {
		if cover(q, e) >= quoteOverlap {
			return true
		}
	}
	return false
}

func termSet(ts []string) map[string]bool {
	m := make(map[string]bool, len(ts))
	for _, t := range ts {
		m[t] = true
	}
	return m
}

// cover is the share of want's terms present in have.
func cover(want, have map[string]bool) float64 {
	if len(want) == 0 {
		return 0
	}
	n := 0
	for t := range want {
		if have[t] {
			n++
		}
	}
	return float64(n) / float64(len(want))
}

// chunkCache keeps each book's served chunks, read once per run.
type chunkCache struct {
	lib   Library
	books map[string][]citebook.Chunk
	ids   map[string]citebook.Chunk
}

func newChunkCache(lib Library) *chunkCache {
	return &chunkCache{lib: lib, books: map[string][]citebook.Chunk{}, ids: map[string]citebook.Chunk{}}
}

// book returns the chunks of a book's active version.
func (c *chunkCache) book(ctx context.Context, id string) ([]citebook.Chunk, error) {
	if cs, ok := c.books[id]; ok {
		return cs, nil
	}
	b, err := c.lib.Book(ctx, id)
	if err != nil {
		return nil, err
	}
	cs, err := c.lib.ChunksAt(ctx, id, b.Active)
	if err != nil {
		return nil, err
	}
	c.books[id] = cs
	for _, ch := range cs {
		c.ids[ch.ID] = ch
	}
	return cs, nil
}

// byID returns the named chunks that are served, by ID.
func (c *chunkCache) byID(ctx context.Context, ids []string) (map[string]citebook.Chunk, error) {
	out := make(map[string]citebook.Chunk, len(ids))
	var missing []string
	for _, id := range ids {
		if ch, ok := c.ids[id]; ok {
			out[id] = ch
		} else {
			missing = append(missing, id)
		}
	}
	if len(missing) == 0 {
		return out, nil
	}
	got, err := c.lib.ChunksByID(ctx, missing)
	if err != nil {
		return nil, err
	}
	for _, ch := range got {
		c.ids[ch.ID] = ch
		out[ch.ID] = ch
	}
	return out, nil
}

// Summary is the public JSON contract of a run (`citebook eval --json`):
// keys are stable, values are averages over the questions each metric
// applies to (see the package documentation).
type Summary struct {
	Questions    int `json:"questions"`
	Answerable   int `json:"answerable"`
	Unanswerable int `json:"unanswerable"`
	Ranked       int `json:"ranked_questions"` // answerable questions with relevant chunks
	PageGold     int `json:"page_questions"`   // answerable questions with gold pages
	Errors       int `json:"errors"`

	RecallAtK            map[string]float64 `json:"recall_at_k"`
	RecallCurve          []float64          `json:"recall_curve"` // Recall@1..10
	MRRAt10              float64            `json:"mrr_at_10"`
	NDCGAt10             float64            `json:"ndcg_at_10"`
	HitRate              float64            `json:"hit_rate"` // hit@10
	HitAtK               map[string]float64 `json:"hit_at_k"`
	PageRecallAtK        map[string]float64 `json:"page_recall_at_k"`
	CitationPageAccuracy float64            `json:"citation_page_accuracy"`
	CitationPrecision    float64            `json:"citation_precision"`
	CitationRecall       float64            `json:"citation_recall"`
	RefusalAccuracy      float64            `json:"refusal_accuracy"`
	AnsweredCoverage     float64            `json:"answered_coverage"`
	// GoldAnswerHeld: answered questions with a gold answer whose answer
	// holds it word for word (analysis.Fold of both), over GoldAnswered of
	// them; for span datasets (CMRC) it is the answer's exact match.
	GoldAnswerHeld     float64            `json:"gold_answer_held"`
	GoldAnswered       int                `json:"gold_answer_questions"`
	LatencyMS          map[string]float64 `json:"latency_ms"`
	ContextDuplication float64            `json:"context_duplication_rate"`
	TokensPerQuestion  float64            `json:"tokens_per_question"` // context tokens given to the answerer
	// Signals are the ranking metrics of each retriever alone beside the
	// fused ranking, from the same run (see Signals).
	Signals map[string]SignalSummary `json:"signals"`

	// Support metrics, over every citation shown: the quote supports the
	// sentence citing it and, when the question has page gold, lies on a
	// gold page (supported-citation precision); citations whose quote does
	// not support their sentence; citations not in the context or not at
	// their offsets (fabricated; must be 0).
	SupportedCitationPrecision float64 `json:"supported_citation_precision"`
	CitationsShown             int     `json:"citations_shown"`
	UnsupportedCitationsShown  int     `json:"unsupported_citations_shown"`
	FabricatedCitationsShown   int     `json:"fabricated_citations_shown"`
	// StatementsDropped: answer sentences removed for lack of a verified,
	// supporting citation; NotSupported: of those, sentences whose real
	// quote did not support them.
	StatementsDropped int `json:"statements_dropped"`
	NotSupported      int `json:"statements_not_supported"`
	// RefusalReasons counts refusals by the pipeline's reason code.
	RefusalReasons map[string]int `json:"refusal_reasons"`
	// RejectedCitations counts the answerer's citations that failed
	// verification, by reason (quote_not_found, not_in_context, …).
	RejectedCitations map[string]int `json:"rejected_citations"`
	Guards            GuardCounts    `json:"guards"`
	Setup             Setup          `json:"setup"`
}

// GuardCounts adds up how often each guardrail around the model fired.
type GuardCounts struct {
	ModelCalls         int `json:"model_calls"`
	ConstrainedRetries int `json:"constrained_retries"`
	FallbackExtractive int `json:"fallback_extractive"`
	FallbackRefusal    int `json:"fallback_refusal"`
	ExampleEchoes      int `json:"example_echoes"`
	ModelErrors        int `json:"model_errors"`
	// ModelAnswers: answers shown that are the model's own (it was
	// called, no fallback stood in, not refused).
	ModelAnswers int `json:"model_answers"`
	// QuotesSnapped: quotes not found verbatim replaced by the chunk's
	// real text; SnappedKept: those whose statement then passed the
	// support check; SnappedShown: those shown in a model's own answer.
	// Quotes left rejected are RejectedCitations["quote_not_found"].
	QuotesSnapped int `json:"quotes_snapped"`
	SnappedKept   int `json:"snapped_kept"`
	SnappedShown  int `json:"snapped_shown"`
	// RerankFailures and RewriteFailures count questions whose model
	// rerank or rewrite was ignored (the fused order or the question
	// alone stood).
	RerankFailures  int `json:"rerank_failures,omitempty"`
	RewriteFailures int `json:"rewrite_failures,omitempty"`
}

// Summarize averages per-question results; questions that errored count
// only in Errors.
func Summarize(rs []QuestionResult, setup Setup) Summary {
	s := Summary{Questions: len(rs), RecallAtK: map[string]float64{}, PageRecallAtK: map[string]float64{},
		RecallCurve: make([]float64, MaxK), LatencyMS: map[string]float64{}, HitAtK: map[string]float64{},
		Setup: setup, Signals: summarizeSignals(rs), RefusalReasons: map[string]int{}, RejectedCitations: map[string]int{}}
	supported := 0
	var (
		lat                                          []float64
		pageQ, citePageQ, precQ                      int
		citePageSum, precSum                         float64
		recallHits, refused, answered, goldHeld, all int
		dupSum, tokSum                               float64
	)
	for i := range rs {
		r := &rs[i]
		if r.Error != "" {
			s.Errors++
			continue
		}
		all++
		lat = append(lat, r.LatencyMS)
		s.StatementsDropped += r.StatementsDropped
		s.NotSupported += r.NotSupported
		for _, x := range r.Rejected {
			s.RejectedCitations[string(x.Reason)]++
		}
		g := r.Guards
		s.Guards.ModelCalls += g.Attempts
		if g.Retried {
			s.Guards.ConstrainedRetries++
		}
		switch g.Fallback {
		case "extractive":
			s.Guards.FallbackExtractive++
		case "refusal":
			s.Guards.FallbackRefusal++
		}
		if g.ModelError != "" {
			s.Guards.ModelErrors++
		}
		s.Guards.ExampleEchoes += g.ExampleEchoes
		own := g.Attempts > 0 && g.Fallback == "" && !r.Refused
		if own {
			s.Guards.ModelAnswers++
		}
		for _, sn := range r.Snapped {
			s.Guards.QuotesSnapped++
			if sn.Kept {
				s.Guards.SnappedKept++
				if own {
					s.Guards.SnappedShown++
				}
			}
		}
		if r.RerankError != "" {
			s.Guards.RerankFailures++
		}
		if r.RewriteError != "" {
			s.Guards.RewriteFailures++
		}
		if r.Refused {
			code := r.Answerability.Code
			if code == "" {
				code = "unknown"
			}
			s.RefusalReasons[code]++
		}
		for _, c := range r.Citations {
			s.CitationsShown++
			if c.Fabricated {
				s.FabricatedCitationsShown++
			}
			if !c.SupportsSentence {
				s.UnsupportedCitationsShown++
			}
			if c.SupportsSentence && !c.Fabricated && (len(r.GoldPages) == 0 || c.OnGoldPage) {
				supported++
			}
		}
		dupSum += r.Duplication
		tokSum += float64(r.ContextTokens)
		if !r.Answerable {
			s.Unanswerable++
			if r.Refused {
				refused++
			}
			continue
		}
		s.Answerable++
		if !r.Refused {
			answered++
			if g := analysis.Fold(r.GoldAnswer); g != "" {
				s.GoldAnswered++
				if strings.Contains(analysis.Fold(r.Answer), g) {
					goldHeld++
				}
			}
		}
		if r.ranked() {
			s.Ranked++
			for k := 0; k < MaxK; k++ {
				s.RecallCurve[k] += r.RecallAt[k]
			}
			s.MRRAt10 += r.MRR
			s.NDCGAt10 += r.NDCG
			s.HitRate += r.Hit
			for _, k := range Ks {
				if len(r.HitAt) >= k {
					s.HitAtK[strconv.Itoa(k)] += r.HitAt[k-1]
				}
			}
		}
		if len(r.GoldPages) > 0 {
			pageQ++
			for _, k := range Ks {
				s.PageRecallAtK[strconv.Itoa(k)] += r.PageRecall[k-1]
			}
		}
		supporting := 0
		onPage := 0
		for _, c := range r.Citations {
			if c.Supports {
				supporting++
			}
			if c.OnGoldPage {
				onPage++
			}
		}
		if len(r.Citations) > 0 {
			precQ++
			precSum += float64(supporting) / float64(len(r.Citations))
			if len(r.GoldPages) > 0 {
				citePageQ++
				citePageSum += float64(onPage) / float64(len(r.Citations))
			}
		}
		if !r.Refused && supporting > 0 {
			recallHits++
		}
	}
	if s.Ranked > 0 {
		n := float64(s.Ranked)
		for k := range s.RecallCurve {
			s.RecallCurve[k] /= n
		}
		s.MRRAt10 /= n
		s.NDCGAt10 /= n
		s.HitRate /= n
		for k, v := range s.HitAtK {
			s.HitAtK[k] = v / n
		}
	}
	s.PageGold = pageQ
	for _, k := range Ks {
		s.RecallAtK[strconv.Itoa(k)] = s.RecallCurve[k-1]
		if pageQ > 0 {
			s.PageRecallAtK[strconv.Itoa(k)] /= float64(pageQ)
		} else {
			s.PageRecallAtK[strconv.Itoa(k)] = 0
		}
	}
	s.CitationPageAccuracy = ratio(citePageSum, citePageQ)
	s.CitationPrecision = ratio(precSum, precQ)
	s.CitationRecall = ratio(float64(recallHits), s.Answerable)
	s.RefusalAccuracy = ratio(float64(refused), s.Unanswerable)
	s.AnsweredCoverage = ratio(float64(answered), s.Answerable)
	s.GoldAnswerHeld = ratio(float64(goldHeld), s.GoldAnswered)
	s.LatencyMS["p50"] = Percentile(lat, 50)
	s.LatencyMS["p95"] = Percentile(lat, 95)
	s.ContextDuplication = ratio(dupSum, all)
	s.TokensPerQuestion = ratio(tokSum, all)
	s.SupportedCitationPrecision = ratio(float64(supported), s.CitationsShown)
	return s
}

func ratio(sum float64, n int) float64 {
	if n == 0 {
		return 0
	}
	return sum / float64(n)
}

// failuresFirst orders results for reading: errors, then wrong refusals and
// missed retrievals, then the rest, each by ID.
func failuresFirst(rs []QuestionResult) []QuestionResult {
	out := append([]QuestionResult(nil), rs...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := severity(&out[i]), severity(&out[j])
		if a != b {
			return a > b
		}
		return out[i].ID < out[j].ID
	})
	return out
}

// severity ranks how badly a question went: 3 error, 2 wrong refusal
// behaviour, 1 nothing relevant in the top 10, 0 fine.
func severity(r *QuestionResult) int {
	switch {
	case r.Error != "":
		return 3
	case r.Answerable == r.Refused:
		return 2
	case r.ranked() && r.Hit == 0:
		return 1
	}
	return 0
}
