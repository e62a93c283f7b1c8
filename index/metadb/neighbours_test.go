package metadb

import (
	"context"
	"database/sql"
	"database/sql/driver"
	"errors"
	"fmt"
	"path/filepath"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/dbtest"
)

// neighboursOne is the per-chunk lookup Neighbours replaced, kept verbatim
// as the reference its batched answer must equal and as the benchmark's
// baseline: two statements per chunk.
func (d *DB) neighboursOne(ctx context.Context, chunkID string, n int) ([]citebook.Chunk, error) {
	var bookID string
	var ordinal int
	err := d.db.QueryRowContext(ctx, `SELECT r.book_id, r.ordinal FROM chunks r`+activeJoin+`AND r.id=?`, chunkID).
		Scan(&bookID, &ordinal)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "chunk %q not found", chunkID)
	} else if err != nil {
		return nil, unavailable(err, "read chunk")
	}
	n = max(n, 0)
	return queryAll(ctx, d.db, "read neighbours", scanChunk, `SELECT `+chunkCols+` FROM chunks r`+activeJoin+
		`AND r.book_id=? AND r.ordinal BETWEEN ? AND ? ORDER BY r.ordinal`, bookID, ordinal-n, ordinal+n)
}

// neighboursLoop is what qa's expansion did before: one lookup per chunk,
// an unknown chunk left out.
func (d *DB) neighboursLoop(ctx context.Context, ids []string, n int) (map[string][]citebook.Chunk, error) {
	out := map[string][]citebook.Chunk{}
	for _, id := range ids {
		cs, err := d.neighboursOne(ctx, id, n)
		if citebook.ErrorCode(err) == citebook.ENOTFOUND {
			continue
		} else if err != nil {
			return nil, err
		}
		out[id] = cs
	}
	return out, nil
}

type bookRows struct {
	parents []citebook.Parent
	chunks  []citebook.Chunk
}

var (
	booksOnce sync.Once
	books     map[string]*bookRows
	booksErr  error
)

// loadBooks parses and splits R-intro and the device-tree paper once: two
// real books, so ordinals overlap and the same-book rule is exercised.
func loadBooks(t testing.TB) map[string]*bookRows {
	t.Helper()
	dir := corpus.Dir(t)
	booksOnce.Do(func() {
		tok, err := ingest.NewTokenizer()
		if err != nil {
			booksErr = err
			return
		}
		out := map[string]*bookRows{}
		for id, file := range map[string]string{"r-intro": "books/R-intro.pdf", "dtc": "books/dtc-paper.pdf"} {
			doc, err := ingest.ParseFile(context.Background(), filepath.Join(dir, file))
			if err != nil {
				booksErr = err
				return
			}
			ps, cs := ingest.Split(doc, id, tok, ingest.DefaultChunkOptions())
			out[id] = &bookRows{parents: ps, chunks: cs}
		}
		books = out
	})
	require.NoError(t, booksErr)
	return books
}

// libraryDB writes the books into a new database at target as version 1,
// served. It then builds version 2 of R-intro the way a re-index does:
// every chunk row retired and re-saved with every tenth chunk gone and the
// rest renumbered, so neighbours differ between the versions. Version 2 is
// activated only when activate2 is set.
func libraryDB(t testing.TB, target string, activate2 bool) (ids []string, dropped string) {
	t.Helper()
	ctx := context.Background()
	books := loadBooks(t)
	db, err := Open(ctx, target)
	require.NoError(t, err)
	defer db.Close()
	for id, b := range books {
		require.NoError(t, db.PutBook(ctx, citebook.Book{ID: id, Tenant: "acme"}))
		require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: id, Number: 1, Chunks: len(b.chunks)}))
		require.NoError(t, db.SaveParents(ctx, 1, b.parents))
		cs := make([]citebook.Chunk, len(b.chunks))
		for i, c := range b.chunks {
			c.Version = 1
			cs[i] = c
		}
		require.NoError(t, db.SaveChunks(ctx, cs))
		require.NoError(t, db.Activate(ctx, id, 1))
	}
	r := books["r-intro"].chunks
	require.Greater(t, len(r), 100, "R-intro splits into many chunks")
	all := make([]string, len(r))
	var kept []citebook.Chunk
	for i, c := range r {
		all[i] = c.ID
		if i%10 == 3 {
			continue
		}
		c.Version, c.Ordinal = 2, len(kept)
		kept = append(kept, c)
	}
	require.NoError(t, db.CreateVersion(ctx, citebook.Version{BookID: "r-intro", Number: 2, Chunks: len(kept)}))
	require.NoError(t, db.RetireChunks(ctx, "r-intro", all, 2))
	require.NoError(t, db.SaveChunks(ctx, kept))
	if activate2 {
		require.NoError(t, db.Activate(ctx, "r-intro", 2))
	}

	// A question's worth of IDs: both ends of each book, chunks spread
	// through R-intro, one in its middle that version 2 dropped, the same
	// ID twice, and an ID no book has.
	d := books["dtc"].chunks
	dropped = r[len(r)/20*10+3].ID
	ids = []string{r[0].ID, r[len(r)-1].ID, d[0].ID, d[len(d)-1].ID, d[len(d)/2].ID, dropped, "no-such-chunk", r[0].ID}
	for i := 7; i < len(r); i += len(r) / 14 {
		ids = append(ids, r[i].ID)
	}
	return ids, dropped
}

