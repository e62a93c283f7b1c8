// Package lexical is the keyword (BM25) side of hybrid retrieval.
//
// Chunks are stored durably in SQLite (modernc.org/sqlite, pure Go, WAL with
// synchronous=FULL, one transaction per write) and the inverted index lives
// in memory, rebuilt from that table at Open (or read back from a snapshot
// of it, snapshot.go). SQLite FTS5 was measured first: its bm25() ranking
// took ~100–200 ms for a common word over 100k chunks in the pure-Go build,
// while scoring posting lists in Go takes about a millisecond. Text is
// segmented by analysis.Terms (queries by analysis.QueryTerms), so English
// and Chinese need no tokenizer plugin, and the access filter is resolved to
// the set of admitted
// rows (index/internal/rowset, shared with the embedded vector store) before
// any posting is scored, so ranking only ever sees chunks the principal may
// read (that set is cached per filter until the next write), and BM25's
// statistics are counted over the reader's library alone (bm25Stats).
// Scoring is exact BM25 top-k with MaxScore pruning: rare terms are
// scored first, and once the k-th best score beats what the remaining
// common terms could add, those are only looked up for rows still in
// contention; survivors are rescored in query order so results are
// identical to scoring every posting. Queries are reduced to plain terms, so
// search syntax a user types can neither break nor widen a query.
package lexical

import (
	"cmp"
	"context"
	"database/sql"
	"encoding/binary"
	"encoding/json"
	"errors"
	"log/slog"
	"math"
	"runtime"
	"slices"
	"sort"
	"strings"
	"sync"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/internal/rowset"
	"github.com/citebook/citebook/index/internal/sqlitefile"
)

// what names the index in errors.
const what = "lexical index"

// BM25 parameters (the usual defaults).
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// Index is a persisted BM25 index implementing index.LexicalIndex; it is
// safe for concurrent readers and writers.
type Index struct {
	db  *sql.DB
	dir string
	// snapGen is the database generation of the snapshot on disk
	// (snapshot.go; noSnapshot when there is none); bg tracks a snapshot
	// being saved after a rebuild.
	snapGen uint64
	// dataVer is the file's data_version when memory was loaded; once
	// another process commits it differs and no snapshot is saved, since
	// memory may lack that process's rows (reload.go).
	dataVer int64
	bg      sync.WaitGroup

	wmu sync.Mutex   // serialises writers so SQLite and memory apply in one order
	mu  sync.RWMutex // guards everything below
	// rows are append-only between compactions; postings may still name a
	// deleted row, which no longer belongs to any book so never matches.
	rows     []lrow
	meta     []rmeta // compact copy of what the filter checks, by row
	parents  map[string]int32
	byID     map[string]int32
	books    map[bookKey][]int32 // rows of each tenant's book, unordered
	terms    map[string]int32    // term → term ID
	vocab    []string            // term ID → term
	postings [][]posting         // by term ID, in ascending row order
	df       []int32             // live documents containing each term
	// maxTF and minLen bound a term's BM25 weight from above (weight grows
	// with tf and shrinks with length) so Search can skip postings that
	// cannot reach the top k; deleted rows only loosen the bound.
	maxTF    []int32
	minLen   []int32
	live     int // live rows
	totalLen int // summed length of live rows, for the average
	closed   bool

	// initial is each term's first two bytes by term ID
	// (analysis.TermStart): the key-term coverage asks ChunkSentences only
	// for the terms that start like one of the question's, and reading
	// that from vocab was a load of a string header and its bytes per term
	// of every candidate.
	initial []uint16
	// idKeys holds each row's chunk ID's first 8 bytes, big-endian and
	// zero-padded (idKey), so best breaks score ties comparing integers in
	// one array and reads an ID only when two keys are equal: the load
	// library's scores tie often, and the string comparisons of the IDs
	// read from the rows were an eighth of its BM25 CPU.
	idKeys []uint64

	// owner is renewed at every change to rows (any write, reload or
	// reset), so a hit's RowRef names its row only while nothing changed
	// (rowIndex).
	owner *citebook.RowOwner

	// seqs holds the rows' term sequences off the heap (arena.go).
	seqs seqArena

	// accs recycles the per-search score accumulators (one float64 per row).
	accs sync.Pool
	// admits caches the rows recent filters admit (rowset owns resolving
	// filters); any write empties it.
	admits rowset.Cache
	// stats caches BM25's statistics per tenant and per reader's library
	// (bm25Stats); any write empties it.
	stats statsCache

	mergeMax int // see mergeMax
}

type bookKey struct{ tenant, book string }

