// Package library is where a citebook library is wired, once: its
// configuration (every setting in one struct, the defaults in one place, the
// environment read in one place) and Open, the one constructor of the
// metadata database, the stores, the embedder, the builder and the answering
// pipeline.
//
// Only the command (cmd/citebook) and the test helper (internal/testlib)
// import it, so "only cmd wires it all" holds in production while tests open
// libraries exactly as the binary does; TestOnlyCmdWires checks it.
package library

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/qa"
)

// Store names.
const (
	StoreEmbedded = "embedded" // the in-process vector store (index/memstore), the default
	StoreMilvus   = "milvus"
)

// Config is every setting of a citebook process. Defaults returns it with
// the defaults and FromEnv with the environment applied on top; command-line
// flags then overwrite single fields. Settings a package owns (qa's
// thresholds, the builder's batch size, the job deadline) take that
// package's exported default, never a second copy.
type Config struct {
	Data string // library directory: metadata DB, embedded vectors, lexical index
	// Meta is the metadata database several servers share, a postgres://
	// URL; empty keeps SQLite in Data (MetaPath).
	Meta   string
	Store  string // StoreEmbedded or StoreMilvus
	Milvus Milvus

	// Embed is the embedder; its APIKey comes from CITEBOOK_EMBED_KEY only,
	// never a flag (flags show in ps).
	Embed   embedder.Config
	Reembed bool // let the builder switch the library to this embedder

	// ParseTimeout bounds parsing one book; 0 leaves it to ingest, which
	// allows OCR longer than a text layer.
	ParseTimeout time.Duration
	OCRLanguages string // Tesseract language data for scanned PDFs ("eng", "eng+chi_sim")
	BatchSize    int    // chunks per recorded index batch
	JobDeadline  time.Duration

	// LLM is the answering model; Provider "none" (or empty) is the
	// extractive answerer. Key comes from CITEBOOK_LLM_KEY only.
	LLM qa.ModelConfig
	// LLMFor is what a configured model does: LLMAnswer, LLMRerank (only
	// when no rerank endpoint is set) and LLMRewrite. Only LLMAnswer by
	// default: with the 0.5B model measured (README) rerank and rewrite
	// lowered books-dev page recall@1, so they are opt-in.
	LLMFor []string
	Rerank Rerank
	Answer qa.Options // thresholds and budgets of the answering pipeline
	// Fusion is JSON replacing fields of the embedder kind's default fusion
	// weights (qa.DefaultFusion), for measuring them; reports record the
	// weights used.
	Fusion string

	Serve Serve
}

// Milvus locates the Milvus collection when Store is StoreMilvus.
type Milvus struct {
	Addr       string // host:port
	Collection string
}

// Rerank is an optional rerank endpoint; without a URL (and no model
// reranking) passages keep the fused order.
type Rerank struct {
	URL   string
	Model string
	Key   string // from CITEBOOK_RERANK_KEY only
	// LLM bounds what the model reads when it reranks (LLMFor holds
	// LLMRerank and URL is empty).
	LLM qa.LLMRerankOptions
}

// Serve configures `citebook serve`.
type Serve struct {
	Addr        string
	Rate        float64 // requests per second per token (0: unlimited)
	Burst       int
	MaxUpload   int64
	Workers     int // index jobs run at once
	CORSOrigins []string
	Token       string // with MCP on stdio: run as this token's principal
	// Procs, when above zero, is the Go scheduler's processors
	// (GOMAXPROCS) while serving, unless GOMAXPROCS is set; zero leaves the
	// runtime's (the CPUs). The default is one more than the CPUs, while
	// Answer.Concurrency keeps retrieval to one turn per CPU: the spare
	// processor waits on the network and reads a request when it arrives.
	// Without it the processors pass turns to each other through the
	// scheduler's run-next slot and poll the network only when its monitor
	// does (every 10 ms): in bench/load.sh's runtime trace a search waited
	// a median 11 ms (45 ms in the slowest twentieth) to be read, and
	// search's p95 was 28–38 ms against 16–22 with the spare (README,
	// issue 13). On cores other work keeps busy the spare's wake-ups cost
	// 11–13 % more CPU a request.
	Procs int
}

// LLMNone is the provider name of the extractive answerer.
const LLMNone = "none"

// What a configured model is used for (Config.LLMFor).
const (
	LLMAnswer  = "answer"  // draft answers (the extractive answerer stands in when it fails)
	LLMRerank  = "rerank"  // put the passages that answer first among the first fused ones
	LLMRewrite = "rewrite" // keyword rewrites of the question, searched beside it
)

// Defaults is the configuration of a fresh install: embedded stores in
// ~/.citebook, the builtin embedder, the extractive answerer, loopback only.
func Defaults() Config {
	cpus := runtime.GOMAXPROCS(0)
	data := ".citebook"
	if home, err := os.UserHomeDir(); err == nil {
		data = filepath.Join(home, ".citebook")
	}
	return Config{
		Data:         data,
		Store:        StoreEmbedded,
		Milvus:       Milvus{Collection: "citebook"},
		Embed:        embedder.Config{Provider: embedder.ProviderBuiltin, BatchSize: embedder.DefaultBatchSize},
		OCRLanguages: "eng",
		BatchSize:    index.DefaultBatchSize,
		JobDeadline:  index.DefaultJobDeadline,
		LLM:          qa.ModelConfig{Provider: LLMNone},
		LLMFor:       []string{LLMAnswer},
		Rerank:       Rerank{LLM: qa.DefaultLLMRerankOptions()},
		Answer:       qa.DefaultOptions(),
		Serve: Serve{
			Addr:      "127.0.0.1:8080",
			Rate:      20,
			Burst:     40,
			MaxUpload: 256 << 20,
			Workers:   index.DefaultWorkers,
			Procs:     cpus + 1,
		},
	}
}

