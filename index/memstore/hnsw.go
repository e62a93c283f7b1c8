package memstore

import (
	"container/heap"
	"math"
	"math/rand/v2"
	"sort"
	"sync"
	"sync/atomic"
	"time"
)

// HNSW parameters. annMin is the number of eligible rows from which a search
// walks a tenant's graph instead of scanning every row: below it the exact
// scan costs at most a few milliseconds and needs no graph (built in about
// a minute per 100k rows, and held in memory). annEf is the width of the
// walk; recall@10 against exact search at these settings is measured by
// BenchmarkSearch100kOneTenant. annQuiet is how long a tenant must go
// unwritten before its graph is built, so an indexing job does not pay for
// graphs that its next batch discards.
const (
	annMin       = 20_000
	annQuiet     = 10 * time.Second
	annM         = 16  // links per node on upper layers
	annM0        = 32  // links per node on layer 0
	annEfBuild   = 64  // walk width while inserting
	annEf        = 160 // walk width while searching (at least k×4)
	annYieldEach = 512 // inserts between checks that the store is still open
	// A built graph is checked against exact search on annCheckQueries
	// queries and only used when its recall@10 reaches annMinRecall: on data
	// without neighbourhoods (uniform random vectors) a graph walk misses
	// most of the true top 10 and the exact scan must answer.
	annCheckQueries = 24
	annMinRecall    = 0.9
)

// graph is a Hierarchical Navigable Small World graph (Malkov & Yashunin)
// over a snapshot of one tenant's rows. Nodes hold their own copy of the
// vectors, so the store may reuse row slots freely; a graph is only used
// while its tenant has not been written since the snapshot (gen), so its
// node→row map is exact, and every node is still checked against the
// filter, so it can never return a row the caller may not read.
type graph struct {
	gen   uint64
	dim   int
	vecs  []float32  // node i at vecs[i*dim:(i+1)*dim]
	rows  []int32    // node → store row
	links [][][]node // node → layer → links, each with its similarity
	entry int32
	top   int // highest layer
	// recall is the recall@10 measured after the build; usable says it
	// was high enough for searches to rely on the graph.
	recall float64
	usable bool
	levels []int // top layer of each node, drawn up front
	// While building, several goroutines insert at once: mu guards entry
	// and top, locks[n] guards the links of node n. A built graph is read
	// only, and searches skip the locks.
	building bool
	mu       sync.Mutex
	locks    []sync.Mutex
	// visits hands each concurrent search its own visited marks.
	visits sync.Pool
}

type visited struct {
	mark  []uint32
	epoch uint32
}

func newGraph(dim, capacity int, gen uint64, seed uint64) *graph {
	g := &graph{
		gen:      gen,
		dim:      dim,
		vecs:     make([]float32, 0, capacity*dim),
		rows:     make([]int32, 0, capacity),
		links:    make([][][]node, capacity),
		entry:    -1,
		levels:   make([]int, capacity),
		building: true,
		locks:    make([]sync.Mutex, capacity),
	}
	rng := rand.New(rand.NewPCG(seed, 0x9e3779b97f4a7c15))
	for i := range g.levels {
		g.levels[i] = int(-math.Log(1-rng.Float64()) / math.Log(annM))
	}
	g.visits.New = func() any { return &visited{} }
	return g
}

func (g *graph) vec(n int32) []float32 {
	return g.vecs[int(n)*g.dim : (int(n)+1)*g.dim]
}

// node is a graph node with its similarity to the query (higher is closer).
type node struct {
	id  int32
	sim float32
}

// nodeHeap is a binary heap of nodes; max orders the closest first,
// otherwise the farthest first.
type nodeHeap struct {
	xs  []node
	max bool
}

func (h *nodeHeap) less(i, j int) bool {
	if h.max {
		return h.xs[i].sim > h.xs[j].sim
	}
	return h.xs[i].sim < h.xs[j].sim
}

func (h *nodeHeap) push(n node) {
	h.xs = append(h.xs, n)
	i := len(h.xs) - 1
	for i > 0 {
		p := (i - 1) / 2
		if !h.less(i, p) {
			break
		}
		h.xs[i], h.xs[p] = h.xs[p], h.xs[i]
		i = p
	}
}

