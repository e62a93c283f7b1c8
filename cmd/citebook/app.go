package main

import (
	"context"
	"encoding/json"
	"io"
	"os"

	"github.com/spf13/pflag"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/qa"
)

// Every command reads its settings into one library.Config: the defaults
// and the environment (library.FromEnv), then its flags, each bound to a
// field, so a flag's help shows the default the Config holds and flags win
// over environment variables, which win over defaults.

// defaultTenant is the tenant every command's --tenant names unless told
// otherwise, and the one zero-config mode serves.
const defaultTenant = "default"

// newConfig is the configuration before flags: defaults and environment.
func newConfig() *library.Config {
	c := library.FromEnv(os.Getenv)
	return &c
}

// addDataFlag registers --data, the one flag every command has, and --meta,
// where the library's metadata lives when not in the data dir.
func addDataFlag(fs *pflag.FlagSet, c *library.Config) {
	fs.StringVar(&c.Data, "data", c.Data, "library directory (env CITEBOOK_DATA)")
	// A URL from the environment may hold a password: it is used but never
	// shown as the flag's default in --help.
	envMeta := c.Meta
	fs.StringVar(&c.Meta, "meta", "", "metadata database: a postgres:// URL shared by several servers; prefer env CITEBOOK_META for one with a password, flags show in ps (default citebook.db in --data)")
	c.Meta = envMeta
}

// openExistingMeta opens the metadata database of a library that is there:
// the commands that read or manage a library (jobs, grants) refuse a
// missing one instead of creating it.
func openExistingMeta(ctx context.Context, c library.Config) (*metadb.DB, error) {
	if !libraryExists(c) {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "no library at %s (index a book first)", c.Data)
	}
	return library.OpenMeta(ctx, c)
}

// libraryExists reports whether c names a library that is there: a shared
// metadata database (--meta), or the SQLite file in the data directory.
func libraryExists(c library.Config) bool {
	if c.Meta != "" {
		return true
	}
	_, err := os.Stat(c.MetaPath())
	return err == nil
}

// addLibraryFlags registers the flags of every command that opens the
// library: where it lives, the vector store, the embedder and parsing.
func addLibraryFlags(fs *pflag.FlagSet, c *library.Config) {
	addDataFlag(fs, c)
	fs.StringVar(&c.Store, "store", c.Store, "vector store: embedded or milvus")
	fs.StringVar(&c.Milvus.Addr, "milvus-addr", c.Milvus.Addr, "Milvus address host:port (env MILVUS_ADDR)")
	fs.StringVar(&c.Milvus.Collection, "milvus-collection", c.Milvus.Collection, "Milvus collection")
	fs.StringVar(&c.Embed.Provider, "embedder", c.Embed.Provider, "embedder: builtin, openai or ollama (key in env CITEBOOK_EMBED_KEY)")
	fs.StringVar(&c.Embed.BaseURL, "embed-url", c.Embed.BaseURL, "embedding API base URL (openai, ollama)")
	fs.StringVar(&c.Embed.Model, "embed-model", c.Embed.Model, "embedding model name")
	fs.StringVar(&c.Embed.QueryModel, "embed-query-model", c.Embed.QueryModel, "model name for embedding questions (default: --embed-model)")
	fs.IntVar(&c.Embed.BatchSize, "embed-batch", c.Embed.BatchSize, "texts per embedding request; lower it for slow CPU servers")
	fs.DurationVar(&c.ParseTimeout, "parse-timeout", c.ParseTimeout, "longest a book may take to parse before its job fails (default "+
		ingest.DefaultLimits().Timeout.String()+", "+ingest.DefaultOCRTimeout.String()+" when pages are read by OCR)")
	fs.StringVar(&c.OCRLanguages, "ocr-langs", c.OCRLanguages, "Tesseract languages for scanned PDFs, e.g. eng+chi_sim (OCR runs when tesseract is installed)")
}

// addAnswerFlags registers the flags of the commands that answer: the
// model (or none, for the extractive answerer), the reranker and the
// thresholds, whose defaults are qa's.
func addAnswerFlags(fs *pflag.FlagSet, c *library.Config) {
	fs.StringVar(&c.LLM.Provider, "llm", c.LLM.Provider, "answerer: none (extractive, no model), openai or ollama (env CITEBOOK_LLM; key in env CITEBOOK_LLM_KEY)")
	fs.StringVar(&c.LLM.URL, "llm-url", c.LLM.URL, "model API base URL, e.g. http://localhost:8000/v1 (env CITEBOOK_LLM_URL)")
	fs.StringVar(&c.LLM.Model, "llm-model", c.LLM.Model, "model name (env CITEBOOK_LLM_MODEL)")
	fs.BoolVar(&c.Answer.ModelMayRefuse, "llm-may-refuse", c.Answer.ModelMayRefuse, "let the model's reply of no statements refuse a question the passages were judged to answer (default: the extractive answer stands in; small models say nothing on answerable questions)")
	fs.DurationVar(&c.LLM.Timeout, "llm-timeout", c.LLM.Timeout, "longest one model call may take before the extractive answer stands in (0: "+qa.DefaultLLMTimeout.String()+")")
	fs.StringVar(&c.Rerank.URL, "rerank-url", c.Rerank.URL, "rerank endpoint, e.g. http://localhost:8001/v1/rerank (env CITEBOOK_RERANK_URL; key in env CITEBOOK_RERANK_KEY); default: none, the fused order")
	fs.StringVar(&c.Rerank.Model, "rerank-model", c.Rerank.Model, "rerank model name")
	fs.StringSliceVar(&c.LLMFor, "llm-for", c.LLMFor, "what the --llm model does: answer, rerank (the first passages, when no --rerank-url), rewrite (keyword queries searched beside the question); e.g. answer,rerank,rewrite, or rerank alone to answer extractively")
	fs.IntVar(&c.Rerank.LLM.Passages, "rerank-passages", c.Rerank.LLM.Passages, "first fused passages the model reranks")
	fs.IntVar(&c.Rerank.LLM.Chars, "rerank-chars", c.Rerank.LLM.Chars, "characters of each passage the model reads when it reranks")
	fs.Float64Var(&c.Answer.MinScore, "min-score", c.Answer.MinScore, "vector cosine below which chunks are dropped")
	fs.IntVar(&c.Answer.K, "k", c.Answer.K, "passages in the context")
	fs.IntVar(&c.Answer.Concurrency, "search-concurrency", c.Answer.Concurrency, "questions retrieved at once (retrieval is CPU-bound); the others wait their turn in arrival order")
	fs.Float64Var(&c.Answer.AnswerCoverage, "answer-coverage", c.Answer.AnswerCoverage, "IDF-weighted share of the question's key terms the best evidence must hold to answer (negative: never refuse for coverage)")
	fs.Float64Var(&c.Answer.AnswerCoverageCJK, "answer-coverage-cjk", c.Answer.AnswerCoverageCJK, "the same share for a question written in Chinese, Japanese or Korean, weighed by character pairs")
	fs.StringVar(&c.Fusion, "fusion", c.Fusion, `fusion weights as JSON over the embedder's defaults, e.g. '{"heading":1}' (reports record the weights used)`)
}

// writeJSON prints v indented and with HTML characters left as they are, the
// form every --json flag promises.
func writeJSON(w io.Writer, v any) error {
	enc := json.NewEncoder(w)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	return enc.Encode(v)
}