// Env lists the environment variables citebook reads, each with what it
// sets; FromEnv applies them and the help texts name them from here.
func Env() []EnvVar {
	return []EnvVar{
		{"CITEBOOK_DATA", "library directory (--data)", func(c *Config, v string) { c.Data = v }},
		{"CITEBOOK_META", "metadata database, a postgres:// URL shared by several servers (--meta)", func(c *Config, v string) { c.Meta = v }},
		{"MILVUS_ADDR", "Milvus address host:port (--milvus-addr)", func(c *Config, v string) { c.Milvus.Addr = v }},
		{"CITEBOOK_EMBED_KEY", "API key of the embedding server (no flag)", func(c *Config, v string) { c.Embed.APIKey = v }},
		{"CITEBOOK_LLM", "answerer: none, openai or ollama (--llm)", func(c *Config, v string) { c.LLM.Provider = v }},
		{"CITEBOOK_LLM_URL", "model API base URL (--llm-url)", func(c *Config, v string) { c.LLM.URL = v }},
		{"CITEBOOK_LLM_MODEL", "model name (--llm-model)", func(c *Config, v string) { c.LLM.Model = v }},
		{"CITEBOOK_LLM_KEY", "API key of the model server (no flag)", func(c *Config, v string) { c.LLM.Key = v }},
		{"CITEBOOK_RERANK_URL", "rerank endpoint (--rerank-url)", func(c *Config, v string) { c.Rerank.URL = v }},
		{"CITEBOOK_RERANK_KEY", "API key of the rerank server (no flag)", func(c *Config, v string) { c.Rerank.Key = v }},
		{"CITEBOOK_ADDR", "serve's listen address (--addr)", func(c *Config, v string) { c.Serve.Addr = v }},
		{"CITEBOOK_TOKEN", "serve --mcp-stdio runs as this token's principal (--token)", func(c *Config, v string) { c.Serve.Token = v }},
		{"CITEBOOK_CORS_ORIGINS", "browser origins allowed with a token, comma-separated (--cors-origin)",
			func(c *Config, v string) { c.Serve.CORSOrigins = splitList(v) }},
	}
}

// EnvVar is one environment variable and the setting it fills.
type EnvVar struct {
	Name string
	What string
	set  func(*Config, string)
}

// FromEnv is Defaults with every set, non-empty variable of Env applied;
// getenv is os.Getenv in the binary.
func FromEnv(getenv func(string) string) Config {
	c := Defaults()
	for _, e := range Env() {
		if v := getenv(e.Name); v != "" {
			e.set(&c, v)
		}
	}
	return c
}

// MetaPath is where the metadata database of a library lives when Meta is
// empty: SQLite in the data dir.
func (c Config) MetaPath() string { return filepath.Join(c.Data, "citebook.db") }

// Answerer names the answering setup as reports and traces show it.
func (c Config) Answerer() string {
	if !c.usesLLM(LLMAnswer) {
		return "extractive"
	}
	return c.LLM.Provider + "/" + c.LLM.Model
}

// RetrievalModel names the model retrieval uses and for what, as reports
// show it ("openai/qwen (rerank, rewrite)"); empty when none.
func (c Config) RetrievalModel() string {
	var uses []string
	if c.usesLLM(LLMRerank) && c.Rerank.URL == "" {
		uses = append(uses, LLMRerank)
	}
	if c.usesLLM(LLMRewrite) {
		uses = append(uses, LLMRewrite)
	}
	if len(uses) == 0 {
		return ""
	}
	return c.LLM.Provider + "/" + c.LLM.Model + " (" + strings.Join(uses, ", ") + ")"
}

// usesLLM reports whether a model is configured and LLMFor names use.
func (c Config) usesLLM(use string) bool {
	if c.LLM.Provider == "" || c.LLM.Provider == LLMNone {
		return false
	}
	for _, u := range c.LLMFor {
		if strings.EqualFold(strings.TrimSpace(u), use) {
			return true
		}
	}
	return false
}

// checkLLMFor refuses a use of the model citebook does not know.
func (c Config) checkLLMFor() error {
	for _, u := range c.LLMFor {
		switch strings.ToLower(strings.TrimSpace(u)) {
		case LLMAnswer, LLMRerank, LLMRewrite, "":
		default:
			return citebook.Errorf(citebook.EINVALID, "unknown --llm-for %q (answer, rerank, rewrite)", u)
		}
	}
	return nil
}

// splitList splits a comma-separated value, dropping empty items.
func splitList(v string) []string {
	var out []string
	for _, s := range strings.Split(v, ",") {
		if s = strings.TrimSpace(s); s != "" {
			out = append(out, s)
		}
	}
	return out
}
