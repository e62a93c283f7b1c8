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
// (DocFreq) or a tenant's rows (BM25's statistics, tenantStats).
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

// tenantStats are BM25's collection statistics for one tenant: its live
// rows, their summed length and its terms' document frequencies. Scores
// are then what they would be in a library holding only that tenant's
// books: what another tenant indexes neither moves a ranking nor can be
// probed through one (a tenant could otherwise index a rare word and read
// from its own hit's score how many chunks of other tenants hold it), and
// a library's rankings do not change as other tenants add books. Within a
// tenant the statistics stay those of all its books, not of the filter's:
// over a single book they are too few to rank by (the held-out sets' page
// recall@1 fell from 0.600 to 0.350 when each book was scored alone).
type tenantStats struct {
	scopeStats
	totalLen int
	mu       sync.Mutex
	df       map[int32]int32 // by term ID, counted on first use
}

// tenantCache holds the tenants' statistics until the next write.
type tenantCache struct {
	mu sync.Mutex
	m  map[string]*tenantStats
}

// clear drops every tenant's statistics; writers call it with mu held
// for writing, as they invalidate the admission cache.
func (c *tenantCache) clear() {
	c.mu.Lock()
	c.m = nil
	c.mu.Unlock()
}

// tenant returns tenant's statistics, counted on first use after a write.
// Callers hold mu for reading.
func (x *Index) tenant(tenant string) *tenantStats {
	x.tenants.mu.Lock()
	defer x.tenants.mu.Unlock()
	if ts := x.tenants.m[tenant]; ts != nil {
		return ts
	}
	ts := &tenantStats{scopeStats: scopeStats{x: x}}
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
	if x.tenants.m == nil {
		x.tenants.m = map[string]*tenantStats{}
	}
	x.tenants.m[tenant] = ts
	return ts
}

// docFreq is count for the tenant, remembered for a term's own postings.
func (ts *tenantStats) docFreq(ps []posting, id int32) int {
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
