package metadb_test

import (
	"context"
	"path/filepath"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/dbtest"
)

// each runs fn on a new empty store of each kind: SQLite, and PostgreSQL
// when CITEBOOK_TEST_POSTGRES names a server (required under CI). This is
// the metadata contract: every test below runs it on both databases.
func each(t *testing.T, fn func(t *testing.T, db *metadb.DB)) {
	dbtest.Each(t, func(t *testing.T, target string) {
		fn(t, open(t, target))
	})
}

// open opens the store at target, closed when the test ends.
func open(t *testing.T, target string) *metadb.DB {
	t.Helper()
	db, err := metadb.Open(context.Background(), target)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	return db
}

func TestOpenAppliesMigrationsOnce(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "m.db")
	for i := 0; i < 2; i++ { // the second open finds nothing pending
		db, err := metadb.Open(ctx, path)
		require.NoError(t, err)
		require.Equal(t, "sqlite", db.Dialect())
		var mode string
		require.NoError(t, db.SQL().QueryRowContext(ctx, `PRAGMA journal_mode`).Scan(&mode))
		require.Equal(t, "wal", mode)
		var fk int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `PRAGMA foreign_keys`).Scan(&fk))
		require.Equal(t, 1, fk)
		var n int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM sqlite_master WHERE type='table' AND name IN
			('books','versions','jobs','batches','parents','chunks','index_settings')`).Scan(&n))
		require.Equal(t, 7, n)
		require.NoError(t, db.Close())
	}
}

func TestOpenPostgresAppliesMigrationsOnce(t *testing.T) {
	ctx := context.Background()
	dsn := dbtest.DSN(t)
	for i := 0; i < 2; i++ {
		db, err := metadb.Open(ctx, dsn)
		require.NoError(t, err)
		require.Equal(t, "postgres", db.Dialect())
		require.NoError(t, db.Ping(ctx))
		var n int
		require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM pg_tables WHERE schemaname = current_schema()
			AND tablename IN ('books','versions','jobs','batches','parents','chunks','index_settings','grants','api_tokens','changes')`).Scan(&n))
		require.Equal(t, 10, n)
		require.NoError(t, db.Close())
	}
}

// TestOpenPostgresUnreachable: a server that is not there is a clear
// EUNAVAILABLE error that names the database but not its password.
func TestOpenPostgresUnreachable(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	_, err := metadb.Open(ctx, "postgres://citebook:s3cret@127.0.0.1:1/library?sslmode=disable&connect_timeout=2")
	require.Error(t, err)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	require.Contains(t, err.Error(), "127.0.0.1:1/library")
	require.NotContains(t, err.Error(), "s3cret")
}

func TestBooks(t *testing.T) { each(t, testBooks) }

func testBooks(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b1", Tenant: "acme", Title: "One", Format: citebook.FormatPDF, Groups: []string{"eng"}, Pages: 7}))
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b2", Tenant: "acme", Title: "Two"}))
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b3", Tenant: "other", Title: "Three"}))

	tests := []struct {
		name   string
		tenant string
		want   []string
	}{
		{"one tenant", "acme", []string{"b1", "b2"}},
		{"other tenant", "other", []string{"b3"}},
		{"unknown tenant", "nobody", nil},
		{"every tenant", "", []string{"b1", "b2", "b3"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			bs, err := db.Books(ctx, tt.tenant)
			require.NoError(t, err)
			var ids []string
			for _, b := range bs {
				ids = append(ids, b.ID)
			}
			require.Equal(t, tt.want, ids)
		})
	}

	b, err := db.Book(ctx, "b1")
	require.NoError(t, err)
	require.Equal(t, []string{"eng"}, b.Groups)
	require.Equal(t, citebook.FormatPDF, b.Format)
	require.Equal(t, 7, b.Pages)
	require.False(t, b.Created.IsZero())

	_, err = db.Book(ctx, "missing")
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(db.PutBook(ctx, citebook.Book{ID: "x"})))
}

func TestVersionsAndActivate(t *testing.T) { each(t, testVersionsAndActivate) }