type lrow struct {
	chunk  citebook.Chunk
	length int32 // terms in the indexed text
	head   int32 // how many of them the heading path gave
	pos    int32 // index inside books[key]
	dead   bool
	// seq is the indexed text's term IDs in order, uvarint-coded as ID+1
	// (IDs are given in order of first appearance, so common terms take
	// one or two bytes), each sentence of the text followed by sentMark:
	// ChunkTerms and ChunkSentences read a candidate's terms from it
	// instead of segmenting the text again on every search.
	seq []byte
}

// rmeta is what admission reads for a row, kept apart from the chunk so a
// scan over 100k rows stays in cache.
type rmeta struct {
	version, retired int
	parent           int32
	// length is lrow.length again: BM25 reads it for every posting it
	// scores, and a 24-byte rmeta is a cache line per 2.7 rows where lrow
	// (which holds the chunk) is several lines per row.
	length int32
}

type posting struct {
	row int32
	tf  int32
}

// Open opens (creating when needed) the index persisted under dir and builds
// the in-memory index from it.
func Open(ctx context.Context, dir string) (*Index, error) {
	db, err := sqlitefile.Open(dir, "lexical.db", what)
	if err != nil {
		return nil, err
	}
	x := &Index{db: db, dir: dir, snapGen: noSnapshot, mergeMax: mergeMax}
	x.admits.Size = 64
	x.reset()
	if err := x.load(ctx); err != nil {
		db.Close()
		return nil, err
	}
	return x, nil
}

func (x *Index) reset() {
	x.rows = nil
	x.meta = nil
	x.parents = map[string]int32{}
	x.byID = map[string]int32{}
	x.books = map[bookKey][]int32{}
	x.terms = map[string]int32{}
	x.vocab = nil
	x.initial = nil
	x.idKeys = nil
	x.seqs.reset()
	x.postings = nil
	x.df = nil
	x.maxTF, x.minLen = nil, nil
	x.live, x.totalLen = 0, 0
	x.changed()
}

func (x *Index) load(ctx context.Context) error {
	x.dataVer, _ = sqlitefile.DataVersion(ctx, x.db)
	const schema = `CREATE TABLE IF NOT EXISTS chunks (
	id      TEXT PRIMARY KEY,
	book_id TEXT NOT NULL,
	retired INTEGER NOT NULL DEFAULT 0,
	data    BLOB NOT NULL
);
CREATE INDEX IF NOT EXISTS chunks_book ON chunks (book_id);`
	if _, err := x.db.ExecContext(ctx, schema); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot initialise lexical index")
	}
	switch err := x.loadSnapshot(ctx); {
	case err == nil:
		x.snapGen, _ = sqlitefile.Generation(ctx, x.db)
		return nil
	case !errors.Is(err, sqlitefile.ErrStale):
		slog.Warn("lexical snapshot unreadable, rebuilding from the database", "dir", x.dir, "err", err)
		x.reset()
	}
	if err := x.loadRows(ctx); err != nil {
		return err
	}
	// Save a snapshot for the next restart without delaying this one.
	x.bg.Add(1)
	go func() {
		defer x.bg.Done()
		x.wmu.Lock()
		defer x.wmu.Unlock()
		if x.checkOpen() == nil {
			x.snapshotIfChanged(context.Background())
		}
	}()
	return nil
}

// loadRows rebuilds the index from every row of the database.
func (x *Index) loadRows(ctx context.Context) error {
	rs, err := x.db.QueryContext(ctx, `SELECT retired, data FROM chunks`)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load lexical index")
	}
	defer rs.Close()
	// Rows are decoded and segmented in parallel batches (segmenting is
	// most of the cost of a restart), then indexed in order.
	const batch = 4096
	var raw []stored
	for rs.Next() {
		var r stored
		if err := rs.Scan(&r.retired, &r.data); err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load lexical index")
		}
		if raw = append(raw, r); len(raw) == batch {
			if err := x.loadBatch(raw); err != nil {
				return err
			}
			raw = raw[:0]
		}
	}
	if err := rs.Err(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot load lexical index")
	}
	return x.loadBatch(raw)
}

type stored struct {
	retired int
	data    []byte
}

type counted struct {
	chunk citebook.Chunk
	terms []string // indexText's terms in order
	head  int32    // how many of them the heading path gave
	marks []int32  // where sentence marks go (sentenceMarks)
	err   error
}

func (x *Index) loadBatch(raw []stored) error {
	out := make([]counted, len(raw))
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := w; i < len(raw); i += workers {
				o := &out[i]
				if o.err = json.Unmarshal(raw[i].data, &o.chunk); o.err == nil {
					o.chunk.Retired = raw[i].retired
					o.terms, o.head, o.marks = segment(&o.chunk)
				}
			}
		}()
	}
	wg.Wait()
	for i := range out {
		if out[i].err != nil {
			return citebook.Wrap(out[i].err, citebook.EINTERNAL, "lexical index row is corrupt")
		}
		x.putCounted(out[i].chunk, out[i].terms, out[i].head, out[i].marks)
	}
	return nil
}

