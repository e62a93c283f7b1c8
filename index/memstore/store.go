// Package memstore is the zero-config vector store: one directory, no server.
//
// Durability is delegated to SQLite (modernc.org/sqlite, pure Go) in WAL mode
// with synchronous=FULL: every Upsert/Retire/Delete is one transaction, so a
// crash leaves either the whole batch or none of it, and SQLite's journal has
// far more crash testing than a hand-written log would. SQLite is only the
// durable copy; at Open every row is loaded into memory — from a snapshot
// saved beside the database when it matches it (snapshot.go), otherwise
// from SQLite — and searches never touch the database. The access filter is
// resolved first into the books and versions it admits and is checked on
// every row considered, so no top-k is ever filtered after the fact. Sparse
// queries over large scopes are scored exactly from a dimension-major copy
// of the vectors, reading only the query's non-zero dimensions
// (columns.go); other small scopes are scanned exactly row by row (cosine
// over L2-normalised float32 vectors in one contiguous slice, SIMD dot
// products from vek). A dense query over a scope of at least annMin rows is
// answered from an HNSW graph of the tenant's rows, built in the background
// after the first such search, checked against exact search on build (used
// only when its recall@10 reaches annMinRecall) and dropped by any write to
// the tenant; until a current graph exists the exact scan answers.
//
// Memory is the price of zero configuration: every vector stays resident
// twice, row- and dimension-major (100k chunks × 384 dims ≈ 300 MB, outside
// the Go heap; a tenant's graph keeps its own copy), so libraries of millions
// of chunks belong in Milvus.
package memstore

import (
	"cmp"
	"container/heap"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sort"
	"sync"
	"sync/atomic"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/internal/rowset"
	"github.com/citebook/citebook/index/internal/sqlitefile"
	"github.com/viterin/vek/vek32"
)

// what names the store in errors.
const what = "vector store"

// parallelMin is the candidate count below which one goroutine scores
// faster than fanning out.
const parallelMin = 2048

// Store is a persisted, in-memory vector index implementing
// index.VectorStore. It is safe for concurrent readers and writers; writers
// are serialised.
type Store struct {
	db  *sql.DB
	dir string
	// snapGen is the database generation of the snapshot on disk
	// (noSnapshot when there is none).
	snapGen uint64
	// dataVer is the file's data_version when memory was loaded; once
	// another process commits it differs and no snapshot is saved, since
	// memory may lack that process's rows (reload.go).
	dataVer int64

	// scans counts column scans running, so a scan fans out over the
	// cores only when it runs alone (columns.go).
	scans atomic.Int32
	// lastScan is when the latest column scan ended, as time since opened
	// (monotonic), so a scan can tell a stream of searches from a lone one.
	lastScan atomic.Int64
	opened   time.Time
	scanIdle time.Duration // scanIdle; tests set 0 to split every lone scan
	// workers is how many goroutines a lone scan splits into: GOMAXPROCS
	// when the store was opened (the CPUs), not a spare processor serve
	// may add once the library is loaded (library.Serve.Procs), on which
	// one more part would only time-slice the cores.
	workers int

	wmu sync.Mutex   // serialises writers so SQLite and memory apply in one order
	mu  sync.RWMutex // guards everything below
	dim int
	// vecs holds row i's normalised vector at vecs[i*dim:(i+1)*dim]; cols
	// holds the same vectors dimension-major in tiles (see columns.go).
	vecs []float32
	cols [][]float32
	// codes holds the columns' int8 codes, tile by tile like cols, and
	// scale each row's step (columns.go).
	codes [][]int8
	scale []float32
	mem   arena // where vecs, cols and codes live (off the Go heap)
	// pend collects rows for setColumnsBatch while a snapshot loads.
	pend struct {
		on bool
		rs []int32
		vs [][]float32
	}
	// colsOnly says the store keeps no row-major copy (vecs stays empty):
	// decided by the first vector stored (see sparseShare).
	colsOnly, decided bool
	rows              []row
	free              []int32
	byID              map[string]int32
	books             map[bookKey]*bookRows
	parents           map[string]int32 // interned parent IDs, so deny checks compare ints
	closed            bool
	// gens counts writes per tenant; a tenant's graph is valid only while
	// the count is the one it was built at (a write drops it at once).
	gens   map[string]uint64
	graphs map[string]*graph
	wrote  map[string]time.Time // last write per tenant
	quiet  time.Duration        // annQuiet; tests shorten it

	// cands caches the rows recent filters admit (rowset owns resolving
	// filters); every write empties it.
	cands rowset.Cache
	// owner names the rows as they are since their last change: put and
	// remove clear it, the end of each write (renew) makes a new one, so a
	// hit's RowRef names its row only while nothing changed (rows are
	// reused, see free; index.Follower keys its lifespans by them). nil:
	// hits carry no RowRef.
	owner *citebook.RowOwner

	gmu      sync.Mutex // guards building
	building map[string]bool
	done     chan struct{} // closed by Close to stop graph builds
	bg       sync.WaitGroup
}

