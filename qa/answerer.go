package qa

import (
	"context"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
)

// Statement is one sentence of a draft answer with the citations meant to
// support it; the type lives in citation, which verifies it.
type Statement = citation.Statement

// Claim is one citation of a statement: a chunk ID and a verbatim quote.
type Claim = citation.Claim

// ContextChunk is one chunk handed to an answerer, with what it needs to
// present it: the book's title and the rank of the passage it belongs to.
type ContextChunk struct {
	Chunk     citebook.Chunk
	BookTitle string
	Rank      int  // 1-based rank of the passage after reranking (the builtin reranker's evidence order lists passages out of it: see evidenceOrder)
	Retrieved int  // 1-based rank of the passage in the fused retrieval order (0: unknown)
	Primary   bool // retrieved itself rather than added as a neighbour
	// Lead is the passage's fused score as a share of the best fused score
	// of its query (1 for the first; 0: unknown), so the extractive answer
	// can tell a near tie from a clear first (see passageDiscount).
	Lead float64
}

// Draft is an answerer's unverified answer. Nothing in it reaches a reader
// before citation.Verify has checked every citation.
type Draft struct {
	Statements   []Statement
	Model        string
	PromptTokens int
	OutputTokens int
	// Attempts is how many model calls it took; Retried marks a constrained
	// retry after FirstError; ExampleEchoes counts statements dropped for
	// repeating the prompt's example.
	Attempts      int
	Retried       bool
	FirstError    string
	ExampleEchoes int
}

// Answerer writes a draft answer from the context chunks alone. The LLM and
// the extractive answerer both implement it so the pipeline and its
// verification do not depend on which one is configured.
type Answerer interface {
	Answer(ctx context.Context, question string, context []ContextChunk) (Draft, error)
}

// WeightedAnswerer is an Answerer that can use what the pipeline knows of
// the question's key terms (their IDF over the scope searched, the
// vocabulary's other names for them) instead of guessing from the context;
// the extractive answerer is one.
type WeightedAnswerer interface {
	AnswerWeighted(ctx context.Context, question string, context []ContextChunk, ev Evidence) (Draft, error)
}

// Evidence is the pipeline's knowledge of a question's key terms.
type Evidence struct {
	// Weights maps the key terms to their IDF in scope; nil: unknown.
	Weights map[string]float64
	// Aliases are the other names of the phrases the question names from
	// the vocabulary (Options.Synonyms): a text holding an alias holds the
	// question's phrase ("Purchases of property, plant and equipment" is
	// the cash flow statement's line for "capital expenditure").
	Aliases []Alias
}

// Alias says that a text holding every one of Phrase's terms holds Terms,
// the question's terms of the phrase it names.
type Alias struct {
	Terms  []string
	Phrase []string
}