// Len reports how many chunks are indexed.
func (x *Index) Len() int {
	x.mu.RLock()
	defer x.mu.RUnlock()
	return x.live
}

// Upsert inserts or replaces chunks by ID.
func (x *Index) Upsert(ctx context.Context, chunks []citebook.Chunk) error {
	if len(chunks) == 0 {
		return nil
	}
	for i := range chunks {
		if chunks[i].ID == "" {
			return citebook.Errorf(citebook.EINVALID, "chunk %d has no ID", i)
		}
	}
	return x.write(ctx, `INSERT OR REPLACE INTO chunks(id, book_id, retired, data) VALUES(?, ?, ?, ?)`, len(chunks),
		func(i int) ([]any, error) {
			data, err := json.Marshal(&chunks[i])
			return []any{chunks[i].ID, chunks[i].BookID, chunks[i].Retired, data}, err
		},
		func() {
			for i := range chunks {
				x.put(chunks[i].Clone())
			}
			x.maybeCompact()
		})
}

// Retire sets Retired=version on the given chunks of a book; IDs of other
// books and unknown IDs are ignored.
func (x *Index) Retire(ctx context.Context, bookID string, ids []string, version int) error {
	return x.write(ctx, `UPDATE chunks SET retired = ? WHERE id = ? AND book_id = ?`, len(ids),
		func(i int) ([]any, error) { return []any{version, ids[i], bookID}, nil },
		func() {
			for _, id := range ids {
				if r, ok := x.byID[id]; ok && x.rows[r].chunk.BookID == bookID {
					x.rows[r].chunk.Retired = version
					x.meta[r].retired = version
				}
			}
		})
}

// Delete removes chunks by ID; missing IDs are not an error.
func (x *Index) Delete(ctx context.Context, ids []string) error {
	return x.write(ctx, `DELETE FROM chunks WHERE id = ?`, len(ids),
		func(i int) ([]any, error) { return []any{ids[i]}, nil },
		func() {
			for _, id := range ids {
				x.remove(id)
			}
			x.maybeCompact()
		})
}

// write runs stmt n times in one transaction (args(i) gives the arguments)
// and, once committed, applies the change to memory.
func (x *Index) write(ctx context.Context, stmt string, n int, args func(int) ([]any, error), apply func()) error {
	if n == 0 {
		return nil
	}
	x.wmu.Lock()
	defer x.wmu.Unlock()
	if err := x.checkOpen(); err != nil {
		return err
	}
	err := sqlitefile.Write(ctx, x.db, what, func(tx *sql.Tx) error {
		return sqlitefile.Each(ctx, tx, stmt, n, args)
	})
	if err != nil {
		return err
	}
	x.mu.Lock()
	defer x.mu.Unlock()
	apply()
	x.changed()
	return nil
}

// changed drops what was derived from the rows as they were: the filters'
// admitted rows, the BM25 statistics and the rows' handles (a new
// owner). Writers call it with mu held for writing, after every change.
func (x *Index) changed() {
	x.admits.Invalidate()
	x.stats.clear()
	x.owner = new(citebook.RowOwner)
}

// indexText is what a chunk is found by: its headings and index-only
// context (a continued table's caption and column years) as well as its
// text, since questions often name the section and the period they are about.
func indexText(c *citebook.Chunk) string {
	text := c.FoundBy()
	if len(c.HeadingPath) == 0 {
		return text
	}
	return strings.Join(c.HeadingPath, " ") + "\n" + text
}

// termCounts segments a chunk and counts each term.
func termCounts(c *citebook.Chunk) (map[string]int32, int32) {
	ts, _, _ := segment(c)
	return counts(ts), int32(len(ts))
}

func counts(ts []string) map[string]int32 {
	tf := make(map[string]int32, len(ts))
	for _, t := range ts {
		tf[t]++
	}
	return tf
}

// segment returns indexText's terms, how many of them come from the
// heading path, and before which of them sentence marks go (sentenceMarks).
// Segmenting the joined text gives the heading's terms and then the text's
// (the newline between them is a boundary for every step of the analysis;
// FuzzSegmentSplitsAtHeading checks it), so the two parts are what
// analysing the heading path and the text apart gives.
func segment(c *citebook.Chunk) (ts []string, head int32, at []int32) {
	ts = analysis.Terms(indexText(c))
	if len(c.HeadingPath) > 0 {
		n := 0
		analysis.EachTerm(strings.Join(c.HeadingPath, " "), func([]byte) { n++ })
		head = int32(min(n, len(ts)))
	}
	return ts, head, sentenceMarks(c, ts, head)
}