func (h *nodeHeap) pop() node {
	top := h.xs[0]
	last := len(h.xs) - 1
	h.xs[0] = h.xs[last]
	h.xs = h.xs[:last]
	i := 0
	for {
		l, r, m := 2*i+1, 2*i+2, i
		if l < len(h.xs) && h.less(l, m) {
			m = l
		}
		if r < len(h.xs) && h.less(r, m) {
			m = r
		}
		if m == i {
			return top
		}
		h.xs[i], h.xs[m] = h.xs[m], h.xs[i]
		i = m
	}
}

func (g *graph) visitor() *visited {
	v := g.visits.Get().(*visited)
	if len(v.mark) < len(g.rows) {
		v.mark = make([]uint32, cap(g.rows))
		v.epoch = 0
	}
	v.epoch++
	if v.epoch == 0 {
		clear(v.mark)
		v.epoch = 1
	}
	return v
}

// insert links node id, whose row and vector are already in rows and vecs;
// nodes are inserted in id order.
func (g *graph) insert(id int32) {
	level := g.levels[id]
	g.links[id] = make([][]node, level+1)
	g.mu.Lock()
	if g.entry < 0 {
		g.entry, g.top = id, level
		g.mu.Unlock()
		return
	}
	entry, top := g.entry, g.top
	if level <= top {
		g.mu.Unlock()
	} else {
		// A new top node becomes the entry point only once it is linked;
		// other inserts wait for it (about one insert in annM).
		defer g.mu.Unlock()
	}
	q := g.vec(id)
	ep := node{entry, dot(q, g.vec(entry))}
	for l := top; l > level; l-- {
		ep = g.greedy(q, ep, l)
	}
	for l := min(level, top); l >= 0; l-- {
		found := g.searchLayer(q, ep, annEfBuild, l, nil)
		maxLinks := annM
		if l == 0 {
			maxLinks = annM0
		}
		nb := g.selectNeighbors(found, annM)
		g.locks[id].Lock()
		g.links[id][l] = nb
		g.locks[id].Unlock()
		for _, n := range nb {
			g.link(n.id, node{id, n.sim}, l, maxLinks)
		}
		ep = found[0]
	}
	if level > top {
		g.entry, g.top = id, level
	}
}

// build inserts every node using workers goroutines, returning early (with
// false) when stop is closed.
func (g *graph) build(workers int, stop <-chan struct{}) bool {
	var next atomic.Int64
	var stopped atomic.Bool
	var wg sync.WaitGroup
	for range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for {
				i := next.Add(1) - 1
				if i >= int64(len(g.rows)) {
					return
				}
				if i%annYieldEach == 0 {
					select {
					case <-stop:
						stopped.Store(true)
					default:
					}
				}
				if stopped.Load() {
					return
				}
				g.insert(int32(i))
			}
		}()
	}
	wg.Wait()
	g.building = false
	return !stopped.Load()
}

// neighbours returns node n's links on layer l, copied into buf while the
// graph is being built.
func (g *graph) neighbours(n int32, l int, buf []node) []node {
	if !g.building {
		return g.links[n][l]
	}
	g.locks[n].Lock()
	buf = append(buf[:0], g.links[n][l]...)
	g.locks[n].Unlock()
	return buf
}

// link adds the link from→to on layer l; when from has more than maxLinks
// it drops its farthest, using the similarities stored with the links so
// that pruning computes no distances (pruning by the neighbour heuristic
// instead more than doubled build time; recall stayed above 0.95).
func (g *graph) link(from int32, to node, l, maxLinks int) {
	g.locks[from].Lock()
	defer g.locks[from].Unlock()
	ls := append(g.links[from][l], to)
	if len(ls) > maxLinks {
		worst := 0
		for i := range ls {
			if ls[i].sim < ls[worst].sim {
				worst = i
			}
		}
		ls[worst] = ls[len(ls)-1]
		ls = ls[:len(ls)-1]
	}
	g.links[from][l] = ls
}

