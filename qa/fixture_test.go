package qa_test

import (
	"context"
	"encoding/json"
	"os"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// fixture is a real library of corpus books, opened as the binary opens
// one: R-intro for tenant acme (with its chapter 3 denied to user
// mallory), the device-tree paper for tenant globex, one FinanceBench
// filing for tenant fin and the Chinese LaTeX primer for tenant zh.
type fixture struct {
	*library.Library
	denied   []string // heading path of the chapter denied to mallory
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

// buildLibrary indexes the books into the library l (any vector store:
// embedded, Milvus) with its real builder, and denies mallory chapter 3 of
// R-intro the way the CLI and /v1/grants do.
func buildLibrary(t testing.TB, l *library.Library) *fixture {
	t.Helper()
	ctx := context.Background()
	lib := &fixture{Library: l}
	testlib.Index(t, l,
		citebook.BookInput{BookID: bookR, Tenant: "acme", Path: corpus.Path(t, "books/R-intro.pdf")},
		citebook.BookInput{BookID: bookDTC, Tenant: "globex", Path: corpus.Path(t, "books/dtc-paper.pdf")},
		citebook.BookInput{BookID: bookJNJ, Tenant: "fin", Title: "Johnson & Johnson 8-K (2023-08-30)", Path: corpus.Path(t, jnjFile)},
		citebook.BookInput{BookID: bookZH, Tenant: "zh", Path: corpus.Path(t, zhFile)},
	)
	book, err := l.Meta.Book(ctx, bookR)
	require.NoError(t, err)
	lib.titleRIn = book.Title
	parents, err := l.Meta.Parents(ctx, bookR, book.Active)
	require.NoError(t, err)
	for _, p := range parents {
		if len(p.HeadingPath) > 0 && strings.Contains(p.HeadingPath[0], "Objects, their modes and attributes") {
			lib.denied = p.HeadingPath[:1]
			break
		}
	}
	require.NotEmpty(t, lib.denied, "R-intro has a chapter 3 parent")
	_, err = l.Grants.Add(ctx, acl.Grant{Tenant: "acme", BookID: bookR, Path: lib.denied,
		SubjectKind: acl.SubjectUser, Subject: "mallory", Effect: acl.Deny})
	require.NoError(t, err)
	return lib
}

// pipeline wires a pipeline over the library with the given answerer, as
// the binary wires it; set changes dependencies (planner, fallback,
// reranker) before it is built.
func (l *fixture) pipeline(t testing.TB, a qa.Answerer, opts qa.Options, set ...func(*qa.Deps)) *qa.Pipeline {
	t.Helper()
	deps := l.Deps()
	deps.Answerer = a
	for _, f := range set {
		f(&deps)
	}
	p, err := qa.NewPipeline(deps, opts)
	require.NoError(t, err)
	return p
}

// chunks returns the served chunks of a book.
func (l *fixture) chunks(t testing.TB, bookID string) []citebook.Chunk {
	t.Helper()
	ctx := context.Background()
	b, err := l.Meta.Book(ctx, bookID)
	require.NoError(t, err)
	cs, err := l.Meta.ChunksAt(ctx, bookID, b.Active)
	require.NoError(t, err)
	return cs
}

var (
	sharedOnce sync.Once
	sharedLib  *fixture
	sharedDir  string
)

// shared is the embedded-store library every test of the package reads;
// indexing the books once keeps the suite fast.
func shared(t testing.TB) *fixture {
	t.Helper()
	corpus.Dir(t)
	sharedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "citebook-qa-")
		require.NoError(t, err)
		sharedDir = dir
		sharedLib = buildLibrary(t, testlib.OpenShared(t, testlib.Config(dir)))
	})
	if sharedLib == nil {
		t.Fatal("building the shared library failed in an earlier test")
	}
	return sharedLib
}

func TestMain(m *testing.M) {
	code := m.Run()
	if sharedLib != nil {
		sharedLib.Close()
	}
	if sharedDir != "" {
		os.RemoveAll(sharedDir)
	}
	os.Exit(code)
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