// sentenceMarks places the sentence marks of lrow.seq: where the index-only
// context ends (when the chunk has one), then after each sentence of the
// text, as positions in ts (a mark goes before the term there; len(ts):
// at the end). None when the text's sentences, segmented one by one, do
// not give the text's terms (sentenceEnds).
func sentenceMarks(c *citebook.Chunk, ts []string, head int32) []int32 {
	start := int(head) // the text's first term
	var out []int32
	if c.IndexContext != "" {
		n := 0
		analysis.EachTerm(c.IndexContext, func([]byte) { n++ })
		start = min(start+n, len(ts))
		out = append(out, int32(start))
	}
	ends := sentenceEnds(c.Text, ts[start:])
	if ends == nil {
		return nil
	}
	for _, e := range ends {
		out = append(out, int32(start)+e)
	}
	return out
}

// sentenceEnds gives, for each sentence of analysis.Sentences(text), how
// many of the text's terms (text, as segmented whole) end with it — nil
// when segmenting the sentences one by one does not give exactly those
// terms (it does for all text met so far: sentences end at separators;
// FuzzSentenceEnds), so a reader never gets boundaries that disagree with
// segmenting the sentences itself.
func sentenceEnds(text string, terms []string) []int32 {
	sents := analysis.Sentences(text)
	if len(sents) == 0 {
		return nil
	}
	ends := make([]int32, 0, len(sents))
	n, ok := 0, true
	for _, s := range sents {
		analysis.EachTerm(s, func(t []byte) {
			ok = ok && n < len(terms) && terms[n] == string(t)
			n++
		})
		ends = append(ends, int32(n))
	}
	if !ok || n != len(terms) {
		return nil
	}
	return ends
}

// put indexes c, replacing any chunk with its ID. Callers hold mu.
func (x *Index) put(c citebook.Chunk) {
	ts, head, marks := segment(&c)
	x.putCounted(c, ts, head, marks)
}

// putCounted is put with the chunk already segmented.
func (x *Index) putCounted(c citebook.Chunk, ts []string, head int32, marks []int32) {
	x.remove(c.ID)
	r := int32(len(x.rows))
	key := bookKey{c.Tenant, c.BookID}
	length := int32(len(ts))
	seq := make([]byte, 0, len(ts)+len(ts)/2+len(marks))
	tf := map[int32]int32{}
	for i, t := range ts {
		for len(marks) > 0 && int(marks[0]) == i {
			seq = append(seq, sentMark)
			marks = marks[1:]
		}
		id, ok := x.terms[t]
		if !ok {
			id = int32(len(x.postings))
			x.terms[t] = id
			x.vocab = append(x.vocab, t)
			x.initial = append(x.initial, analysis.TermStart(t))
			x.postings = append(x.postings, nil)
			x.df = append(x.df, 0)
			x.maxTF = append(x.maxTF, 0)
			x.minLen = append(x.minLen, math.MaxInt32)
		}
		seq = binary.AppendUvarint(seq, uint64(id)+1)
		tf[id]++
	}
	for range marks {
		seq = append(seq, sentMark)
	}
	x.rows = append(x.rows, lrow{chunk: c, length: length, head: head, pos: int32(len(x.books[key])), seq: x.seqs.copyIn(seq)})
	pid, ok := x.parents[c.ParentID]
	if !ok {
		pid = int32(len(x.parents))
		x.parents[c.ParentID] = pid
	}
	x.meta = append(x.meta, rmeta{c.Version, c.Retired, pid, length})
	x.idKeys = append(x.idKeys, idKey(c.ID))
	x.books[key] = append(x.books[key], r)
	x.byID[c.ID] = r
	x.live++
	x.totalLen += int(length)
	for id, n := range tf {
		x.postings[id] = append(x.postings[id], posting{r, n})
		x.df[id]++
		x.maxTF[id] = max(x.maxTF[id], n)
		x.minLen[id] = min(x.minLen[id], length)
	}
}

// remove unindexes the chunk id: it leaves its book, and its terms stop
// counting towards document frequencies. Its postings stay until compaction.
func (x *Index) remove(id string) {
	r, ok := x.byID[id]
	if !ok {
		return
	}
	row := &x.rows[r]
	key := bookKey{row.chunk.Tenant, row.chunk.BookID}
	rs := x.books[key]
	last := rs[len(rs)-1]
	rs[row.pos] = last
	x.rows[last].pos = row.pos
	rs = rs[:len(rs)-1]
	if len(rs) == 0 {
		delete(x.books, key)
	} else {
		x.books[key] = rs
	}
	ids := decodeSeq(row.seq, nil)
	slices.Sort(ids)
	for _, id := range slices.Compact(ids) {
		x.df[id]--
	}
	x.live--
	x.totalLen -= int(row.length)
	delete(x.byID, id)
	*row = lrow{dead: true}
	x.meta[r] = rmeta{parent: -1}
	x.idKeys[r] = 0
}

