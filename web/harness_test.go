package web

import (
	"context"
	"encoding/json"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/stretchr/testify/require"
	"golang.org/x/time/rate"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
	"github.com/citebook/citebook/web/auth"
)

// The HTTP tests serve real corpus books, indexed once by the real builder
// into a library opened as the binary opens one (internal/testlib), from an
// in-memory copy each test may change (delete books, move sources, hold
// builds), with the real acl resolver and token store; only the answering
// pipeline is replaced by one that cites what the library holds, so these
// tests check the HTTP layer and the browser test the whole.

// memLibrary is a Library over indexed books, as index/metadb serves them.
type memLibrary struct {
	mu      sync.Mutex
	books   map[string]citebook.Book
	parents map[string][]citebook.Parent
	chunks  map[string][]citebook.Chunk
}

func (l *memLibrary) Books(_ context.Context, tenant string) ([]citebook.Book, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []citebook.Book
	for _, b := range l.books {
		if tenant == "" || b.Tenant == tenant {
			out = append(out, b)
		}
	}
	slices.SortFunc(out, func(a, b citebook.Book) int { return strings.Compare(a.ID, b.ID) })
	return out, nil
}

func (l *memLibrary) Book(_ context.Context, id string) (*citebook.Book, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	b, ok := l.books[id]
	if !ok {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
	}
	return &b, nil
}

func (l *memLibrary) Parents(_ context.Context, bookID string, _ int) ([]citebook.Parent, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.parents[bookID], nil
}

func (l *memLibrary) ChunksAt(_ context.Context, bookID string, _ int) ([]citebook.Chunk, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.chunks[bookID], nil
}

func (l *memLibrary) ChunksByID(_ context.Context, ids []string) ([]citebook.Chunk, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	var out []citebook.Chunk
	for _, cs := range l.chunks {
		for _, c := range cs {
			if slices.Contains(ids, c.ID) {
				out = append(out, c)
			}
		}
	}
	return out, nil
}

func (l *memLibrary) delete(id string) {
	l.mu.Lock()
	defer l.mu.Unlock()
	delete(l.books, id)
	delete(l.parents, id)
	delete(l.chunks, id)
}

// add indexes a book with the real builder into the library the tests
// share (internal/testlib, opened as the binary opens one) and serves what
// it stored from memory as version 1 of id.
func (l *memLibrary) add(t testing.TB, id, tenant string, groups []string, path string) {
	t.Helper()
	real := indexed(t)
	ctx := context.Background()
	// Re-indexing the same file is "unchanged", which serves it as well.
	_, err := real.Builder.Index(ctx, citebook.BookInput{BookID: id, Tenant: tenant, Groups: groups, Path: path})
	require.NoError(t, err)
	b, err := real.Meta.Book(ctx, id)
	require.NoError(t, err)
	parents, err := real.Meta.Parents(ctx, id, b.Active)
	require.NoError(t, err)
	chunks, err := real.Meta.ChunksAt(ctx, id, b.Active)
	require.NoError(t, err)
	require.NotEmpty(t, chunks)
	for i := range chunks {
		chunks[i].Version = 1
	}
	book := *b
	book.Active, book.Source = 1, path
	l.mu.Lock()
	defer l.mu.Unlock()
	l.books[id] = book
	l.parents[id], l.chunks[id] = parents, chunks
}

// citingAsker answers with the first chunk of the principal's filter whose
// text contains the question's longest word, quoting its first sentence;
// it stands in for qa.Pipeline so HTTP tests do not depend on retrieval.
type citingAsker struct {
	lib *memLibrary
	acl Authorizer
}

func (a *citingAsker) find(ctx context.Context, p citebook.Principal, req qa.Request) (*citebook.Chunk, error) {
	f, err := a.acl.Filter(ctx, p)
	if err != nil {
		return nil, err
	}
	words := strings.Fields(strings.ToLower(req.Question))
	slices.SortFunc(words, func(x, y string) int { return len(y) - len(x) })
	for _, sc := range f.Books {
		cs, _ := a.lib.ChunksAt(ctx, sc.BookID, sc.Version)
		for _, c := range cs {
			if f.Match(&c) && strings.Contains(strings.ToLower(c.Text), words[0]) {
				return &c, nil
			}
		}
	}
	return nil, nil
}