type bookKey struct{ tenant, book string }

// row is the metadata of one slot; a deleted slot is zeroed and sits in the
// free list.
type row struct {
	chunk   citebook.Chunk
	version int
	retired int
	parent  int32
	pos     int32 // index inside its bookRows.rows
	book    *bookRows
}

type bookRows struct{ rows []int32 }

// Open opens (creating when needed) the store persisted under dir and loads
// it into memory.
func Open(ctx context.Context, dir string) (*Store, error) {
	db, err := sqlitefile.Open(dir, "vectors.db", what)
	if err != nil {
		return nil, err
	}
	s := &Store{
		db:       db,
		dir:      dir,
		snapGen:  noSnapshot,
		byID:     map[string]int32{},
		books:    map[bookKey]*bookRows{},
		parents:  map[string]int32{},
		gens:     map[string]uint64{},
		graphs:   map[string]*graph{},
		wrote:    map[string]time.Time{},
		quiet:    annQuiet,
		building: map[string]bool{},
		done:     make(chan struct{}),
		workers:  runtime.GOMAXPROCS(0),
		opened:   time.Now(),
		scanIdle: scanIdle,
	}
	if err := s.init(ctx); err != nil {
		db.Close()
		return nil, err
	}
	s.renew()
	return s, nil
}

func (s *Store) init(ctx context.Context) error {
	s.dataVer, _ = sqlitefile.DataVersion(ctx, s.db)
	const schema = `
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS chunks (
	id      TEXT PRIMARY KEY,
	book_id TEXT NOT NULL,
	retired INTEGER NOT NULL DEFAULT 0,
	data    BLOB NOT NULL,
	vec     BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_book ON chunks (book_id);`
	if _, err := s.db.ExecContext(ctx, schema); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot initialise vector store")
	}
	var dim string
	err := s.db.QueryRowContext(ctx, `SELECT value FROM meta WHERE key='dimension'`).Scan(&dim)
	if err != nil && err != sql.ErrNoRows {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read vector store metadata")
	}
	if dim != "" {
		if err := json.Unmarshal([]byte(dim), &s.dim); err != nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "vector store metadata is corrupt")
		}
	}
	switch err := s.loadSnapshot(ctx, s.dir); {
	case err == nil:
		s.snapGen, _ = sqlitefile.Generation(ctx, s.db)
		return nil
	case !isStale(err):
		slog.Warn("vector store snapshot unreadable, rebuilding from the database", "dir", s.dir, "err", err)
		s.resetMemory()
		if dim != "" {
			json.Unmarshal([]byte(dim), &s.dim)
		}
	}
	if err := s.loadRows(ctx); err != nil {
		return err
	}
	// Save a snapshot for the next restart without delaying this one.
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.wmu.Lock()
		defer s.wmu.Unlock()
		if s.checkOpen() == nil {
			s.snapshotIfChanged(context.Background())
		}
	}()
	return nil
}

// loadRows reads every row from the database into memory.
func (s *Store) loadRows(ctx context.Context) error {
	// Sizing the arrays up front saves copying the vectors while they grow.
	var n int
	if err := s.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load vector store")
	}
	s.rows = make([]row, 0, n)
	s.vecs = s.mem.alloc(n * s.dim)[:0]
	rs, err := s.db.QueryContext(ctx, `SELECT retired, data, vec FROM chunks`)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load vector store")
	}
	defer rs.Close()
	var vec []float32
	for rs.Next() {
		var (
			retired   int
			data, raw []byte
			c         citebook.Chunk
		)
		if err := rs.Scan(&retired, &data, &raw); err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load vector store")
		}
		if err := json.Unmarshal(data, &c); err != nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "vector store row is corrupt")
		}
		if len(raw) != 4*s.dim {
			return citebook.Errorf(citebook.EINTERNAL, "vector store row %s has %d bytes of vector, want %d", c.ID, len(raw), 4*s.dim)
		}
		c.Retired = retired
		vec = decodeVec(raw, vec)
		s.put(c, vec) // put copies vec into s.vecs
	}
	if err := rs.Err(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load vector store")
	}
	return nil
}