// TestNeighboursBatchedEqualsPerChunk checks on real books that the batched
// lookup returns exactly what the per-chunk lookup did, for the served
// version before and after a re-index is activated and for several n.
func TestNeighboursBatchedEqualsPerChunk(t *testing.T) {
	for _, activate := range []bool{false, true} {
		t.Run(fmt.Sprintf("activate=%v", activate), func(t *testing.T) {
			dbtest.Each(t, func(t *testing.T, target string) { testNeighboursBatched(t, target, activate) })
		})
	}
}

func testNeighboursBatched(t *testing.T, target string, activate bool) {
	ctx := context.Background()
	ids, dropped := libraryDB(t, target, activate)
	db, err := Open(ctx, target)
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	for _, n := range []int{-1, 0, 1, 2, 5} {
		want, err := db.neighboursLoop(ctx, ids, n)
		require.NoError(t, err)
		got, err := db.Neighbours(ctx, ids, n)
		require.NoError(t, err)
		require.Equal(t, want, got, "activate=%v n=%d", activate, n)
		require.NotContains(t, got, "no-such-chunk")
		if activate {
			require.NotContains(t, got, dropped, "a chunk the served version dropped has no neighbours")
		} else {
			require.Len(t, got[dropped], 2*max(n, 0)+1, "version 1 is served until Activate")
		}
	}
	got, err := db.Neighbours(ctx, nil, 1)
	require.NoError(t, err)
	require.Empty(t, got)
}

// TestNeighboursOneRoundTrip counts the statements the database driver
// prepares: the batched lookup of a question's chunks is one, the
// per-chunk loop it replaced two per chunk.
func TestNeighboursOneRoundTrip(t *testing.T) {
	ctx := context.Background()
	path := filepath.Join(t.TempDir(), "meta.db")
	ids, _ := libraryDB(t, path, true)
	db, count := countingDB(t, path)

	before := count.Load()
	got, err := db.Neighbours(ctx, ids, 1)
	require.NoError(t, err)
	require.NotEmpty(t, got)
	require.Equal(t, int64(1), count.Load()-before, "one statement for %d chunks", len(ids))

	found := 0
	for _, id := range ids {
		if _, ok := got[id]; ok {
			found++
		}
	}
	require.Less(t, found, len(ids), "some IDs are unknown in the served version")
	before = count.Load()
	_, err = db.neighboursLoop(ctx, ids, 1)
	require.NoError(t, err)
	require.Equal(t, int64(len(ids)+found), count.Load()-before, "the per-chunk loop: two per found chunk, one per unknown")
}

// countingDB opens the database at path through a driver wrapper that
// counts prepared statements (database/sql prepares every query when the
// connection offers no direct query method).
func countingDB(t testing.TB, path string) (*DB, *atomic.Int64) {
	t.Helper()
	probe, err := sql.Open("sqlite", "file:"+path)
	require.NoError(t, err)
	drv := probe.Driver()
	require.NoError(t, probe.Close())
	var n atomic.Int64
	sdb := sql.OpenDB(countingConnector{drv: drv, dsn: "file:" + path, n: &n})
	t.Cleanup(func() { sdb.Close() })
	return &DB{db: &SQL{db: sdb, bind: sqliteDialect.bind}, d: sqliteDialect}, &n
}

type countingConnector struct {
	drv driver.Driver
	dsn string
	n   *atomic.Int64
}

func (c countingConnector) Connect(context.Context) (driver.Conn, error) {
	conn, err := c.drv.Open(c.dsn)
	if err != nil {
		return nil, err
	}
	return countingConn{Conn: conn, n: c.n}, nil
}

func (c countingConnector) Driver() driver.Driver { return c.drv }

// countingConn exposes only driver.Conn and PrepareContext, so every query
// goes through PrepareContext and is counted.
type countingConn struct {
	driver.Conn
	n *atomic.Int64
}

func (c countingConn) PrepareContext(ctx context.Context, query string) (driver.Stmt, error) {
	c.n.Add(1)
	return c.Conn.(driver.ConnPrepareContext).PrepareContext(ctx, query)
}

// BenchmarkNeighbours expands a question's worth of chunks (15 served IDs
// in R-intro and the device-tree paper, one neighbour either side, the qa
// default) with the batched lookup and, in the same iterations, with the
// per-chunk loop it replaced. It reports:
//
//	ns/op           batched lookup
//	per-chunk-ns/op the old loop on the same IDs
//	x-per-chunk     per-chunk time / batched time (above 1: batching wins)
func BenchmarkNeighbours(b *testing.B) {
	ctx := context.Background()
	path := filepath.Join(b.TempDir(), "meta.db")
	all, _ := libraryDB(b, path, true)
	db, err := Open(ctx, path)
	require.NoError(b, err)
	defer db.Close()
	// Served and distinct, as the retrieved chunks of a question are.
	found, err := db.Neighbours(ctx, all, 0)
	require.NoError(b, err)
	var ids []string
	for _, id := range all {
		if _, ok := found[id]; ok && !slices.Contains(ids, id) {
			ids = append(ids, id)
		}
	}
	require.GreaterOrEqual(b, len(ids), 15)
	ids = ids[:15]
	var batched, loop time.Duration
	for b.Loop() {
		t0 := time.Now()
		if _, err := db.Neighbours(ctx, ids, 1); err != nil {
			b.Fatal(err)
		}
		t1 := time.Now()
		if _, err := db.neighboursLoop(ctx, ids, 1); err != nil {
			b.Fatal(err)
		}
		batched += t1.Sub(t0)
		loop += time.Since(t1)
	}
	n := float64(b.N)
	b.ReportMetric(float64(batched.Nanoseconds())/n, "ns/op")
	b.ReportMetric(float64(loop.Nanoseconds())/n, "per-chunk-ns/op")
	b.ReportMetric(float64(loop)/float64(batched), "x-per-chunk")
}
