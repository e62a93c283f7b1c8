package library

import (
	"context"
	"encoding/json"
	"log/slog"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/qa"
)

// Deps are the answering pipeline's dependencies over the library —
// retrieval through the follower, so books another process changed are
// seen — without an answerer; Pipeline adds the configured one, tests
// their own.
func (l *Library) Deps() qa.Deps {
	deps := qa.Deps{
		Embedder: l.Embed,
		Vectors:  index.FreshVectors{VectorStore: l.Vectors, F: l.Follow},
		Lexical:  index.FreshLexical{LexicalIndex: l.Lexical, F: l.Follow},
		Library:  cachedEmbedding{l.Meta, l.embedding},
		Access:   l.ACL,
		Terms:    analysis.Terms,
		EachTerm: analysis.EachTerm,
		Books:    l.Meta,
		Begin:    l.Follow.Begin,
		Logger:   l.Log,
		Geometry: l.Meta,
		Scripts:  analysis.NewScripts(),
	}
	// The follower's wrapper hides the lexical index's term statistics, by
	// which answerability weighs a question's terms; hand them over as
	// such (searches sync before the statistics are read).
	if s, ok := l.Lexical.(qa.TermStats); ok {
		deps.Stats = s
	}
	// Candidates' terms as indexed, read instead of segmenting their texts
	// again on each search. No sync needed: a chunk the index does not
	// hold as the search returned it is segmented.
	if s, ok := l.Lexical.(qa.ChunkTerms); ok {
		deps.ChunkTerms = s
	}
	if mem, ok := l.Vectors.(index.ChunkReader); ok {
		// The embedded store holds every chunk whole: book routing reads
		// them from memory instead of decoding them from SQLite.
		deps.Books = index.FreshBooks{Memory: mem, Meta: l.Meta, F: l.Follow}
	}
	if tok, err := ingest.NewTokenizer(); err == nil {
		deps.Tokens = tok
	} else {
		l.Log.Warn("tokenizer unavailable; estimating context tokens", "err", err)
	}
	return deps
}

// cachedEmbedding is the metadata with the embedding version read through
// the library's cache (index.EmbeddingCache), which every search checks.
type cachedEmbedding struct {
	*metadb.DB
	cache *index.EmbeddingCache
}

func (c cachedEmbedding) EmbeddingVersion(ctx context.Context) (citebook.EmbeddingVersion, bool, error) {
	return c.cache.EmbeddingVersion(ctx)
}

// Pipeline wires the answering pipeline the configuration describes: the
// extractive answerer, or a model (with the extractive one as fallback and
// the model as planner), the optional rerank endpoint and the thresholds.
func (l *Library) Pipeline() (*qa.Pipeline, error) {
	c := l.Config
	deps := l.Deps()
	if err := c.checkLLMFor(); err != nil {
		return nil, err
	}
	deps.Answerer = qa.NewExtractive(analysis.Terms)
	switch c.LLM.Provider {
	case "", LLMNone:
	case "openai", "ollama":
		m, err := qa.OpenModel(c.LLM)
		if err != nil {
			return nil, err
		}
		if c.usesLLM(LLMAnswer) {
			deps.Answerer = qa.NewLLMAnswerer(m, c.Answerer()).Constrain(c.LLM).Timeout(c.LLM.Timeout)
			deps.Fallback = qa.NewExtractive(analysis.Terms)
		}
		if deps.Planner, err = qa.NewLLMPlanner(c.LLM); err != nil {
			return nil, err
		}
		if c.usesLLM(LLMRerank) && c.Rerank.URL == "" {
			if deps.Reranker, err = qa.NewLLMReranker(c.LLM, c.Rerank.LLM); err != nil {
				return nil, err
			}
		}
		if c.usesLLM(LLMRewrite) {
			if deps.Rewriter, err = qa.NewLLMRewriter(c.LLM); err != nil {
				return nil, err
			}
		}
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "unknown --llm %q (none, openai or ollama)", c.LLM.Provider)
	}
	if c.Rerank.URL != "" {
		deps.Reranker = qa.NewHTTPReranker(c.Rerank.URL, c.Rerank.Model, c.Rerank.Key, nil)
	}
	opts := c.Answer
	if c.Fusion != "" {
		// Weights given as JSON replace fields of the embedder kind's default.
		opts.Fusion = qa.DefaultFusion(qa.EmbedderKind(deps.Embedder.Version()))
		dec := json.NewDecoder(strings.NewReader(c.Fusion))
		dec.DisallowUnknownFields()
		if err := dec.Decode(&opts.Fusion); err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "bad --fusion %q", c.Fusion)
		}
	}
	return qa.NewPipeline(deps, opts)
}

// OpenAnswering opens the library and wires its pipeline, the start every
// answering command (ask, serve, eval) shares. The caller closes the
// library; on error nothing is left open.
func OpenAnswering(ctx context.Context, c Config, log *slog.Logger) (*Library, *qa.Pipeline, error) {
	l, err := Open(ctx, c, log)
	if err != nil {
		return nil, nil, err
	}
	p, err := l.Pipeline()
	if err != nil {
		l.Close()
		return nil, nil, err
	}
	return l, p, nil
}
