package lexical

import (
	"context"
	"sync"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/internal/rowset"
)

// DocFreq counts, for each term, the chunks f admits that contain it, and
// returns the number of admitted chunks. Answering weighs a question's terms
// by how rare they are in the books actually searched (IDF over the scope,
// not over every tenant's library), and a term no admitted chunk contains
// is one the books never mention. Terms are looked up as given: pass terms
// produced by Terms.
func (x *Index) DocFreq(ctx context.Context, terms []string, f citebook.Filter) ([]int, int, error) {
	out := make([]int, len(terms))
	if len(f.Books) == 0 {
		return out, 0, nil
	}
	if err := ctx.Err(); err != nil {
		return nil, 0, citebook.Wrap(err, citebook.EUNAVAILABLE, "term statistics cancelled")
	}
	x.mu.RLock()
	defer x.mu.RUnlock()
	if x.closed {
		return nil, 0, errClosed()
	}
	allowed := x.admits.Get(x.view(), &f)
	st := x.admitted(allowed)
	if st.n == 0 {
		return out, 0, nil
	}
	for i, t := range terms {
		if id, ok := x.terms[t]; ok {
			out[i] = st.count(x.postings[id], id)
		}
	}
	return out, st.n, nil
}

// scopeStats count rows and postings in a scope: the rows a filter admits
// (DocFreq) or a reader's library or tenant (BM25's statistics, bm25Stats).
type scopeStats struct {
	in  *rowset.Set // the scope's rows (only Bits is read)
	all bool        // the scope holds every live row: the index's counts answer
	n   int
	x   *Index
}

// admitted is the scope of the rows s admits. Callers hold mu.
func (x *Index) admitted(s *rowset.Set) scopeStats {
	// The filter admits only live rows (a removed row belongs to no book),
	// so admitting as many admits them all: one tenant with every book in
	// scope, the common case of a large library, costs no walk.
	return scopeStats{in: s, all: s.Len() == x.live, n: s.Len(), x: x}
}

// count is how many rows of ps (postings of live and deleted rows) the
// scope holds; id is the term whose postings they are, or -1 for merged
// postings, which hold live rows only (mergePostings).
func (st *scopeStats) count(ps []posting, id int32) int {
	switch {
	case st.all && id >= 0:
		return int(st.x.df[id])
	case st.all:
		return len(ps)
	}
	n := 0
	for _, p := range ps {
		if st.in.Has(p.row) {
			n++
		}
	}
	return n
}

// bm25Stats are BM25's collection statistics: the rows of a scope, their
// summed length and its terms' document frequencies.
//
// Invariant (security-critical): a search's scores depend only on the rows
// of the reader's library (the rows the library filter passed to Search
// admits), never on a row it may not read: neither on another tenant's
// (a tenant could otherwise index a rare word and read from its own hit's
// score how many chunks of other tenants hold it) nor on a book or chapter
// the reader is denied inside its tenant (whose words a reader could
// likewise count through /v1/search's scores). TestScoresIgnoreUnreadable
// and FuzzScoresOnlyReadable check it. A library that is all its tenant's
// live rows (the common case, every eval) shares the tenant's statistics,
// so those scores are what they were before libraries had their own.
// Statistics stay those of the whole library, not of the filter searched:
// over a single book they are too few to rank by (the held-out sets' page
// recall@1 fell from 0.600 to 0.350 when each book was scored alone).
type bm25Stats struct {
	scopeStats
	totalLen int
	mu       sync.Mutex
	df       map[int32]int32 // by term ID, counted on first use
}

// maxLibraries bounds the libraries whose statistics are kept between
// writes: each holds a bit per row and the counts of the terms searched,
// and principals with distinct ACLs make as many libraries. When full the
// cache starts over (as rowset.Cache does): recounting on use is cheap
// next to a search, and no stale entry is kept.
const maxLibraries = 64

// statsCache holds BM25's statistics until the next write, per tenant and
// per library. A library is keyed by the rows it admits as the admission
// cache resolved them (one Set per Filter.Key until the next write, when
// both caches empty), so finding its statistics costs no second Key; it
// keeps at most maxLibraries Sets alive beyond the admission cache's.
type statsCache struct {
	mu      sync.Mutex
	tenants map[string]*bm25Stats
	libs    map[*rowset.Set]*bm25Stats // a library holding its tenant: the tenant's
}

// clear drops every cached statistic; writers call it with mu held for
// writing, as they invalidate the admission cache.
func (c *statsCache) clear() {
	c.mu.Lock()
	c.tenants, c.libs = nil, nil
	c.mu.Unlock()
}

// library returns BM25's statistics for the rows of tenant's library, in
// (as x.admits resolved it), counted on first use after a write. Callers
// hold mu for reading.
func (x *Index) library(tenant string, in *rowset.Set) *bm25Stats {
	x.stats.mu.Lock()
	st := x.stats.libs[in]
	x.stats.mu.Unlock()
	if st != nil {
		return st
	}
	// A filter admits only its tenant's live rows, so admitting as many as
	// the tenant holds admits them all: its statistics (and, with one
	// tenant, the index's own counts) answer.
	if st = x.tenant(tenant); in.Len() != st.n {
		st = &bm25Stats{scopeStats: scopeStats{in: in, n: in.Len(), x: x}, df: map[int32]int32{}}
		for _, r := range in.Rows {
			st.totalLen += int(x.meta[r].length)
		}
	}
	x.stats.mu.Lock()
	defer x.stats.mu.Unlock()
	if x.stats.libs == nil || len(x.stats.libs) >= maxLibraries {
		x.stats.libs = map[*rowset.Set]*bm25Stats{}
	}
	x.stats.libs[in] = st
	return st
}

// tenant returns tenant's statistics, counted on first use after a write.
// Callers hold mu for reading.
func (x *Index) tenant(tenant string) *bm25Stats {
	x.stats.mu.Lock()
	defer x.stats.mu.Unlock()
	if ts := x.stats.tenants[tenant]; ts != nil {
		return ts
	}
	ts := &bm25Stats{scopeStats: scopeStats{x: x}}
	var rows [][]int32
	for k, rs := range x.books {
		if k.tenant == tenant {
			ts.n += len(rs)
			rows = append(rows, rs)
		}
	}
	if ts.n == x.live {
		ts.all, ts.totalLen = true, x.totalLen
	} else {
		bits := make([]uint64, (len(x.rows)+63)/64)
		for _, rs := range rows {
			for _, r := range rs {
				bits[r>>6] |= 1 << (uint(r) & 63)
				ts.totalLen += int(x.meta[r].length)
			}
		}
		ts.in = &rowset.Set{Bits: bits}
		ts.df = map[int32]int32{}
	}
	if x.stats.tenants == nil {
		x.stats.tenants = map[string]*bm25Stats{}
	}
	x.stats.tenants[tenant] = ts
	return ts
}

// docFreq is count for the scope, remembered for a term's own postings.
func (ts *bm25Stats) docFreq(ps []posting, id int32) int {
	if ts.all || id < 0 {
		return ts.count(ps, id)
	}
	ts.mu.Lock()
	defer ts.mu.Unlock()
	if n, ok := ts.df[id]; ok {
		return int(n)
	}
	n := ts.count(ps, id)
	ts.df[id] = int32(n)
	return n
}
