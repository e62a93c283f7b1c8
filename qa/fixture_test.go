package qa

import (
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
)

// queryEmbedder is the builtin embedder as both the builder and the
// pipeline use it.
type queryEmbedder interface {
	index.Embedder
	EmbedQuery(ctx context.Context, text string) ([]float32, error)
}

// library is a real index of corpus books: R-intro for tenant acme (with
// its chapter 3 denied to user mallory), the device-tree paper for tenant
// globex, one FinanceBench filing for tenant fin and the Chinese LaTeX
// primer for tenant zh.
type library struct {
	meta     *metadb.DB
	vec      index.VectorStore
	lex      *lexical.Index
	emb      queryEmbedder
	grants   *acl.Manager // grants made as the CLI and /v1/grants make them
	denied   []string     // heading path of the chapter denied to mallory
	titleRIn string
}

const (
	bookR   = "r-intro"
	bookDTC = "dtc"
	bookJNJ = "jnj-8k"
	jnjFile = "financebench/pdfs/JOHNSON_JOHNSON_2023_8K_dated-2023-08-30.pdf"
	bookZH  = "lshort-zh"
	zhFile  = "books/lshort-zh-cn.pdf"
)

var (
	alice   = citebook.Principal{Tenant: "acme", User: "alice"}
	mallory = citebook.Principal{Tenant: "acme", User: "mallory"}
	bob     = citebook.Principal{Tenant: "globex", User: "bob"}
	analyst = citebook.Principal{Tenant: "fin", User: "ana"}
	lin     = citebook.Principal{Tenant: "zh", User: "lin"}
)

// buildLibrary indexes the books into vec (any VectorStore: embedded,
// Milvus) with the real builder, metadata DB, lexical index and builtin
// embedder.
func buildLibrary(t testing.TB, dir string, vec index.VectorStore) *library {
	t.Helper()
	ctx := context.Background()
	meta, err := metadb.Open(ctx, filepath.Join(dir, "meta.db"))
	require.NoError(t, err)
	lex, err := lexical.Open(ctx, filepath.Join(dir, "lexical"))
	require.NoError(t, err)
	emb, err := embedder.New(embedder.Config{Provider: "builtin"})
	require.NoError(t, err)
	lib := &library{meta: meta, vec: vec, lex: lex, emb: emb, grants: acl.NewManager(acl.NewStore(meta.SQL()), meta, meta)}
	b := index.NewBuilder(meta, vec, lex, emb, index.BuilderOptions{})
	for _, in := range []index.BookInput{
		{BookID: bookR, Tenant: "acme", Path: corpus.Path(t, "books/R-intro.pdf")},
		{BookID: bookDTC, Tenant: "globex", Path: corpus.Path(t, "books/dtc-paper.pdf")},
		{BookID: bookJNJ, Tenant: "fin", Title: "Johnson & Johnson 8-K (2023-08-30)", Path: corpus.Path(t, jnjFile)},
		{BookID: bookZH, Tenant: "zh", Path: corpus.Path(t, zhFile)},
	} {
		res, err := b.Index(ctx, in)
		require.NoError(t, err, in.BookID)
		require.Equal(t, "completed", res.Status, in.BookID)
	}
	book, err := meta.Book(ctx, bookR)
	require.NoError(t, err)
	lib.titleRIn = book.Title
	parents, err := meta.Parents(ctx, bookR, book.Active)
	require.NoError(t, err)
	for _, p := range parents {
		if len(p.HeadingPath) > 0 && strings.Contains(p.HeadingPath[0], "Objects, their modes and attributes") {
			lib.denied = p.HeadingPath[:1]
			break
		}
	}
	require.NotEmpty(t, lib.denied, "R-intro has a chapter 3 parent")
	_, err = lib.grants.Add(ctx, acl.Grant{Tenant: "acme", BookID: bookR, Path: lib.denied,
		SubjectKind: acl.SubjectUser, Subject: "mallory", Effect: acl.Deny})
	require.NoError(t, err)
	return lib
}

func (l *library) close() {
	l.lex.Close()
	l.vec.Close()
	l.meta.Close()
}

// pipeline wires a pipeline over the library with the given answerer.
func (l *library) pipeline(t testing.TB, a Answerer, opts Options) *Pipeline {
	t.Helper()
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	p, err := NewPipeline(Deps{
		Embedder: l.emb, Vectors: l.vec, Lexical: l.lex, Library: l.meta,
		Access: acl.NewResolver(l.meta, l.grants, l.meta), Answerer: a,
		Tokens: tok, Terms: analysis.Terms, Geometry: l.meta,
	}, opts)
	require.NoError(t, err)
	return p
}

// chunks returns the served chunks of a book.
func (l *library) chunks(t testing.TB, bookID string) []citebook.Chunk {
	t.Helper()
	ctx := context.Background()
	b, err := l.meta.Book(ctx, bookID)
	require.NoError(t, err)
	cs, err := l.meta.ChunksAt(ctx, bookID, b.Active)
	require.NoError(t, err)
	return cs
}

var (
	sharedOnce sync.Once
	sharedLib  *library
	sharedDir  string
)

// shared is the embedded-store library every test of the package reads;
// indexing the books once keeps the suite fast.
func shared(t testing.TB) *library {
	t.Helper()
	corpus.Dir(t)
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "citebook-qa-")
		require.NoError(t, err)
		sharedDir = dir
		vec, err := memstore.Open(context.Background(), filepath.Join(dir, "vectors"))
		require.NoError(t, err)
		sharedLib = buildLibrary(t, dir, vec)
	})
	if sharedLib == nil {
		t.Fatal("building the shared library failed in an earlier test")
	}
	return sharedLib
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedLib != nil {
		sharedLib.close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
}

// fold keeps letters and digits, lower-cased, so texts from pdftotext and
// from the parser compare despite different line breaking.
func fold(s string) string {
	var b strings.Builder
	for _, r := range s {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			b.WriteRune(unicode.ToLower(r))
		}
	}
	return b.String()
}

// allStrings walks a value's JSON form and concatenates every string in it,
// so leak checks see text wherever it hides (answer, citations, trace).
func allStrings(t testing.TB, v any) string {
	t.Helper()
	raw, err := json.Marshal(v)
	require.NoError(t, err)
	var tree any
	require.NoError(t, json.Unmarshal(raw, &tree))
	var b strings.Builder
	var walk func(any)
	walk = func(x any) {
		switch x := x.(type) {
		case string:
			b.WriteString(x)
			b.WriteString("\n")
		case []any:
			for _, e := range x {
				walk(e)
			}
		case map[string]any:
			for k, e := range x {
				b.WriteString(k + "\n")
				walk(e)
			}
		}
	}
	walk(tree)
	return b.String()
}
