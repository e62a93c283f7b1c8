// Package qa answers a principal's question from the books it may read:
// sub-queries, retrieval inside the ACL filter, hybrid fusion, thresholding,
// parent expansion, reranking within a token budget, an answerer, and
// citation verification. It knows nothing of HTTP.
package qa

import (
	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
)

// Request is one question. BookIDs narrows the search to some books the
// principal may read; empty means all of them.
type Request struct {
	Question string   `json:"question"`
	BookIDs  []string `json:"book_ids,omitempty"`
	K        int      `json:"k,omitempty"`         // chunks in the context; 0 means the pipeline default
	Split    bool     `json:"split,omitempty"`     // ask the model for 1–5 sub-queries (needs a model)
	MinScore float64  `json:"min_score,omitempty"` // 0 means the pipeline default threshold
}

// Answer is what a reader gets: text whose [n] markers refer to Citations, or
// a refusal when nothing in the books could be verified.
type Answer struct {
	Answer    string              `json:"answer"`
	Refused   bool                `json:"refused"`
	Citations []citebook.Citation `json:"citations"`
	Trace     Trace               `json:"trace"`
}

// SearchResult is retrieval for one sub-query, kept apart so tools calling
// retrieval see which query found what.
type SearchResult struct {
	Query string         `json:"query"`
	Hits  []citebook.Hit `json:"hits"`
}

// Trace explains an answer to an operator or an evaluator: what was searched,
// found, dropped, given to the model, and which citations were rejected.
// It never holds text the principal may not read.
type Trace struct {
	Question   string   `json:"question"`
	SubQueries []string `json:"sub_queries"`
	// BookNames are the question's words that name a book searched and
	// that the book holds only on its title pages ("Thoreau" of Walden):
	// they route the question but are left out of its search and of the
	// answerability check (see bookNames).
	BookNames []string `json:"book_names,omitempty"`
	// Respelled are the question's words searched in the books' spelling
	// ("neighbouring → neighboring", see respell) or script ("編譯 →
	// 编译", see rescript).
	Respelled     []string              `json:"respelled,omitempty"`
	Expanded      []string              `json:"expanded,omitempty"`      // the queries searched, when the books' definitions added to them
	Forms         []map[string][]string `json:"forms,omitempty"`         // per sub-query (as SubQueries), the other forms of its words its keyword search matched, by term
	TitleQueries  []string              `json:"title_queries,omitempty"` // searches for the pages of the statements a question names (see DefaultStatements)
	Books         []BookScore           `json:"books,omitempty"`         // books ranked by their metadata, when the scope has several
	Period        string                `json:"period,omitempty"`        // the period the question asks about ("Q2 FY2024"), which ranks filings by the period their covers state
	Retrieved     []TraceHit            `json:"retrieved"`
	Dropped       []Dropped             `json:"dropped,omitempty"`
	Context       []string              `json:"context"` // chunk IDs given to the answerer, in order
	ContextTokens int                   `json:"context_tokens"`
	Model         string                `json:"model"`
	PromptTokens  int                   `json:"prompt_tokens,omitempty"`
	OutputTokens  int                   `json:"output_tokens,omitempty"`
	TimingsMS     map[string]float64    `json:"timings_ms"`
	Rejected      []Rejected            `json:"rejected,omitempty"`
	// Snapped lists the quotes not found verbatim that were replaced by
	// the chunk's real text before the support check (citation.Snapped).
	Snapped      []citation.Snapped `json:"snapped,omitempty"`
	Statements   int                `json:"statements"`    // statements the answerer made
	Unsupported  int                `json:"unsupported"`   // statements dropped for lack of a verified, supporting citation
	NotSupported int                `json:"not_supported"` // of those, statements whose real quotes did not support them
	NothingFound bool               `json:"nothing_relevant,omitempty"`
	// Answerability is the decision to answer or refuse, with its reason.
	Answerability Answerability `json:"answerability"`
	// Guards records what the guardrails around the model did.
	Guards Guards `json:"guards"`

	// Rewrites are the model's keyword rewrites of the question, searched
	// beside it (see rewrite): with SubQueries, the queries actually
	// searched. RewriteError says why there are none when the model was
	// asked and failed.
	Rewrites     []string `json:"rewrites,omitempty"`
	RewriteError string   `json:"rewrite_error,omitempty"`
	// RerankError says why the reranker's order was not used and the fused
	// order stood: a failed call, a malformed or out-of-range reply.
	RerankError string `json:"rerank_error,omitempty"`
}

// Guards records the guardrails that fired on one answer, so evaluation
// can count them: model calls, the constrained retry after a malformed
// reply, the fallback taken when the model gave nothing usable, and
// statements dropped for repeating the prompt's example.
type Guards struct {
	Attempts      int    `json:"model_attempts,omitempty"`
	Retried       bool   `json:"constrained_retry,omitempty"`
	FirstError    string `json:"first_error,omitempty"`
	ModelError    string `json:"model_error,omitempty"`
	Fallback      string `json:"fallback,omitempty"` // extractive or refusal
	ExampleEchoes int    `json:"example_echoes,omitempty"`
}

// TraceHit is one retrieved chunk with the scores that ranked it.
type TraceHit struct {
	ChunkID     string  `json:"chunk_id"`
	BookID      string  `json:"book_id"`
	ParentID    string  `json:"parent_id"`
	Page        int     `json:"page,omitempty"`
	Query       int     `json:"query"` // index into SubQueries
	VectorScore float64 `json:"vector_score"`
	VectorRank  int     `json:"vector_rank,omitempty"` // 1-based; 0 when not found by vectors
	LexRank     int     `json:"lexical_rank,omitempty"`
	Fused       float64 `json:"fused"`
	Rerank      float64 `json:"rerank,omitempty"`
	// RerankRank is the passage's place after reranking (1-based), the
	// order the context is taken in; 0 when it was not reranked.
	RerankRank int `json:"rerank_rank,omitempty"`
	// Kept says the candidate passed the relevance threshold: what Search
	// returns and the context is taken from, in fused order.
	Kept bool `json:"kept,omitempty"`
}

// Dropped records a retrieved chunk that did not reach the context, and why
// (below_threshold, contents: a table of contents, duplicate_passage,
// below_k, over_budget).
type Dropped struct {
	ChunkID string `json:"chunk_id"`
	Reason  string `json:"reason"`
}

// Rejected is a citation the answerer produced that failed verification
// (unknown_chunk, not_in_context, quote_not_found, quote_too_short); the
// type lives in citation, which decides it.
type Rejected = citation.Rejection