func (a *citingAsker) Ask(ctx context.Context, p citebook.Principal, req qa.Request, onDelta func(string)) (*qa.Answer, error) {
	c, err := a.find(ctx, p, req)
	if err != nil {
		return nil, err
	}
	if c == nil {
		return &qa.Answer{Answer: "The books do not say.", Refused: true, Citations: []citebook.Citation{}}, nil
	}
	quote := c.Text
	if i := strings.IndexAny(quote, ".\n"); i > 20 {
		quote = quote[:i]
	}
	quote = quote[:min(len(quote), 120)]
	text := "The book covers this [1]."
	if onDelta != nil {
		onDelta("The book covers ")
		onDelta("this [1].")
	}
	b, _ := a.lib.Book(ctx, c.BookID)
	page, printed := citebook.PageAt(c.Pages, 0)
	return &qa.Answer{Answer: text, Citations: []citebook.Citation{{
		N: 1, ChunkID: c.ID, BookID: c.BookID, BookTitle: b.Title, HeadingPath: c.HeadingPath,
		Page: page, PrintedPage: printed, Quote: quote, CharStart: 0, CharEnd: len(quote),
	}}, Trace: qa.Trace{Question: req.Question, Context: []string{c.ID}}}, nil
}

func (a *citingAsker) Search(ctx context.Context, p citebook.Principal, req qa.Request) ([]qa.SearchResult, error) {
	c, err := a.find(ctx, p, req)
	if err != nil {
		return nil, err
	}
	res := qa.SearchResult{Query: req.Question, Hits: []citebook.Hit{}}
	if c != nil {
		res.Hits = append(res.Hits, citebook.Hit{Chunk: *c, Score: 0.5})
	}
	return []qa.SearchResult{res}, nil
}

// env is a running test server with tokens for several principals.
type env struct {
	srv     *Server
	http    *httptest.Server
	lib     *memLibrary
	reg     *prometheus.Registry
	runner  *index.Runner
	builder *fakeBuilder
	builds  chan citebook.BookInput
	tokens  map[string]string // name → secret
	dataDir string
	meta    *metadb.DB   // tokens, grants and the job queue
	store   *auth.Store  // the server's token store
	grants  *acl.Manager // the server's grants
}

var (
	fixtureOnce sync.Once
	fixture     *memLibrary
	indexedOnce sync.Once
	indexedLib  *library.Library
	indexedDir  string
)

// indexed is the real library every test's books are indexed into once.
func indexed(t testing.TB) *library.Library {
	t.Helper()
	indexedOnce.Do(func() {
		dir, err := os.MkdirTemp("", "citebook-web-")
		require.NoError(t, err)
		indexedDir = dir
		indexedLib = testlib.OpenShared(t, testlib.Config(dir))
	})
	require.NotNil(t, indexedLib, "the test library failed to open in an earlier test")
	return indexedLib
}

func TestMain(m *testing.M) {
	code := m.Run()
	if indexedLib != nil {
		indexedLib.Close()
	}
	if indexedDir != "" {
		os.RemoveAll(indexedDir)
	}
	os.Exit(code)
}

// books indexes the corpus books once per test binary; every test reads
// the same books from its own in-memory copy.
func books(t testing.TB) *memLibrary {
	t.Helper()
	dir := corpus.Dir(t)
	fixtureOnce.Do(func() {
		l := &memLibrary{books: map[string]citebook.Book{}, parents: map[string][]citebook.Parent{}, chunks: map[string][]citebook.Chunk{}}
		l.add(t, "rintro", "acme", nil, filepath.Join(dir, "books/R-intro.pdf"))
		l.add(t, "moby", "acme", []string{"whalers"}, filepath.Join(dir, "books/mobydick.txt"))
		l.add(t, "walden", "globex", nil, filepath.Join(dir, "books/mobydick.txt"))
		fixture = l
	})
	require.NotNil(t, fixture, "fixture failed to build in an earlier test")
	// Each test gets its own copy so deletes do not leak between tests.
	l := &memLibrary{books: map[string]citebook.Book{}, parents: map[string][]citebook.Parent{}, chunks: map[string][]citebook.Chunk{}}
	for id, b := range fixture.books {
		l.books[id], l.parents[id], l.chunks[id] = b, fixture.parents[id], fixture.chunks[id]
	}
	return l
}