// Dimension reports the vector dimension fixed by the first upsert (0 while
// the store is empty), so callers can check their embedder matches.
func (s *Store) Dimension() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return s.dim
}

// Len reports how many chunks are stored.
func (s *Store) Len() int {
	s.mu.RLock()
	defer s.mu.RUnlock()
	return len(s.byID)
}

// Upsert inserts or replaces chunks by ID; vectors[i] belongs to chunks[i].
// The first upsert fixes the store's dimension.
func (s *Store) Upsert(ctx context.Context, chunks []citebook.Chunk, vectors [][]float32) error {
	if len(chunks) != len(vectors) {
		return citebook.Errorf(citebook.EINVALID, "upsert got %d chunks but %d vectors", len(chunks), len(vectors))
	}
	if len(chunks) == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	s.mu.RLock()
	dim := s.dim
	s.mu.RUnlock()
	newDim := dim == 0
	if newDim {
		dim = len(vectors[0])
		if dim == 0 {
			return citebook.Errorf(citebook.EINVALID, "vectors must not be empty")
		}
	}
	norm := make([][]float32, len(vectors))
	for i, v := range vectors {
		if chunks[i].ID == "" {
			return citebook.Errorf(citebook.EINVALID, "chunk %d has no ID", i)
		}
		if len(v) != dim {
			return citebook.Errorf(citebook.EINVALID, "vector of chunk %s has dimension %d, the store holds %d", chunks[i].ID, len(v), dim)
		}
		if !finite(v) {
			return citebook.Errorf(citebook.EINVALID, "vector of chunk %s holds NaN or infinite values", chunks[i].ID)
		}
		norm[i] = normalize(v)
	}

	buf := make([]byte, 4*dim)
	err := sqlitefile.Write(ctx, s.db, what, func(tx *sql.Tx) error {
		if newDim {
			if _, err := tx.ExecContext(ctx, `INSERT OR REPLACE INTO meta(key, value) VALUES('dimension', ?)`, dim); err != nil {
				return err
			}
		}
		return sqlitefile.Each(ctx, tx, `INSERT OR REPLACE INTO chunks(id, book_id, retired, data, vec) VALUES(?, ?, ?, ?, ?)`,
			len(chunks), func(i int) ([]any, error) {
				data, err := json.Marshal(&chunks[i])
				return []any{chunks[i].ID, chunks[i].BookID, chunks[i].Retired, data, encodeVec(norm[i], buf)}, err
			})
	})
	if err != nil {
		return err
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	s.dim = dim
	for i := range chunks {
		s.put(chunks[i].Clone(), norm[i])
	}
	s.renew()
	return nil
}

// Retire sets Retired=version on the given chunks of a book; IDs of other
// books or unknown IDs are ignored.
func (s *Store) Retire(ctx context.Context, bookID string, ids []string, version int) error {
	return s.write(ctx, `UPDATE chunks SET retired=? WHERE id=? AND book_id=?`, len(ids),
		func(i int) ([]any, error) { return []any{version, ids[i], bookID}, nil },
		func() {
			s.forget()
			for _, id := range ids {
				if i, ok := s.byID[id]; ok && s.rows[i].chunk.BookID == bookID {
					s.rows[i].retired = version
					s.rows[i].chunk.Retired = version
				}
			}
		})
}

// Delete removes chunks by ID; missing IDs are not an error.
func (s *Store) Delete(ctx context.Context, ids []string) error {
	return s.write(ctx, `DELETE FROM chunks WHERE id=?`, len(ids),
		func(i int) ([]any, error) { return []any{ids[i]}, nil },
		func() {
			for _, id := range ids {
				s.remove(id)
			}
		})
}

// write runs stmt n times in one transaction (args(i) gives the arguments)
// and, once committed, applies the change to memory, so memory never holds
// what the disk lost.
func (s *Store) write(ctx context.Context, stmt string, n int, args func(int) ([]any, error), apply func()) error {
	if n == 0 {
		return nil
	}
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	err := sqlitefile.Write(ctx, s.db, what, func(tx *sql.Tx) error {
		return sqlitefile.Each(ctx, tx, stmt, n, args)
	})
	if err != nil {
		return err
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	apply()
	s.renew()
	return nil
}

// IDs lists the IDs of every stored chunk of a book, sorted.
func (s *Store) IDs(ctx context.Context, bookID string) ([]string, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed()
	}
	ids := []string{}
	for k, b := range s.books {
		if k.book != bookID {
			continue
		}
		for _, r := range b.rows {
			ids = append(ids, s.rows[r].chunk.ID)
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Get returns stored chunks by ID; unknown IDs are skipped.
func (s *Store) Get(ctx context.Context, ids []string) ([]citebook.Chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed()
	}
	out := make([]citebook.Chunk, 0, len(ids))
	for _, id := range ids {
		if i, ok := s.byID[id]; ok {
			out = append(out, s.rows[i].chunk.Clone())
		}
	}
	return out, nil
}

// Close releases the database; the store cannot be used afterwards. It
// waits for a graph build in progress to notice and stop.
func (s *Store) Close() error {
	s.wmu.Lock()
	if s.checkOpen() != nil {
		s.wmu.Unlock()
		return nil
	}
	s.snapshotIfChanged(context.Background())
	s.mu.Lock()
	s.closed = true
	close(s.done)
	s.freeVectors()
	s.rows, s.byID, s.books, s.graphs = nil, nil, nil, nil
	s.mu.Unlock()
	// Background work (a graph build, a snapshot) may wait for wmu, so it
	// is released before waiting for that work to notice the close.
	s.wmu.Unlock()
	s.bg.Wait()
	if err := s.db.Close(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot close vector store")
	}
	return nil
}

// Search returns the k chunks most similar (cosine) to vec among those the
// filter admits. The filter is resolved to candidate rows before any vector
// is scored.
func (s *Store) Search(ctx context.Context, vec []float32, f citebook.Filter, k int) ([]citebook.Hit, error) {
	if k <= 0 {
		return []citebook.Hit{}, nil
	}
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed()
	}
	if s.dim == 0 {
		return []citebook.Hit{}, nil
	}
	if len(vec) != s.dim {
		return nil, citebook.Errorf(citebook.EINVALID, "query vector has dimension %d, the store holds %d", len(vec), s.dim)
	}
	if !finite(vec) {
		return nil, citebook.Errorf(citebook.EINVALID, "query vector holds NaN or infinite values")
	}
	q := normalize(vec)
	upper := rowset.Upper(s.view(), &f)
	if upper == 0 {
		return []citebook.Hit{}, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "search cancelled")
	}
	var top []scored
	nz := nonzero(q)
	if s.colsOnly {
		adm := s.admitted(&f)
		if len(adm.rows) == 0 {
			return []citebook.Hit{}, nil
		}
		top = s.scoreColumns(q, nz, adm, min(k, len(adm.rows)))
	}
	// A sparse query (the builtin embedder's) over a large scope is scored
	// column by column, exactly; otherwise the graph or the row scan.
	// (A tile scan can only be cheaper when the padded non-zeros number
	// fewer than the dimensions, so dense queries skip resolving rows.)
	if top == nil && upper >= tileRows && len(nz) > 0 && (len(nz)+3)&^3 < s.dim {
		adm := s.admitted(&f)
		if len(adm.rows) == 0 {
			return []citebook.Hit{}, nil
		}
		if columnCheaper(len(nz), adm, s.dim) {
			top = s.scoreColumns(q, nz, adm, min(k, len(adm.rows)))
		} else {
			top = s.score(q, adm.rows, min(k, len(adm.rows)))
		}
	}
	if top == nil {
		top = s.searchGraph(q, upper, &f, k)
	}
	if top == nil {
		cand := s.admitted(&f).rows
		if len(cand) == 0 {
			return []citebook.Hit{}, nil
		}
		top = s.score(q, cand, min(k, len(cand)))
	}
	hits := make([]citebook.Hit, len(top))
	for i, sc := range top {
		hits[i] = citebook.Hit{Chunk: s.rows[sc.row].chunk.Clone(), Score: float64(sc.score),
			Ref: citebook.RowRef{Owner: s.owner, Row: sc.row}}
	}
	return hits, nil
}

// view is the store's rows as rowset resolves filters against them; its
// methods read without locking, so callers hold mu.
type view Store

func (s *Store) view() *view { return (*view)(s) }

func (v *view) Len() int { return len(v.rows) }

func (v *view) Book(tenant, bookID string) []int32 {
	if br := v.books[bookKey{tenant, bookID}]; br != nil {
		return br.rows
	}
	return nil
}

func (v *view) Meta(r int32) rowset.Meta {
	m := &v.rows[r]
	return rowset.Meta{Version: m.version, Retired: m.retired, Parent: m.parent}
}

func (v *view) Parent(id string) (int32, bool) {
	p, ok := v.parents[id]
	return p, ok
}

// admitted is the rows f admits, from the cache when f was resolved since
// the last write, with the tiles the column scan visits. Callers hold mu
// for reading; writers empty the cache under mu.
func (s *Store) admitted(f *citebook.Filter) *admitted {
	set := s.cands.Get(s.view(), f)
	return &admitted{Set: set, rows: set.Rows, tiles: set.Blocks(tileRows)}
}

// searchGraph answers from the tenant's HNSW graph when the scope is large
// (at least annMin rows, and at least half the graph, so the filtered walk
// stays short) and the graph is current; it returns nil when the exact scan
// must answer instead, scheduling a graph build when one is missing and the
// tenant has not been written for annQuiet.
func (s *Store) searchGraph(q []float32, upper int, f *citebook.Filter, k int) []scored {
	if upper < annMin {
		return nil
	}
	tenant := f.Tenant
	g := s.graphs[tenant]
	if g == nil || g.gen != s.gens[tenant] {
		if time.Since(s.wrote[tenant]) >= s.quiet {
			s.scheduleBuild(tenant)
		}
		return nil
	}
	if !g.usable || 2*upper < len(g.rows) {
		return nil
	}
	adm := s.cands.Get(s.view(), f)
	found := g.search(q, max(annEf, 4*k), adm.Has)
	if len(found) < k {
		// The filter admits fewer rows than the walk could reach; only a
		// scan of every admitted row is sure to find them all.
		return nil
	}
	top := make([]scored, k)
	for i := range top {
		top[i] = scored{g.rows[found[i].id], found[i].sim}
	}
	return top
}

// scheduleBuild starts building the tenant's graph in the background unless
// a build is already running. Callers hold mu (read or write).
func (s *Store) scheduleBuild(tenant string) {
	s.gmu.Lock()
	defer s.gmu.Unlock()
	if s.building[tenant] {
		return
	}
	s.building[tenant] = true
	s.bg.Add(1)
	go func() {
		defer s.bg.Done()
		s.buildGraph(tenant)
		s.gmu.Lock()
		delete(s.building, tenant)
		s.gmu.Unlock()
	}()
}

// buildGraph snapshots the tenant's rows and vectors, links them into a
// graph without holding the lock, and installs it if the tenant was not
// written meanwhile. It returns early when the store closes.
func (s *Store) buildGraph(tenant string) {
	t0 := time.Now()
	s.mu.RLock()
	if s.closed {
		s.mu.RUnlock()
		return
	}
	gen := s.gens[tenant]
	var rows []int32
	for k, br := range s.books {
		if k.tenant == tenant {
			rows = append(rows, br.rows...)
		}
	}
	sort.Slice(rows, func(i, j int) bool { return rows[i] < rows[j] })
	g := newGraph(s.dim, len(rows), gen, uint64(len(rows)))
	for _, r := range rows {
		g.rows = append(g.rows, r)
		g.vecs = append(g.vecs, s.rowVec(r, nil)...)
	}
	s.mu.RUnlock()
	// Half the cores build, so searches keep being served meanwhile.
	if !g.build(max(1, runtime.GOMAXPROCS(0)/2), s.done) {
		return
	}
	g.recall = g.selfRecall(annCheckQueries)
	g.usable = g.recall >= annMinRecall
	slog.Info("vector graph built", "tenant", tenant, "nodes", len(rows), "took", time.Since(t0).Round(time.Millisecond),
		"recall@10", g.recall, "used", g.usable)
	if !g.usable {
		// Kept only as a marker that this generation was tried, so the
		// tenant is not rebuilt until it is written again.
		g.vecs, g.rows, g.links, g.locks, g.levels = nil, nil, nil, nil, nil
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if !s.closed && s.gens[tenant] == gen {
		s.graphs[tenant] = g
	}
}

type scored struct {
	row   int32
	score float32
}

// minHeap keeps the k best scores seen so far with the worst on top.
type minHeap []scored

func (h minHeap) Len() int { return len(h) }
func (h minHeap) Less(i, j int) bool {
	if h[i].score != h[j].score {
		return h[i].score < h[j].score
	}
	return h[i].row > h[j].row
}
func (h minHeap) Swap(i, j int) { h[i], h[j] = h[j], h[i] }
func (h *minHeap) Push(x any)   { *h = append(*h, x.(scored)) }
func (h *minHeap) Pop() any {
	old := *h
	x := old[len(old)-1]
	*h = old[:len(old)-1]
	return x
}

// score ranks cand by float32 cosine, best first.
func (s *Store) score(q []float32, cand []int32, k int) []scored {
	var top minHeap
	s.fanOut(cand, k, func(part []int32) minHeap { return s.scan(q, part, k) }, &top)
	return sorted(top)
}

// fanOut runs scan over cand (split across s.workers goroutines when it is
// large) and leaves the best k of all parts in *top.
func (s *Store) fanOut(cand []int32, k int, scan func([]int32) minHeap, top *minHeap) {
	workers := s.workers
	if len(cand) < parallelMin || workers < 2 {
		*top = scan(cand)
		return
	}
	per := (len(cand) + workers - 1) / workers
	parts := make([]minHeap, workers)
	var wg sync.WaitGroup
	for w := 0; w < workers; w++ {
		lo := w * per
		if lo >= len(cand) {
			break
		}
		hi := min(lo+per, len(cand))
		wg.Add(1)
		go func(w int, part []int32) {
			defer wg.Done()
			parts[w] = scan(part)
		}(w, cand[lo:hi])
	}
	wg.Wait()
	all := parts[0]
	for _, p := range parts[1:] {
		all = append(all, p...)
	}
	all = sorted(all)
	if len(all) > k {
		all = all[:k]
	}
	*top = all
}

func (s *Store) scan(q []float32, cand []int32, k int) minHeap {
	h := make(minHeap, 0, k)
	dim := s.dim
	for _, r := range cand {
		off := int(r) * dim
		sc := dot(q, s.vecs[off:off+dim])
		if len(h) < k {
			heap.Push(&h, scored{r, sc})
		} else if sc > h[0].score || (sc == h[0].score && r < h[0].row) {
			h[0] = scored{r, sc}
			heap.Fix(&h, 0)
		}
	}
	return h
}

// sorted orders results best first, ties by row for a stable order.
func sorted(h minHeap) []scored {
	out := []scored(h)
	sort.Slice(out, func(i, j int) bool {
		if out[i].score != out[j].score {
			return out[i].score > out[j].score
		}
		return out[i].row < out[j].row
	})
	return out
}

// dot is the SIMD dot product of vek (AVX2/AVX-512 where the CPU has them,
// plain Go elsewhere): it halves the CPU of a scan against an unrolled Go
// loop, where int8 quantisation in plain Go measured no gain at all.
func dot(a, b []float32) float32 { return vek32.Dot(a, b[:len(a)]) }

// normalize returns a unit-length copy of v (a zero vector stays zero).
func normalize(v []float32) []float32 {
	var ss float64
	for _, x := range v {
		ss += float64(x) * float64(x)
	}
	out := make([]float32, len(v))
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(float64(x) * inv)
	}
	return out
}

// renew names the rows anew after a change (owner). Callers hold mu (or
// are in Open).
func (s *Store) renew() {
	if s.owner == nil {
		s.owner = new(citebook.RowOwner)
	}
}

// put stores c with its normalised vector in memory, replacing any row with
// the same ID. Callers hold mu (or are in Open).
func (s *Store) put(c citebook.Chunk, v []float32) {
	s.owner = nil
	if s.dim == 0 {
		s.dim = len(v)
	}
	if !s.decided {
		s.decided = true
		s.colsOnly = sparse(v)
		if s.colsOnly {
			s.mem.free(s.vecs) // a size hint from Open, never touched
			s.vecs = nil
		}
	}
	s.remove(c.ID)
	var r int32
	if n := len(s.free); n > 0 {
		r = s.free[n-1]
		s.free = s.free[:n-1]
		if !s.colsOnly {
			copy(s.vecs[int(r)*s.dim:], v)
		}
	} else {
		r = int32(len(s.rows))
		s.rows = append(s.rows, row{})
		if !s.colsOnly {
			s.vecs = s.mem.grow(s.vecs, len(s.vecs)+s.dim)
			copy(s.vecs[int(r)*s.dim:], v)
		}
	}
	if s.pend.on {
		s.pend.rs = append(s.pend.rs, r)
		s.pend.vs = append(s.pend.vs, slices.Clone(v))
	} else {
		s.setColumns(r, v)
	}
	pid, ok := s.parents[c.ParentID]
	if !ok {
		pid = int32(len(s.parents))
		s.parents[c.ParentID] = pid
	}
	key := bookKey{c.Tenant, c.BookID}
	br := s.books[key]
	if br == nil {
		br = &bookRows{}
		s.books[key] = br
	}
	s.rows[r] = row{chunk: c, version: c.Version, retired: c.Retired, parent: pid, pos: int32(len(br.rows)), book: br}
	s.touch(c.Tenant)
	br.rows = append(br.rows, r)
	s.byID[c.ID] = r
}

// remove drops the row of id from memory; the slot is reused by later puts.
func (s *Store) remove(id string) {
	s.owner = nil
	r, ok := s.byID[id]
	if !ok {
		return
	}
	m := &s.rows[r]
	s.touch(m.chunk.Tenant)
	key := bookKey{m.chunk.Tenant, m.chunk.BookID}
	br := m.book
	last := br.rows[len(br.rows)-1]
	br.rows[m.pos] = last
	s.rows[last].pos = m.pos
	br.rows = br.rows[:len(br.rows)-1]
	if len(br.rows) == 0 {
		delete(s.books, key)
	}
	*m = row{}
	delete(s.byID, id)
	s.free = append(s.free, r)
}

// touch records a write to the tenant's rows, dropping its graph, which no
// longer maps nodes to the right rows. Callers hold mu.
func (s *Store) touch(tenant string) {
	s.gens[tenant]++
	s.wrote[tenant] = time.Now()
	delete(s.graphs, tenant)
	s.forget()
}

// forget empties the filter cache. Callers hold mu for writing.
func (s *Store) forget() { s.cands.Invalidate() }

func (s *Store) checkOpen() error {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return errClosed()
	}
	return nil
}