func testVersionsAndActivate(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 1, ContentHash: "h1", SourceHash: "s1", Embedding: "builtin/x/8", Chunks: 3}))
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 1})))
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.CreateVersion(ctx, citebook.Version{BookID: "nope", Number: 1})))

	require.NoError(t, db.SetVersionStatus(ctx, "b", 1, citebook.VersionIndexing, ""))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("x", 1, 0, "p")}))
	err := db.Activate(ctx, "b", 1)
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err), "a version missing chunk rows is never served: %v", err)
	b, err := db.Book(ctx, "b")
	require.NoError(t, err)
	require.Zero(t, b.Active)
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("y", 1, 1, "p"), chunk("z", 1, 2, "p")}))
	require.NoError(t, db.Activate(ctx, "b", 1))
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 2, ContentHash: "h2"}))
	require.NoError(t, db.SetVersionStatus(ctx, "b", 2, citebook.VersionFailed, "embedder down"))

	tests := []struct {
		name string
		err  error
		code string
	}{
		{"failed version cannot be served", db.Activate(ctx, "b", 2), citebook.ECONFLICT},
		{"unknown version", db.Activate(ctx, "b", 9), citebook.ENOTFOUND},
		{"unknown status target", db.SetVersionStatus(ctx, "b", 9, citebook.VersionFailed, ""), citebook.ENOTFOUND},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) { require.Equal(t, tt.code, citebook.ErrorCode(tt.err)) })
	}

	b, err = db.Book(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, 1, b.Active, "a failed build must leave the previous version served")
	vs, err := db.Versions(ctx, "b")
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, citebook.VersionCompleted, vs[0].Status)
	require.Equal(t, "s1", vs[0].SourceHash)
	require.Equal(t, 3, vs[0].Chunks)
	require.False(t, vs[0].Completed.IsZero())
	require.Equal(t, citebook.VersionFailed, vs[1].Status)
	require.Equal(t, "embedder down", vs[1].Error)

	// PutBook never moves the served version.
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t", Title: "renamed"}))
	b, err = db.Book(ctx, "b")
	require.NoError(t, err)
	require.Equal(t, 1, b.Active)
	require.Equal(t, "renamed", b.Title)
}

func chunk(id string, version, ordinal int, parent string) citebook.Chunk {
	return citebook.Chunk{ID: id, BookID: "b", Version: version, ParentID: parent, Ordinal: ordinal,
		Text: "text of " + id, ContentHash: "h-" + id, HeadingPath: []string{"Ch"}}
}

func ids(cs []citebook.Chunk) []string {
	var out []string
	for _, c := range cs {
		out = append(out, c.ID)
	}
	return out
}

// TestChunkVersions builds version 1 (a b c d) and version 2 (a, c moved to
// another place, e new; b and d removed) the way the builder does and checks
// what each version and the served version see.
func TestChunkVersions(t *testing.T) { each(t, testChunkVersions) }