type envOpts struct {
	// local turns zero-config mode on: the server gets this local principal
	// and no tokens are created (one would turn the mode off).
	local     *citebook.Principal
	cors      []string
	authFail  rate.Limit
	authBurst int
	rate      rate.Limit
	burst     int
	maxUpload int64
	maxBody   int64
	ready     map[string]Check
	renderer  PageRenderer
	grants    []acl.Grant // added to the fixture's chapter deny
}

func newEnv(t testing.TB, o envOpts) *env {
	t.Helper()
	lib := books(t)
	db, err := metadb.Open(context.Background(), filepath.Join(t.TempDir(), "meta.db"))
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	store := auth.NewStore(db.SQL())

	// A chapter deny, made the way an admin makes one (the grants API's
	// Manager): the "whalers" group may read Moby-Dick except its first
	// parent's chapter.
	manager := acl.NewManager(acl.NewStore(db.SQL()), lib, lib)
	_, err = manager.Add(context.Background(), acl.Grant{Tenant: "acme", Subject: "whalers", SubjectKind: acl.SubjectGroup,
		BookID: "moby", Path: lib.parents["moby"][0].HeadingPath, Effect: acl.Deny})
	require.NoError(t, err)
	for _, g := range o.grants {
		_, err = manager.Add(context.Background(), g)
		require.NoError(t, err)
	}
	resolver := acl.NewResolver(lib, manager, lib)

	e := &env{meta: db, lib: lib, reg: prometheus.NewRegistry(), builds: make(chan citebook.BookInput, 16), tokens: map[string]string{},
		dataDir: t.TempDir(), store: store, grants: manager}
	// The metadata database's job history: a CLI build of rintro, and every
	// build the runner makes, as the builder would record them.
	fb := &fakeBuilder{t: t, lib: lib, builds: e.builds, recorded: []citebook.Job{{ID: 1, BookID: "rintro", Status: citebook.JobCompleted, Version: 1}}}
	e.builder = fb
	e.runner = index.NewRunner(fb, fb, db, index.RunnerOptions{Logger: slog.New(slog.NewTextHandler(io.Discard, nil))})
	t.Cleanup(func() { e.runner.Close(context.Background()) })

	principals := map[string]citebook.Principal{
		"admin":   {Tenant: "acme", User: "root", Admin: true},
		"reader":  {Tenant: "acme", User: "rita"},
		"whaler":  {Tenant: "acme", User: "ahab", Groups: []string{"whalers"}},
		"globex":  {Tenant: "globex", User: "gus", Admin: true},
		"revoked": {Tenant: "acme", User: "old", Admin: true},
	}
	if o.local != nil {
		principals = nil
	}
	for name, p := range principals {
		secret, tok, err := store.Create(context.Background(), p)
		require.NoError(t, err)
		e.tokens[name] = secret
		if name == "revoked" {
			require.NoError(t, store.Revoke(context.Background(), tok.ID))
		}
	}
	asker := &citingAsker{lib: lib, acl: resolver}
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	e.srv, err = New(Config{
		Library: lib, Indexer: e.runner, Asker: asker, Searcher: asker, Previewer: ingestPreviewer{tok: tok},
		ACL: resolver, Tokens: store, Grants: manager, DataDir: e.dataDir, LocalPrincipal: o.local, CORSOrigins: o.cors,
		MaxBody: o.maxBody, MaxUpload: o.maxUpload, RatePerToken: o.rate, RateBurst: o.burst,
		AuthFailRate: o.authFail, AuthFailBurst: o.authBurst,
		Registry: e.reg, Ready: o.ready, Logger: slog.New(slog.NewTextHandler(io.Discard, nil)), Renderer: o.renderer,
	})
	require.NoError(t, err)
	e.http = httptest.NewServer(e.srv.Handler())
	t.Cleanup(e.http.Close)
	return e
}