func errClosed() error {
	return citebook.Errorf(citebook.EUNAVAILABLE, "vector store is closed")
}

func encodeVec(v []float32, buf []byte) []byte {
	for i, x := range v {
		binary.LittleEndian.PutUint32(buf[4*i:], math.Float32bits(x))
	}
	return buf[:4*len(v)]
}

func decodeVec(b []byte, out []float32) []float32 {
	n := len(b) / 4
	if cap(out) < n {
		out = make([]float32, n)
	}
	out = out[:n]
	for i := range out {
		out[i] = math.Float32frombits(binary.LittleEndian.Uint32(b[4*i:]))
	}
	return out
}

func finite(v []float32) bool {
	for _, x := range v {
		if math.IsNaN(float64(x)) || math.IsInf(float64(x), 0) {
			return false
		}
	}
	return true
}

// ChunksAt returns a book's chunks visible in version, in reading order,
// from memory: the store holds every chunk whole, so book routing reads a
// book's chunks without decoding them from the metadata database (1.3 s of
// CPU for 100k chunks on the first question after a restart).
// index.FreshBooks checks the result against the metadata.
func (s *Store) ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error) {
	s.mu.RLock()
	defer s.mu.RUnlock()
	if s.closed {
		return nil, errClosed()
	}
	var out []citebook.Chunk
	for key, br := range s.books {
		if key.book != bookID {
			continue
		}
		for _, r := range br.rows {
			m := &s.rows[r]
			if m.version <= version && (m.retired == 0 || m.retired > version) {
				c := m.chunk.Clone()
				c.Version, c.Retired = m.version, m.retired
				out = append(out, c)
			}
		}
	}
	slices.SortFunc(out, func(a, b citebook.Chunk) int { return cmp.Compare(a.Ordinal, b.Ordinal) })
	return out, ctx.Err()
}