func testChunkVersions(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 1, Chunks: 4}))
	require.NoError(t, db.SaveParents(ctx, 1, []citebook.Parent{{ID: "p1", BookID: "b", Ordinal: 0, Text: "P1 v1"}, {ID: "p2", BookID: "b", Ordinal: 1, Text: "P2"}}))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("a", 1, 0, "p1"), chunk("b", 1, 1, "p1"), chunk("c", 1, 2, "p2"), chunk("d", 1, 3, "p2")}))
	require.NoError(t, db.Activate(ctx, "b", 1))

	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "b", Number: 2, Chunks: 3}))
	require.NoError(t, db.SaveParents(ctx, 2, []citebook.Parent{{ID: "p1", BookID: "b", Ordinal: 0, Text: "P1 v2"}}))
	require.NoError(t, db.RetireParents(ctx, "b", []string{"p1", "p2"}, 2))
	require.NoError(t, db.RetireChunks(ctx, "b", []string{"b", "c", "d"}, 2))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("c", 2, 1, "p1"), chunk("e", 2, 2, "p1")}))

	tests := []struct {
		name    string
		version int
		want    []string
	}{
		{"before any version", 0, nil},
		{"served version keeps its rows during the build", 1, []string{"a", "b", "c", "d"}},
		{"new version", 2, []string{"a", "c", "e"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := db.ChunkIDs(ctx, "b", tt.version)
			require.NoError(t, err)
			require.Equal(t, tt.want, got)
			cs, err := db.ChunksAt(ctx, "b", tt.version)
			require.NoError(t, err)
			require.Equal(t, tt.want, ids(cs))
		})
	}

	served := func() (ordOfC int, parent string, ns []string) {
		cs, err := db.ChunksByID(ctx, []string{"c", "e", "zzz"})
		require.NoError(t, err)
		for _, c := range cs {
			if c.ID == "c" {
				ordOfC = c.Ordinal
			}
		}
		p, err := db.Parent(ctx, "p1")
		require.NoError(t, err)
		n, err := db.Neighbours(ctx, []string{"c"}, 1)
		require.NoError(t, err)
		return ordOfC, p.Text, ids(n["c"])
	}
	ord, ptext, ns := served()
	require.Equal(t, 2, ord, "readers see version 1 placement until Activate")
	require.Equal(t, "P1 v1", ptext)
	require.Equal(t, []string{"b", "c", "d"}, ns)

	require.NoError(t, db.Activate(ctx, "b", 2))
	ord, ptext, ns = served()
	require.Equal(t, 1, ord)
	require.Equal(t, "P1 v2", ptext)
	require.Equal(t, []string{"a", "c", "e"}, ns)
	_, err := db.Parent(ctx, "p2")
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
	n, err := db.Neighbours(ctx, []string{"d", "e"}, 1)
	require.NoError(t, err)
	require.NotContains(t, n, "d", "a chunk retired in the served version has no neighbours")
	require.Equal(t, []string{"c", "e"}, ids(n["e"]))

	require.NoError(t, db.DeleteRetired(ctx, "b", 2))
	var rows int
	require.NoError(t, db.SQL().QueryRowContext(ctx, `SELECT COUNT(*) FROM chunks`).Scan(&rows))
	require.Equal(t, 3, rows, "only the rows of version 2 remain")
	got, err := db.ChunkIDs(ctx, "b", 2)
	require.NoError(t, err)
	require.Equal(t, []string{"a", "c", "e"}, got)

	require.NoError(t, db.IncrementHits(ctx, []string{"a", "a", "e"}))
	require.NoError(t, db.IncrementHits(ctx, []string{"a"}))
	hits, err := db.HitCounts(ctx, []string{"a", "e", "c"})
	require.NoError(t, err)
	require.Equal(t, map[string]int{"a": 2, "e": 1, "c": 0}, hits)
}

// TestDiscardVersion checks that a failed build's rows vanish and its
// retirements are undone, so the next build starts from the served version.
func TestDiscardVersion(t *testing.T) { each(t, testDiscardVersion) }

func testDiscardVersion(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("a", 1, 0, "p"), chunk("b", 1, 1, "p")}))
	require.NoError(t, db.SaveParents(ctx, 1, []citebook.Parent{{ID: "p", BookID: "b"}}))
	require.NoError(t, db.RetireChunks(ctx, "b", []string{"b"}, 2))
	require.NoError(t, db.RetireParents(ctx, "b", []string{"p"}, 2))
	require.NoError(t, db.SaveChunks(ctx, []citebook.Chunk{chunk("x", 2, 1, "p")}))
	require.NoError(t, db.DiscardVersion(ctx, "b", 2))
	for _, v := range []int{1, 2, 3} {
		got, err := db.ChunkIDs(ctx, "b", v)
		require.NoError(t, err)
		require.Equal(t, []string{"a", "b"}, got, "version %d", v)
		ps, err := db.Parents(ctx, "b", v)
		require.NoError(t, err)
		require.Len(t, ps, 1)
	}
}

func TestJobsAndBatches(t *testing.T) { each(t, testJobsAndBatches) }

