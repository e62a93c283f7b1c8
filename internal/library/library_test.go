package library

import (
	"go/parser"
	"go/token"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/qa"
)

// TestFromEnv sets every variable Env lists and checks each lands in its
// field, and that unset or empty variables leave the defaults.
func TestFromEnv(t *testing.T) {
	env := map[string]string{
		"CITEBOOK_DATA":         "/srv/lib",
		"CITEBOOK_META":         "postgres://db/citebook",
		"MILVUS_ADDR":           "milvus:19530",
		"CITEBOOK_EMBED_KEY":    "ek",
		"CITEBOOK_LLM":          "openai",
		"CITEBOOK_LLM_URL":      "http://llm/v1",
		"CITEBOOK_LLM_MODEL":    "qwen",
		"CITEBOOK_LLM_KEY":      "lk",
		"CITEBOOK_RERANK_URL":   "http://rr/v1/rerank",
		"CITEBOOK_RERANK_KEY":   "rk",
		"CITEBOOK_ADDR":         "0.0.0.0:9000",
		"CITEBOOK_TOKEN":        "tok",
		"CITEBOOK_CORS_ORIGINS": " https://a.example, ,https://b.example ",
	}
	require.Len(t, Env(), len(env), "a variable was added to Env without a test value here")
	for _, e := range Env() {
		require.Contains(t, env, e.Name)
		require.NotEmpty(t, e.What, e.Name)
	}
	c := FromEnv(func(k string) string { return env[k] })
	require.Equal(t, "/srv/lib", c.Data)
	require.Equal(t, "postgres://db/citebook", c.Meta)
	require.Equal(t, "milvus:19530", c.Milvus.Addr)
	require.Equal(t, "ek", c.Embed.APIKey)
	require.Equal(t, "openai", c.LLM.Provider)
	require.Equal(t, "http://llm/v1", c.LLM.URL)
	require.Equal(t, "qwen", c.LLM.Model)
	require.Equal(t, "lk", c.LLM.Key)
	require.Equal(t, "http://rr/v1/rerank", c.Rerank.URL)
	require.Equal(t, "rk", c.Rerank.Key)
	require.Equal(t, "0.0.0.0:9000", c.Serve.Addr)
	require.Equal(t, "tok", c.Serve.Token)
	require.Equal(t, []string{"https://a.example", "https://b.example"}, c.Serve.CORSOrigins)

	// Nothing set: the defaults, which a fresh install runs on.
	d := FromEnv(func(string) string { return "" })
	require.Equal(t, Defaults(), d)
	require.Equal(t, StoreEmbedded, d.Store)
	require.Equal(t, "builtin", d.Embed.Provider)
	require.Equal(t, LLMNone, d.LLM.Provider)
	require.Equal(t, "127.0.0.1:8080", d.Serve.Addr)
	require.Equal(t, 0.2, d.Answer.MinScore, "the threshold tuned for the builtin embedder")
	require.Equal(t, 30*time.Minute, d.JobDeadline)
	require.Empty(t, d.Embed.APIKey)
	require.Empty(t, d.Serve.CORSOrigins)
}

// TestAnswererName checks the name reports and traces give each answering
// setup, which eval compares runs by.
func TestAnswererName(t *testing.T) {
	for _, tt := range []struct {
		provider, model, want string
	}{
		{"", "", "extractive"},
		{"none", "ignored", "extractive"},
		{"openai", "gpt-4o-mini", "openai/gpt-4o-mini"},
		{"ollama", "qwen2.5", "ollama/qwen2.5"},
	} {
		c := Defaults()
		c.LLM.Provider, c.LLM.Model = tt.provider, tt.model
		require.Equal(t, tt.want, c.Answerer(), tt)
	}
}

