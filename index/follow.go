package index

import (
	"context"
	"log/slog"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/citebook/citebook"
)

// One library, two processes: `citebook serve` keeps the embedded vector
// store and the lexical index in memory, while `citebook index` (another
// process) writes the same files. The metadata database logs every switch
// of a book's served version and every deletion with a generation number,
// in the transaction that makes the change. A Follower polls that log and
// reloads the changed books from the stores' files, and the retrieval
// wrappers (FreshVectors, FreshLexical) sync before every search and drop
// any hit the metadata does not show visible in the version the filter
// names, so a chunk another process retired or deleted is never returned,
// even between polls.

// Changes is what the change log holds after a generation.
type Changes struct {
	Gen   int64    // the newest generation
	Books []string // books other handles changed after the generation asked about
	All   bool     // the log no longer reaches back that far: reload everything
}

// Lifespan is one metadata row of a chunk: visible in versions
// [Version, Retired) of its book, Retired 0 meaning still current.
type Lifespan struct {
	BookID  string
	Version int
	Retired int
}

// ChangeLog is the metadata a Follower reads (index/metadb.DB).
type ChangeLog interface {
	Changes(ctx context.Context, since int64) (Changes, error)
	ChunkLifespans(ctx context.Context, ids []string) (map[string][]Lifespan, error)
}

// Reloader is an in-memory index whose durable copy another process may
// write: ReloadBooks re-reads the given books (nil: every book) from it.
type Reloader interface {
	ReloadBooks(ctx context.Context, bookIDs []string) error
}

// Follower keeps a process's in-memory indexes in step with changes other
// processes make to the library.
//
// Invariant of the lifespan cache: a chunk's visibility in the versions a
// filter can name (a book's active version or an older one) changes only in
// transactions that log a change — a version switch or a deletion; what a
// build writes before its switch (new rows, retirements at the unserved
// version, a discard) is invisible to every such filter. So lifespans read
// after the follower saw generation g answer for g until the next logged
// change, and every search syncs first (or its question did, see Begin): a
// hit is checked against the metadata as it was at that sync, as before,
// with one query for the chunks not seen since the last change instead of
// one per search.
type Follower struct {
	log    ChangeLog
	lg     *slog.Logger
	mu     sync.Mutex // one sync at a time
	gen    atomic.Int64
	begun  atomic.Int64 // syncs that have read the log, for coalescing
	stores []Reloader

	cmu   sync.RWMutex
	cgen  int64                 // generation the cached lifespans answer for
	spans map[string][]Lifespan // chunk ID → lifespans; an empty entry: no metadata rows
	// byRow holds spans' entries again by the store rows hits name
	// (citebook.RowRef), one table per RowOwner (the latest maxRowTables),
	// emptied with spans: a hit's row finds its lifespans in a slice where
	// its chunk ID took a look-up in a map of every chunk seen (100 hits:
	// 40–60 against 150–180 µs, BenchmarkVisibleCached; visibleCached was
	// 5% of a search's CPU under bench/load.sh, mostly in that map).
	byRow []rowSpans
}

// rowSpans is the lifespan cache by the rows of one RowOwner: spans[r] is
// the cached lifespans of the chunk at row r, nil when not noted. Under
// one owner a row holds one chunk, so its lifespans are that chunk ID's
// entry in Follower.spans.
type rowSpans struct {
	owner *citebook.RowOwner
	spans [][]Lifespan
}

// maxRowTables bounds Follower.byRow: a store names its rows anew at each
// write, so the tables of older owners are dropped, oldest first.
const maxRowTables = 4

// rowCached returns the lifespans byRow holds for ref's row. Callers hold
// cmu.
func (f *Follower) rowCached(ref citebook.RowRef) ([]Lifespan, bool) {
	if ref.Owner == nil || ref.Row < 0 {
		return nil, false
	}
	for i := range f.byRow {
		t := &f.byRow[i]
		if t.owner == ref.Owner {
			if int(ref.Row) >= len(t.spans) {
				return nil, false
			}
			l := t.spans[ref.Row]
			return l, l != nil
		}
	}
	return nil, false
}