// maybeCompact rebuilds the postings once deleted or replaced rows make up
// a quarter of them, so memory and scan time track the live index.
func (x *Index) maybeCompact() {
	dead := len(x.rows) - x.live
	if dead < 1024 || dead*4 < len(x.rows) {
		return
	}
	old := x.rows
	x.reset()
	for i := range old {
		if !old[i].dead {
			x.put(old[i].chunk)
		}
	}
}

// IDs lists the IDs of every indexed chunk of a book, sorted.
func (x *Index) IDs(ctx context.Context, bookID string) ([]string, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errClosed()
	}
	ids := []string{}
	for k, rs := range x.books {
		if k.book == bookID {
			for _, r := range rs {
				ids = append(ids, x.rows[r].chunk.ID)
			}
		}
	}
	sort.Strings(ids)
	return ids, nil
}

// Get returns indexed chunks by ID with their lifespans, in no set order;
// unknown IDs are skipped. The builder checks a version is complete here
// before it switches a book to it.
func (x *Index) Get(ctx context.Context, ids []string) ([]citebook.Chunk, error) {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errClosed()
	}
	out := make([]citebook.Chunk, 0, len(ids))
	for _, id := range ids {
		if r, ok := x.byID[id]; ok && !x.rows[r].dead {
			out = append(out, x.rows[r].chunk.Clone())
		}
	}
	return out, nil
}

// Search returns the k best BM25 matches for query among the chunks f
// admits, best first, scored with the statistics of lib.
func (x *Index) Search(ctx context.Context, query string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	return x.SearchForms(ctx, query, nil, f, lib, k)
}

// SearchForms is Search with the query's terms matched in other forms
// too: forms maps a term of the query to its other forms (as terms: "live"
// → "lived", "living"), and a chunk holding any of them counts as holding
// the term, once, as a search engine's synonym query scores them (their
// postings merged into one list, the frequencies summed, the rarity that
// of the union). Searching the forms as terms of their own would weigh a
// verb once per form and favour a chunk that prints two of them.
//
// lib is the reader's library, everything it may read in f's tenant (f is
// narrowed from it): BM25's statistics are counted over its rows alone
// (bm25Stats), so a score tells nothing of rows the reader is denied. It
// is a parameter, not taken from f, as f is often one book (too few rows
// to rank by), and not defaulted, as no default is both safe and good.
func (x *Index) SearchForms(ctx context.Context, query string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	if lib.Tenant != f.Tenant {
		return nil, citebook.Errorf(citebook.EINVALID, "BM25 statistics of tenant %q asked for a search of tenant %q", lib.Tenant, f.Tenant)
	}
	hits := []citebook.Hit{}
	qterms := analysis.QueryTerms(query)
	if k <= 0 || len(qterms) == 0 || len(f.Books) == 0 {
		return hits, nil
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, errClosed()
	}
	allowed := x.admits.Get(x.view(), &f)
	if allowed.Len() == 0 {
		return hits, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "search cancelled")
	}
	in := allowed // searching the whole library, the common case: no second resolve
	if !sameFilter(&f, &lib) {
		in = x.admits.Get(x.view(), &lib)
	}
	st := x.library(lib.Tenant, in)
	if st.n == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "the library given for BM25's statistics admits none of the rows searched")
	}
	h := x.topK(qterms, forms, allowed.Bits, st, k)
	// The hits are clones (Chunk.Clone) whose slices are carved out of one
	// backing array per kind: three allocations a hit of 80 were 2.4 % of
	// a search's CPU under bench/load.sh.
	var nh, np, ng int
	for _, c := range h {
		ch := &x.rows[c.row].chunk
		nh, np, ng = nh+len(ch.HeadingPath), np+len(ch.Pages), ng+len(ch.Groups)
	}
	heads, pages, groups := make([]string, 0, nh), make([]citebook.PageSpan, 0, np), make([]string, 0, ng)
	hits = make([]citebook.Hit, 0, len(h))
	for _, c := range h {
		ch := x.rows[c.row].chunk
		ch.Geometry = nil
		ch.HeadingPath, heads = carve(heads, ch.HeadingPath)
		ch.Pages, pages = carve(pages, ch.Pages)
		ch.Groups, groups = carve(groups, ch.Groups)
		hits = append(hits, citebook.Hit{Chunk: ch, Score: c.score, Ref: x.ref(c.row)})
	}
	return hits, nil
}

// sameFilter reports whether a and b are the same filter, field by field.
func sameFilter(a, b *citebook.Filter) bool {
	return a.Tenant == b.Tenant && slices.Equal(a.Books, b.Books) && slices.Equal(a.DenyParents, b.DenyParents)
}

// ref is the handle a hit of row r carries (rowIndex). Callers hold mu.
func (x *Index) ref(r int32) citebook.RowRef {
	return citebook.RowRef{Owner: x.owner, Row: r}
}