// selectNeighbors keeps up to m of cand (sorted closest first), preferring
// ones not already closer to a kept neighbour than to the base node, so
// links reach out in several directions; free slots are then filled with the
// closest of the rest.
func (g *graph) selectNeighbors(cand []node, m int) []node {
	out := make([]node, 0, m)
	var skipped []node
	for _, c := range cand {
		if len(out) == m {
			break
		}
		cv := g.vec(c.id)
		good := true
		for _, o := range out {
			if dot(cv, g.vec(o.id)) > c.sim {
				good = false
				break
			}
		}
		if good {
			out = append(out, c)
		} else {
			skipped = append(skipped, c)
		}
	}
	for _, s := range skipped {
		if len(out) == m {
			break
		}
		out = append(out, s)
	}
	return out
}

// greedy walks layer l towards q from ep and returns the closest node found.
func (g *graph) greedy(q []float32, ep node, l int) node {
	var buf []node
	for changed := true; changed; {
		changed = false
		buf = g.neighbours(ep.id, l, buf)
		for _, n := range buf {
			if s := dot(q, g.vec(n.id)); s > ep.sim {
				ep, changed = node{n.id, s}, true
			}
		}
	}
	return ep
}

// searchLayer is the beam search of layer l from ep, keeping the ef closest
// nodes that admit accepts (all when admit is nil) while walking through
// every node, so a filter narrows the results but not the paths. It returns
// them closest first.
func (g *graph) searchLayer(q []float32, ep node, ef, l int, admit func(int32) bool) []node {
	vis := g.visitor()
	defer g.visits.Put(vis)
	vis.mark[ep.id] = vis.epoch
	cand := nodeHeap{xs: make([]node, 0, 4*ef), max: true}
	res := nodeHeap{xs: make([]node, 0, ef+1)}
	cand.push(ep)
	if admit == nil || admit(g.rows[ep.id]) {
		res.push(ep)
	}
	var buf []node
	for len(cand.xs) > 0 {
		c := cand.pop()
		if len(res.xs) >= ef && c.sim < res.xs[0].sim {
			break
		}
		buf = g.neighbours(c.id, l, buf)
		for _, nb := range buf {
			n := nb.id
			if vis.mark[n] == vis.epoch {
				continue
			}
			vis.mark[n] = vis.epoch
			s := dot(q, g.vec(n))
			if len(res.xs) < ef || s > res.xs[0].sim {
				cand.push(node{n, s})
				if admit == nil || admit(g.rows[n]) {
					res.push(node{n, s})
					if len(res.xs) > ef {
						res.pop()
					}
				}
			}
		}
	}
	out := res.xs
	sort.Slice(out, func(i, j int) bool {
		if out[i].sim != out[j].sim {
			return out[i].sim > out[j].sim
		}
		return g.rows[out[i].id] < g.rows[out[j].id]
	})
	return out
}

// search returns up to ef admitted nodes closest to q, closest first.
func (g *graph) search(q []float32, ef int, admit func(int32) bool) []node {
	if g.entry < 0 {
		return nil
	}
	ep := node{g.entry, dot(q, g.vec(g.entry))}
	for l := g.top; l > 0; l-- {
		ep = g.greedy(q, ep, l)
	}
	return g.searchLayer(q, ep, ef, 0, admit)
}

// selfRecall measures the graph's recall@10 against an exact scan of its own
// vectors, on n queries that are midpoints of two random nodes (near the
// data, like real queries, but not a node itself).
func (g *graph) selfRecall(n int) float64 {
	if len(g.rows) == 0 {
		return 0
	}
	r := rand.New(rand.NewPCG(uint64(len(g.rows)), 7))
	found, total := 0, 0
	q := make([]float32, g.dim)
	for range n {
		a, b := g.vec(int32(r.IntN(len(g.rows)))), g.vec(int32(r.IntN(len(g.rows))))
		for i := range q {
			q[i] = a[i] + b[i]
		}
		qn := normalize(q)
		exact := make(minHeap, 0, 10)
		for id := range g.rows {
			s := dot(qn, g.vec(int32(id)))
			if len(exact) < 10 {
				heap.Push(&exact, scored{int32(id), s})
			} else if s > exact[0].score {
				exact[0] = scored{int32(id), s}
				heap.Fix(&exact, 0)
			}
		}
		got := map[int32]bool{}
		hits := g.search(qn, annEf, nil)
		for _, h := range hits[:min(10, len(hits))] {
			got[h.id] = true
		}
		for _, e := range exact {
			total++
			if got[e.row] {
				found++
			}
		}
	}
	return float64(found) / float64(total)
}