// noteRows puts into byRow the lifespans of hits (found in spans by
// their chunk IDs) when the cache still answers for gen. Callers hold cmu
// for writing.
func (f *Follower) noteRows(gen int64, hits []citebook.Hit) {
	if f.cgen != gen || f.spans == nil {
		return
	}
	for _, h := range hits {
		ref := h.Ref
		l, ok := f.spans[h.Chunk.ID]
		if ref.Owner == nil || ref.Row < 0 || !ok {
			continue
		}
		t := f.rowTable(ref.Owner)
		if int(ref.Row) >= len(t.spans) {
			t.spans = append(t.spans, make([][]Lifespan, int(ref.Row)+1-len(t.spans))...)
		}
		t.spans[ref.Row] = l
	}
}

// rowTable is owner's table, made (dropping the oldest beyond
// maxRowTables) when there is none. Callers hold cmu for writing.
func (f *Follower) rowTable(owner *citebook.RowOwner) *rowSpans {
	for i := range f.byRow {
		if f.byRow[i].owner == owner {
			return &f.byRow[i]
		}
	}
	if len(f.byRow) == maxRowTables {
		f.byRow = slices.Delete(f.byRow, 0, 1)
	}
	f.byRow = append(f.byRow, rowSpans{owner: owner})
	return &f.byRow[len(f.byRow)-1]
}

// maxCachedSpans bounds the lifespan cache (about 100 bytes an entry); a
// full cache starts over.
const maxCachedSpans = 1 << 16

// NewFollower starts following at the log's current generation. Create it
// before opening the in-memory stores, so a change committed while they
// load is reloaded rather than missed.
func NewFollower(ctx context.Context, log ChangeLog, lg *slog.Logger) (*Follower, error) {
	ch, err := log.Changes(ctx, 0)
	if err != nil {
		return nil, err
	}
	if lg == nil {
		lg = slog.Default()
	}
	f := &Follower{log: log, lg: lg}
	f.gen.Store(ch.Gen)
	return f, nil
}

// Follow adds stores to reload; a Milvus store needs none (it is shared).
func (f *Follower) Follow(stores ...Reloader) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.stores = append(f.stores, stores...)
}

// Sync reloads what other processes changed since the last sync. It costs
// one indexed query when nothing changed, and concurrent callers share it:
// a caller that waited for the lock while a sync that began after its call
// ran to completion takes that sync's result, as fresh as its own would be.
func (f *Follower) Sync(ctx context.Context) error {
	seen := f.begun.Load()
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.begun.Load() > seen {
		// A sync that began after this call, under the lock, so it has
		// completed, and it succeeded: a failed one takes its count back
		// (which can only make this test fail more often).
		return nil
	}
	f.begun.Add(1)
	if err := f.sync(ctx); err != nil {
		f.begun.Add(-1) // a failed sync covers no one
		return err
	}
	return nil
}

func (f *Follower) sync(ctx context.Context) error {
	gen := f.gen.Load()
	ch, err := f.log.Changes(ctx, gen)
	if err != nil {
		return err
	}
	if ch.Gen == gen {
		return nil
	}
	ids := ch.Books
	if ch.All {
		ids = nil
	} else if len(ids) == 0 {
		f.gen.Store(ch.Gen) // only this process's own changes
		return nil
	}
	t0 := time.Now()
	for _, s := range f.stores {
		if err := s.ReloadBooks(ctx, ids); err != nil {
			return citebook.Wrap(err, citebook.ErrorCode(err), "reloading books changed by another process")
		}
	}
	f.lg.Info("reloaded books changed by another process", "books", len(ids), "all", ch.All, "gen", ch.Gen,
		"took", time.Since(t0).Round(time.Millisecond))
	f.gen.Store(ch.Gen)
	return nil
}

// syncedKey marks a context whose searches a Follower has synced for.
type syncedKey struct{}