// carve copies s to the end of buf (whose capacity holds it) and returns
// the copy, capped so an append to it cannot reach the next, and buf; nil
// stays nil, as slices.Clone keeps it.
func carve[T any](buf, s []T) ([]T, []T) {
	if s == nil {
		return nil, buf
	}
	i := len(buf)
	buf = append(buf, s...)
	return buf[i:len(buf):len(buf)], buf
}

// qterm is one query term resolved against the index.
type qterm struct {
	pos   int // position in the query, the order scores are summed in
	idf   float64
	bound float64 // upper bound of the term's weight in any row
	ps    []posting
}

// topK returns the k best admitted rows for the query terms, best first. Terms are
// scored rarest first into dense accumulators; once the k-th best score so
// far beats what all remaining terms together could add, no unseen row can
// enter the top k (MaxScore), so the remaining, most common terms are only
// looked up for the rows still in contention instead of being scanned. The
// survivors are rescored summing terms in query order, exactly as a full
// scan would, so scores and ties are bit-identical to exhaustive BM25.
func (x *Index) topK(terms []string, forms map[string][]string, allowed []uint64, st *bm25Stats, k int) []cand {
	n := float64(st.n)
	avgdl := float64(st.totalLen) / n
	norm := func(dl int32) float64 { return bm25K1 * (1 - bm25B + bm25B*float64(dl)/avgdl) }
	var qs []qterm
	for i, t := range terms {
		q := qterm{pos: i}
		var df, tf float64
		var minLen int32
		if ids := x.formIDs(t, forms[t]); len(ids) > 1 {
			var maxTF int32
			q.ps, maxTF, minLen = x.mergePostings(ids)
			df, tf = float64(st.docFreq(q.ps, -1)), float64(maxTF)
		} else if id, ok := x.terms[t]; ok {
			q.ps, df, tf, minLen = x.postings[id], float64(st.docFreq(x.postings[id], id)), float64(x.maxTF[id]), x.minLen[id]
		}
		if df == 0 {
			continue
		}
		q.idf = math.Log(1 + (n-df+0.5)/(df+0.5))
		// The margin covers rounding: bounds must never undercut a weight.
		q.bound = q.idf * tf * (bm25K1 + 1) / (tf + norm(minLen)) * (1 + 1e-9)
		qs = append(qs, q)
	}
	if len(qs) == 0 {
		return nil
	}
	weight := func(q *qterm, p posting) float64 {
		tf := float64(p.tf)
		return q.idf * tf * (bm25K1 + 1) / (tf + norm(x.meta[p.row].length))
	}
	byPos := slices.Clone(qs)
	sort.SliceStable(qs, func(i, j int) bool { return len(qs[i].ps) < len(qs[j].ps) })
	rest := make([]float64, len(qs)+1) // rest[i] bounds what qs[i:] can add
	for i := len(qs) - 1; i >= 0; i-- {
		rest[i] = rest[i+1] + qs[i].bound
	}

	acc := x.acc()
	defer x.releaseAcc(acc)
	touched := acc.touched[:0]
	i := 0
	var theta float64 // k-th best accumulated score, once k rows have one
	for ; i < len(qs); i++ {
		if len(touched) >= k {
			theta = kth(acc.s, touched, k, &acc.tmp)
			if theta > rest[i] {
				break
			}
		}
		q := &qs[i]
		for _, p := range q.ps {
			if allowed[p.row>>6]&(1<<(uint(p.row)&63)) == 0 {
				continue
			}
			if acc.s[p.row] == 0 {
				touched = append(touched, p.row)
			}
			acc.s[p.row] += weight(q, p)
		}
	}
	acc.touched = touched
	cands := touched
	if i < len(qs) {
		// Only rows that can still reach theta stay; the remaining terms
		// are looked up for them, pruning again as the bound shrinks.
		cands = make([]int32, 0, 4*k)
		for _, r := range touched {
			if acc.s[r]+rest[i] >= theta {
				cands = append(cands, r)
			}
		}
		slices.Sort(cands)
		for ; i < len(qs); i++ {
			q := &qs[i]
			keep := cands[:0]
			cur := cursor{ps: q.ps}
			for _, r := range cands {
				if p, ok := cur.seek(r); ok {
					acc.s[r] += weight(q, p)
				}
				if acc.s[r]+rest[i+1] >= theta {
					keep = append(keep, r)
				}
			}
			cands = keep
			if len(cands) >= k {
				theta = max(theta, kth(acc.s, cands, k, &acc.tmp))
			}
		}
	}
	// Summation order differs from the query order, so pick everything
	// within rounding of the k-th best and rescore it in query order.
	if len(cands) > k {
		cut := kth(acc.s, cands, k, &acc.tmp)
		cut -= 1e-9 * (1 + math.Abs(cut))
		keep := make([]int32, 0, 2*k)
		for _, r := range cands {
			if acc.s[r] >= cut {
				keep = append(keep, r)
			}
		}
		cands = keep
	}
	if i == len(qs) {
		// Every term was scanned, so cands is in the order rows were first
		// touched; the cursors below need ascending rows.
		cands = slices.Clone(cands)
		slices.Sort(cands)
	}
	// Each term's postings are walked once, forward, for the ascending
	// candidates (a binary search per row and term was a fifth of topK).
	curs := make([]cursor, len(byPos))
	for qi := range byPos {
		curs[qi].ps = byPos[qi].ps
	}
	out := make([]cand, len(cands))
	for ci, r := range cands {
		var sc float64
		for qi := range byPos {
			if p, ok := curs[qi].seek(r); ok {
				sc += weight(&byPos[qi], p)
			}
		}
		out[ci] = cand{row: r, score: sc}
	}
	return x.best(out, k)
}