// TestLLMFor: what a configured model does, as reports name it; the model
// reranks only without a rerank endpoint, and nothing uses a model that
// is not configured.
func TestLLMFor(t *testing.T) {
	for _, tt := range []struct {
		provider, url string
		use           []string
		answerer      string
		retrieval     string
	}{
		{"none", "", nil, "extractive", ""},
		{"openai", "", nil, "openai/m", ""},
		{"openai", "", []string{"answer", "rerank", "rewrite"}, "openai/m", "openai/m (rerank, rewrite)"},
		{"openai", "http://rr/v1/rerank", []string{"answer", "rerank", "rewrite"}, "openai/m", "openai/m (rewrite)"},
		{"openai", "", []string{"rerank", " Rewrite"}, "extractive", "openai/m (rerank, rewrite)"},
		{"ollama", "", []string{"answer"}, "ollama/m", ""},
		{"openai", "", []string{"rewrite"}, "extractive", "openai/m (rewrite)"},
	} {
		c := Defaults()
		c.LLM.Provider, c.LLM.Model, c.Rerank.URL = tt.provider, "m", tt.url
		if tt.use != nil {
			c.LLMFor = tt.use
		}
		require.Equal(t, tt.answerer, c.Answerer(), tt)
		require.Equal(t, tt.retrieval, c.RetrievalModel(), tt)
	}
	require.Equal(t, qa.DefaultLLMRerankOptions(), Defaults().Rerank.LLM)
}

// TestOpenAnsweringRefuses checks bad settings are invalid input and
// leave nothing open or returned: an unknown answerer (found once the
// library is open), an unknown store, Milvus without an address.
func TestOpenAnsweringRefuses(t *testing.T) {
	for name, set := range map[string]func(*Config){
		"llm": func(c *Config) { c.LLM.Provider = "gpt" },
		"llm-for": func(c *Config) {
			c.LLM.Provider, c.LLM.Model, c.LLMFor = "openai", "m", []string{"answer", "summarise"}
		},
		"store":  func(c *Config) { c.Store = "postgres" },
		"milvus": func(c *Config) { c.Store, c.Milvus.Addr = StoreMilvus, "" },
	} {
		t.Run(name, func(t *testing.T) {
			dir := t.TempDir()
			c := Defaults()
			c.Data = dir
			set(&c)
			l, p, err := OpenAnswering(t.Context(), c, nil)
			require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), err)
			require.Nil(t, l)
			require.Nil(t, p)
			// Closed again: the same library opens at once (the lexical
			// index and the metadata would be locked otherwise).
			c = Defaults()
			c.Data = dir
			l, err = Open(t.Context(), c, nil)
			require.NoError(t, err)
			require.NoError(t, l.Close())
		})
	}
}

// TestOnlyCmdWires keeps the rule that only cmd wires packages together:
// no production package but cmd/... imports this one; tests may, through
// internal/testlib, so they open libraries as the binary does.
func TestOnlyCmdWires(t *testing.T) {
	root, err := filepath.Abs("../..")
	require.NoError(t, err)
	const self = "github.com/citebook/citebook/internal/library"
	fset := token.NewFileSet()
	var importers []string
	err = filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata") {
			return filepath.SkipDir
		}
		if d.IsDir() || !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.ImportsOnly)
		if err != nil {
			return err
		}
		for _, imp := range f.Imports {
			if p, _ := strconv.Unquote(imp.Path.Value); p == self {
				rel, _ := filepath.Rel(root, path)
				importers = append(importers, filepath.ToSlash(rel))
			}
		}
		return nil
	})
	require.NoError(t, err)
	require.NotEmpty(t, importers, "the walk found no importer at all; is root right?")
	for _, p := range importers {
		if !strings.HasPrefix(p, "cmd/") && !strings.HasPrefix(p, "internal/testlib/") {
			t.Errorf("%s imports internal/library: only cmd wires packages together", p)
		}
	}
}

// TestDepsKeepTermStats: the follower's wrappers hide the lexical index's
// DocFreq, and without it answerability silently loses its IDF weighting
// (the refusals the qa tests check); the wiring must hand it over.
func TestDepsKeepTermStats(t *testing.T) {
	c := Defaults()
	c.Data = t.TempDir()
	l, err := Open(t.Context(), c, nil)
	require.NoError(t, err)
	defer l.Close()
	d := l.Deps()
	require.NotNil(t, d.Stats, "the lexical index's term statistics")
	require.NotNil(t, d.Books, "book routing")
	require.NotNil(t, d.Geometry, "citation boxes")
}