// Begin syncs and returns ctx marked so that the Fresh wrappers' searches
// under it do not sync again: one question runs several searches (vectors,
// keywords, the expanded and the title queries, again in the routed books),
// and a sync each was 3–4% of a search's CPU. Its searches then see the
// library as of the question's start, or newer, where before each search
// saw it as of that search's start — the same guarantee for a question
// that begins after a change: nothing another process retired or deleted
// before the question began is returned.
func (f *Follower) Begin(ctx context.Context) (context.Context, error) {
	if err := f.Sync(ctx); err != nil {
		return ctx, err
	}
	return context.WithValue(ctx, syncedKey{}, f), nil
}

// Generation returns the change log's generation as of now: after a sync,
// or the one a question begun with Begin synced to (or newer). Access
// caches key on it (acl.Resolver.Cache).
func (f *Follower) Generation(ctx context.Context) (int64, error) {
	if err := f.syncFor(ctx); err != nil {
		return 0, err
	}
	return f.gen.Load(), nil
}

// syncFor syncs unless ctx comes from this follower's Begin.
func (f *Follower) syncFor(ctx context.Context) error {
	if ctx.Value(syncedKey{}) == f {
		return nil
	}
	return f.Sync(ctx)
}

// Run syncs every interval until ctx ends, so changes show up even when
// nobody searches.
func (f *Follower) Run(ctx context.Context, every time.Duration) {
	t := time.NewTicker(every)
	defer t.Stop()
	for {
		select {
		case <-ctx.Done():
			return
		case <-t.C:
			if err := f.Sync(ctx); err != nil && ctx.Err() == nil {
				f.lg.Warn("cannot follow library changes", "err", err)
			}
		}
	}
}

// Visible keeps the hits whose chunk the metadata shows visible in a
// version the filter allows for its book.
func (f *Follower) Visible(ctx context.Context, hits []citebook.Hit, flt citebook.Filter) ([]citebook.Hit, error) {
	if len(hits) == 0 {
		return hits, nil
	}
	if out, ok := f.visibleCached(hits, flt); ok {
		return out, nil
	}
	gen := f.gen.Load()
	spans, err := f.lifespans(ctx, gen, hits)
	if err != nil {
		return nil, err
	}
	f.cmu.Lock()
	f.noteRows(gen, hits)
	f.cmu.Unlock()
	out := make([]citebook.Hit, 0, len(hits))
	for _, h := range hits {
		if visibleIn(spans[h.Chunk.ID], h.Chunk.BookID, flt) {
			out = append(out, h)
		}
	}
	return out, nil
}

// visibleCached is Visible when the cache holds every hit's lifespans for
// the generation the follower last synced to (the common case between
// changes), without building maps of them; ok is false otherwise.
func (f *Follower) visibleCached(hits []citebook.Hit, flt citebook.Filter) ([]citebook.Hit, bool) {
	gen := f.gen.Load()
	out, noted, ok := f.visibleCachedLocked(gen, hits, flt)
	if ok && !noted {
		// Some hits' rows were found by chunk ID: note them by row.
		f.cmu.Lock()
		f.noteRows(gen, hits)
		f.cmu.Unlock()
	}
	return out, ok
}

// visibleCachedLocked is visibleCached under cmu's read lock; noted is
// false when some hit with a RowRef was found by its chunk ID.
func (f *Follower) visibleCachedLocked(gen int64, hits []citebook.Hit, flt citebook.Filter) (out []citebook.Hit, noted, ok bool) {
	f.cmu.RLock()
	defer f.cmu.RUnlock()
	if f.cgen != gen || f.spans == nil {
		return nil, false, false
	}
	// Usually every hit is visible: then hits is returned as it is (it was
	// the store's fresh slice), and a copy is made only from the first hit
	// dropped (copying every list of ~80 hits was 9% of a search's bytes).
	noted = true
	for i, h := range hits {
		l, ok := f.rowCached(h.Ref)
		if !ok {
			if l, ok = f.spans[h.Chunk.ID]; !ok {
				return nil, false, false
			}
			noted = noted && h.Ref.Owner == nil
		}
		switch vis := visibleIn(l, h.Chunk.BookID, flt); {
		case !vis && out == nil:
			out = append(make([]citebook.Hit, 0, len(hits)-1), hits[:i]...)
		case vis && out != nil:
			out = append(out, h)
		}
	}
	if out == nil {
		return hits, noted, true
	}
	return out, noted, true
}