// do sends a request as the named token ("" for none), with a JSON body
// unless hdr says otherwise, and returns the response with its body read.
func (e *env) do(t *testing.T, who, method, path string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	secret := ""
	if who != "" {
		secret = e.tokens[who]
	}
	if body != nil {
		hdr = append([]string{"Content-Type", "application/json"}, hdr...)
	}
	return send(t, e.http.URL, secret, method, path, body, hdr...)
}

// send makes one request to the server at base with the bearer secret (""
// for none) and header pairs, and returns the response with its body read.
func send(t testing.TB, base, secret, method, path string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(t, err)
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		if hdr[i+1] != "" {
			req.Header.Set(hdr[i], hdr[i+1])
		}
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, data
}

// waitJob polls an index job as the admin secret until it completes or
// fails; the deadline is long enough for the real builder to index a book.
func waitJob(t *testing.T, base, secret, id string) citebook.Job {
	t.Helper()
	deadline := time.Now().Add(2 * time.Minute)
	for {
		res, data := send(t, base, secret, "GET", "/v1/jobs/"+id, nil)
		require.Equal(t, 200, res.StatusCode, "%s", data)
		var j citebook.Job
		require.NoError(t, json.Unmarshal(data, &j))
		if j.Status.Ended() {
			return j
		}
		require.True(t, time.Now().Before(deadline), "job %s still %s", id, j.Status)
		time.Sleep(10 * time.Millisecond)
	}
}

// fakeBuilder stands in for the index builder behind the real job runner:
// a build adds the parsed book to the in-memory library and records a job,
// unless the test holds it (gate) to keep a job running.
type fakeBuilder struct {
	t      testing.TB
	lib    *memLibrary
	builds chan citebook.BookInput
	gate   chan struct{} // when set, builds wait for it or their context

	mu       sync.Mutex
	recorded []citebook.Job
}

func (f *fakeBuilder) Index(ctx context.Context, in citebook.BookInput) (*index.JobResult, error) {
	f.builds <- in
	f.mu.Lock()
	gate := f.gate
	f.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
			return nil, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "parsing cancelled")
		}
	}
	f.lib.add(f.t, in.BookID, in.Tenant, in.Groups, in.Path)
	f.mu.Lock()
	defer f.mu.Unlock()
	j := citebook.Job{ID: int64(len(f.recorded) + 1), BookID: in.BookID, Version: 1, Status: citebook.JobCompleted, Chunks: len(f.lib.chunks[in.BookID])}
	f.recorded = append(f.recorded, j)
	return &index.JobResult{JobID: j.ID, BookID: in.BookID, Version: 1, Status: "completed", Chunks: j.Chunks}, nil
}

func (f *fakeBuilder) Delete(_ context.Context, id string) error {
	if _, err := f.lib.Book(context.Background(), id); err != nil {
		return err
	}
	f.lib.delete(id)
	return nil
}

func (f *fakeBuilder) Book(ctx context.Context, id string) (*citebook.Book, error) {
	return f.lib.Book(ctx, id)
}

func (f *fakeBuilder) Job(_ context.Context, id int64) (*citebook.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, j := range f.recorded {
		if j.ID == id {
			return &j, nil
		}
	}
	return nil, citebook.Errorf(citebook.ENOTFOUND, "job %d not found", id)
}

func (f *fakeBuilder) Jobs(_ context.Context, bookID string) ([]citebook.Job, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []citebook.Job
	for _, j := range slices.Backward(f.recorded) {
		if j.BookID == bookID {
			out = append(out, j)
		}
	}
	return out, nil
}