func testJobsAndBatches(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "c", Tenant: "t"}))
	j1 := index.Job{BookID: "b", Version: 1, Chunks: 5}
	require.NoError(t, db.CreateJob(ctx, &j1))
	j2 := index.Job{BookID: "c", Version: 1}
	require.NoError(t, db.CreateJob(ctx, &j2))
	require.NotEqual(t, j1.ID, j2.ID)
	require.Equal(t, index.JobRunning, j1.Status)

	require.NoError(t, db.CreateBatches(ctx, []index.Batch{
		{JobID: j1.ID, N: 0, ChunkIDs: []string{"a", "b"}},
		{JobID: j1.ID, N: 1, ChunkIDs: []string{"c"}},
	}))
	require.NoError(t, db.UpdateBatch(ctx, index.Batch{JobID: j1.ID, N: 0, Status: index.BatchDone, Attempts: 1}))
	require.NoError(t, db.UpdateBatch(ctx, index.Batch{JobID: j1.ID, N: 1, Status: index.BatchFailed, Attempts: 3, Error: "embedder down"}))
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(db.UpdateBatch(ctx, index.Batch{JobID: j1.ID, N: 7})))

	j1.Status, j1.Error, j1.Embedded = index.JobFailed, "embedder down", 2
	require.NoError(t, db.UpdateJob(ctx, j1))

	tests := []struct {
		name string
		book string
		want []int64
	}{
		{"one book", "b", []int64{j1.ID}},
		{"all books newest first", "", []int64{j2.ID, j1.ID}},
		{"no jobs", "zzz", nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			js, err := db.Jobs(ctx, tt.book)
			require.NoError(t, err)
			var got []int64
			for _, j := range js {
				got = append(got, j.ID)
			}
			require.Equal(t, tt.want, got)
		})
	}
	got, err := db.Job(ctx, j1.ID)
	require.NoError(t, err)
	require.Equal(t, index.JobFailed, got.Status)
	require.Equal(t, "embedder down", got.Error)
	require.Equal(t, 2, got.Embedded)

	bs, err := db.Batches(ctx, j1.ID)
	require.NoError(t, err)
	require.Equal(t, []index.Batch{
		{JobID: j1.ID, N: 0, Status: index.BatchDone, Attempts: 1, ChunkIDs: []string{"a", "b"}},
		{JobID: j1.ID, N: 1, Status: index.BatchFailed, Attempts: 3, Error: "embedder down", ChunkIDs: []string{"c"}},
	}, bs)
}

func TestEmbeddingVersion(t *testing.T) { each(t, testEmbeddingVersion) }

func testEmbeddingVersion(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	_, ok, err := db.EmbeddingVersion(ctx)
	require.NoError(t, err)
	require.False(t, ok)
	for _, v := range []citebook.EmbeddingVersion{{Provider: "builtin", Model: "hash", Dimension: 256}, {Provider: "openai", Model: "text-embedding-3-small", Dimension: 1536}} {
		require.NoError(t, db.SetEmbeddingVersion(ctx, v))
		got, ok, err := db.EmbeddingVersion(ctx)
		require.NoError(t, err)
		require.True(t, ok)
		require.Equal(t, v, got)
	}
}

// TestConcurrentWriters checks WAL plus immediate transactions let writers
// wait for each other instead of failing with SQLITE_BUSY.
func TestConcurrentWriters(t *testing.T) { each(t, testConcurrentWriters) }

func testConcurrentWriters(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "t"}))
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for w := 0; w < 8; w++ {
		wg.Add(1)
		go func(w int) {
			defer wg.Done()
			for i := 0; i < 20; i++ {
				id := string(rune('a'+w)) + string(rune('a'+i))
				if err := db.SaveChunks(ctx, []citebook.Chunk{chunk(id, 1, w*100+i, "p")}); err != nil {
					errs <- err
					return
				}
			}
		}(w)
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		require.NoError(t, err)
	}
	got, err := db.ChunkIDs(ctx, "b", 1)
	require.NoError(t, err)
	require.Len(t, slices.Compact(slices.Sorted(slices.Values(got))), 160)
}