// lifespans returns the hits' lifespans, from the cache where it answers
// for the generation the follower last synced to and from the metadata for
// the rest.
func (f *Follower) lifespans(ctx context.Context, gen int64, hits []citebook.Hit) (map[string][]Lifespan, error) {
	out := make(map[string][]Lifespan, len(hits))
	var miss []string
	book := make(map[string]string)
	f.cmu.RLock()
	fresh := f.cgen == gen && f.spans != nil
	for _, h := range hits {
		if l, ok := f.spans[h.Chunk.ID]; ok && fresh {
			out[h.Chunk.ID] = l
		} else {
			miss = append(miss, h.Chunk.ID)
			book[h.Chunk.ID] = h.Chunk.BookID
		}
	}
	f.cmu.RUnlock()
	if len(miss) == 0 {
		return out, nil
	}
	// Read after gen was loaded, so these rows are at least as new as gen.
	got, err := f.log.ChunkLifespans(ctx, miss)
	if err != nil {
		return nil, err
	}
	f.cmu.Lock()
	defer f.cmu.Unlock()
	if f.cgen != gen || f.spans == nil || len(f.spans)+len(miss) > maxCachedSpans {
		if f.cgen > gen {
			// Another search cached a newer generation; keep it.
			for _, id := range miss {
				out[id] = got[id]
			}
			return out, nil
		}
		f.cgen, f.spans, f.byRow = gen, make(map[string][]Lifespan, len(miss)), nil
	}
	for _, id := range miss {
		l := got[id]
		if l == nil {
			l = []Lifespan{}
		}
		for i := range l {
			if l[i].BookID == book[id] {
				l[i].BookID = book[id] // share the store's string instead of holding the scanned copy
			}
		}
		f.spans[id], out[id] = l, l
	}
	return out, nil
}

func visibleIn(spans []Lifespan, bookID string, flt citebook.Filter) bool {
	for _, b := range flt.Books {
		if b.BookID != bookID {
			continue
		}
		for _, l := range spans {
			if l.BookID == bookID && l.Version <= b.Version && (l.Retired == 0 || l.Retired > b.Version) {
				return true
			}
		}
	}
	return false
}

// FreshVectors is a vector store as a process sharing its library sees it:
// synced before each search (or once for the question, see Begin), hits
// checked against the metadata.
type FreshVectors struct {
	VectorStore
	F *Follower
}

// Search syncs, searches and drops hits no longer visible.
func (v FreshVectors) Search(ctx context.Context, vec []float32, f citebook.Filter, k int) ([]citebook.Hit, error) {
	if err := v.F.syncFor(ctx); err != nil {
		return nil, err
	}
	hits, err := v.VectorStore.Search(ctx, vec, f, k)
	if err != nil {
		return nil, err
	}
	return v.F.Visible(ctx, hits, f)
}

// FreshLexical is FreshVectors for the lexical index.
type FreshLexical struct {
	LexicalIndex
	F *Follower
}

// Search syncs, searches and drops hits no longer visible.
func (x FreshLexical) Search(ctx context.Context, query string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	return x.SearchForms(ctx, query, nil, f, lib, k)
}

// SearchForms is Search with the query's terms matched in other forms.
func (x FreshLexical) SearchForms(ctx context.Context, query string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	if err := x.F.syncFor(ctx); err != nil {
		return nil, err
	}
	hits, err := x.LexicalIndex.SearchForms(ctx, query, forms, f, lib, k)
	if err != nil {
		return nil, err
	}
	return x.F.Visible(ctx, hits, f)
}