// mergeMax bounds the postings merged for one term's forms (a few
// hundred microseconds of merging): a term held by more rows is searched
// as itself, its weight small at that frequency, where merging its
// postings cost more than the rest of the search (Moby Dick's "whale" with
// "whaling", ~30k rows: 1.75 against 0.77 ms at 100k chunks,
// BenchmarkSearch100kOneTenant). A bound on rows, not on a share of them:
// in a library of a few books a share cut the forms of the very words
// questions ask about ("begin", "key", "pay": held-out answers lost).
const mergeMax = 16384

// formIDs are the term IDs of t and of its forms that some live row holds;
// nil when together they hold more than x.mergeMax postings (mergeMax;
// tests set less).
func (x *Index) formIDs(t string, forms []string) []int32 {
	if len(forms) == 0 {
		return nil
	}
	var ids []int32
	df := 0
	for _, w := range append([]string{t}, forms...) {
		if id, ok := x.terms[w]; ok && x.df[id] > 0 && !slices.Contains(ids, id) {
			ids = append(ids, id)
			df += int(x.df[id])
		}
	}
	if df > x.mergeMax {
		return nil
	}
	return ids
}

// mergePostings is the union of the terms' postings in ascending row order,
// live rows only, a row's frequencies summed; with the largest merged
// frequency and the shortest row, which bound the merged term's weight.
// Each list is already in row order, so they are merged pairwise in one
// pass each (sorting the concatenation made a search for a common word's
// forms eight times slower than the word alone).
func (x *Index) mergePostings(ids []int32) (ps []posting, maxTF, minLen int32) {
	size := 0
	for _, id := range ids {
		size += len(x.postings[id])
	}
	ps = make([]posting, 0, size)
	for _, p := range x.postings[ids[0]] {
		if x.meta[p.row].parent >= 0 { // a deleted row's meta has parent -1
			ps = append(ps, p)
		}
	}
	tmp := make([]posting, 0, size)
	for _, id := range ids[1:] {
		tmp = tmp[:0]
		a, b := ps, x.postings[id]
		for len(a) > 0 || len(b) > 0 {
			switch {
			case len(b) > 0 && x.meta[b[0].row].parent < 0:
				b = b[1:]
			case len(b) == 0 || len(a) > 0 && a[0].row < b[0].row:
				tmp, a = append(tmp, a[0]), a[1:]
			case len(a) == 0 || b[0].row < a[0].row:
				tmp, b = append(tmp, b[0]), b[1:]
			default: // the same row
				tmp, a, b = append(tmp, posting{row: a[0].row, tf: a[0].tf + b[0].tf}), a[1:], b[1:]
			}
		}
		ps, tmp = tmp, ps
	}
	minLen = math.MaxInt32
	for _, p := range ps {
		maxTF, minLen = max(maxTF, p.tf), min(minLen, x.meta[p.row].length)
	}
	return ps, maxTF, minLen
}

// best returns the k best of cs by score, then chunk ID, best first. Chunk
// IDs are read only for the rows tied on a score that reaches the k-th
// place: reading every candidate's ID from its row (a cache miss apiece)
// and comparing the strings took half of topK on the load library, whose
// scores tie often.
func (x *Index) best(cs []cand, k int) []cand {
	slices.SortFunc(cs, func(a, b cand) int { return cmp.Compare(b.score, a.score) })
	for lo := 0; lo < len(cs) && lo < k; {
		hi := lo + 1
		for hi < len(cs) && cs[hi].score == cs[lo].score {
			hi++
		}
		if hi-lo > 1 {
			slices.SortFunc(cs[lo:hi], x.byChunkID)
		}
		lo = hi
	}
	return cs[:min(k, len(cs))]
}

// byChunkID orders candidates by their rows' chunk IDs, as
// strings.Compare does: by their keys, then, when those are equal, by the
// IDs themselves.
func (x *Index) byChunkID(a, b cand) int {
	if c := cmp.Compare(x.idKeys[a.row], x.idKeys[b.row]); c != 0 {
		return c
	}
	return strings.Compare(x.rows[a.row].chunk.ID, x.rows[b.row].chunk.ID)
}

// idKey is id's first 8 bytes as a big-endian integer, zero-padded: keys
// order as their IDs do where they differ (a shorter ID's padding sorts
// before any byte but a NUL, which then ties and the IDs decide).
func idKey(id string) uint64 {
	var b [8]byte
	copy(b[:], id)
	return binary.BigEndian.Uint64(b[:])
}

// cursor looks rows up in a term's postings (sorted by row) for rows asked
// in ascending order: it gallops forward from the last position, so a walk
// over c candidates costs O(c log(n/c)) and reads the postings in order.
type cursor struct {
	ps []posting
	i  int
}

// seek returns the posting of row r, if any; r must not be below the rows
// of earlier calls.
func (c *cursor) seek(r int32) (posting, bool) {
	ps := c.ps
	lo := c.i
	if lo >= len(ps) {
		return posting{}, false
	}
	if ps[lo].row >= r {
		if ps[lo].row == r {
			return ps[lo], true
		}
		return posting{}, false
	}
	// ps[lo].row < r: double the step until a row ≥ r is passed.
	hi, step := lo+1, 1
	for hi < len(ps) && ps[hi].row < r {
		lo = hi
		step *= 2
		hi += step
	}
	hi = min(hi, len(ps)-1)
	j, ok := slices.BinarySearchFunc(ps[lo+1:hi+1], r, func(p posting, r int32) int { return cmp.Compare(p.row, r) })
	c.i = lo + 1 + j
	if !ok {
		return posting{}, false
	}
	return ps[c.i], true
}

// kth returns the k-th largest score among rows (len(rows) >= k), using tmp
// as scratch.
func kth(scores []float64, rows []int32, k int, tmp *[]float64) float64 {
	t := (*tmp)[:0]
	for _, r := range rows {
		t = append(t, scores[r])
	}
	*tmp = t
	// Quickselect for the (k-1)-th index in descending order.
	lo, hi, want := 0, len(t)-1, k-1
	for lo < hi {
		p := t[(lo+hi)/2]
		i, j := lo, hi
		for i <= j {
			for t[i] > p {
				i++
			}
			for t[j] < p {
				j--
			}
			if i <= j {
				t[i], t[j] = t[j], t[i]
				i++
				j--
			}
		}
		switch {
		case want <= j:
			hi = j
		case want >= i:
			lo = i
		default:
			return t[want]
		}
	}
	return t[want]
}

// accumulator is a pooled dense score array; touched lists the rows that
// must be zeroed before it is reused.
type accumulator struct {
	s       []float64
	touched []int32
	tmp     []float64
}

func (x *Index) acc() *accumulator {
	a, _ := x.accs.Get().(*accumulator)
	if a == nil || len(a.s) < len(x.rows) {
		return &accumulator{s: make([]float64, len(x.rows))}
	}
	return a
}

func (x *Index) releaseAcc(a *accumulator) {
	for _, r := range a.touched {
		a.s[r] = 0
	}
	a.touched = a.touched[:0]
	if cap(a.touched) > 1<<20 {
		a.touched = nil
	}
	x.accs.Put(a)
}

// view is the index's rows as rowset resolves filters against them; its
// methods read without locking, so callers hold mu.
type view Index

func (x *Index) view() *view { return (*view)(x) }

func (v *view) Len() int                           { return len(v.rows) }
func (v *view) Book(tenant, bookID string) []int32 { return v.books[bookKey{tenant, bookID}] }
func (v *view) Parent(id string) (int32, bool) {
	p, ok := v.parents[id]
	return p, ok
}
func (v *view) Meta(r int32) rowset.Meta {
	m := &v.meta[r]
	return rowset.Meta{Version: m.version, Retired: m.retired, Parent: m.parent}
}

// cand is a scored row; id is its chunk's ID, read only where it breaks a
// tie (best): results rank by score, then by chunk ID.
type cand struct {
	row   int32
	score float64
}

func (x *Index) Close() error {
	x.wmu.Lock()
	if x.checkOpen() != nil {
		x.wmu.Unlock()
		return nil
	}
	x.snapshotIfChanged(context.Background())
	x.mu.Lock()
	x.closed = true
	x.reset()
	x.mu.Unlock()
	// A snapshot being saved in the background waits for wmu.
	x.wmu.Unlock()
	x.bg.Wait()
	if err := x.db.Close(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot close lexical index")
	}
	return nil
}

// checkOpen fails once the index is closed.
func (x *Index) checkOpen() error {
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return errClosed()
	}
	return nil
}

func errClosed() error {
	return citebook.Errorf(citebook.EUNAVAILABLE, "lexical index is closed")
}
