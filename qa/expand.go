package qa

import (
	"context"
	"sort"
	"strings"

	"github.com/citebook/citebook"
)

// passage is what one retrieved chunk becomes in the context: the chunk and
// its neighbouring paragraphs of the same section, in reading order.
type passage struct {
	primary *candidate
	chunks  []citebook.Chunk
	tokens  int
	order   int     // 1-based position in the fused retrieval order, before reranking
	lead    float64 // fused score as a share of its query's best (ContextChunk.Lead)
}

func (ps *passage) text() string {
	parts := make([]string, len(ps.chunks))
	for i, c := range ps.chunks {
		parts[i] = c.Text
	}
	return strings.Join(parts, "\n\n")
}

// lead is a fused score as a share of its query's best (ContextChunk.Lead),
// 0 when either is unknown.
func lead(score, best float64) float64 {
	if best <= 0 || score <= 0 {
		return 0
	}
	return score / best
}

// interleave merges the per-query rankings round-robin, so every sub-query
// gets its best chunks into the context before any gets its second best.
func interleave(groups [][]*candidate) []*candidate {
	var out []*candidate
	for i := 0; ; i++ {
		added := false
		for _, g := range groups {
			if i < len(g) {
				out = append(out, g[i])
				added = true
			}
		}
		if !added {
			return out
		}
	}
}

// dedupe drops a chunk that a better-ranked chunk of the same parent will
// bring in as a neighbour: expansion already puts its text into the
// context, and the room is better spent on another passage.
// Chunks of one parent further apart stay, since a parent can be a long
// section (a filing's whole item) with several separate answers in it.
func dedupe(cands []*candidate, neighbours int) (kept []*candidate, dropped []Dropped) {
	seen := map[string]bool{}
	byParent := map[string][]int{}
	for _, c := range cands {
		if seen[c.chunk.ID] {
			continue // the same chunk found by another sub-query
		}
		seen[c.chunk.ID] = true
		overlaps := false
		for _, o := range byParent[c.chunk.ParentID] {
			if d := o - c.chunk.Ordinal; d <= neighbours && d >= -neighbours {
				overlaps = true
				break
			}
		}
		if overlaps {
			dropped = append(dropped, Dropped{ChunkID: c.chunk.ID, Reason: "duplicate_passage"})
			continue
		}
		kept = append(kept, c)
		byParent[c.chunk.ParentID] = append(byParent[c.chunk.ParentID], c.chunk.Ordinal)
	}
	return kept, dropped
}

// expand adds up to Options.Neighbours paragraphs either side of each
// chunk. Neighbours are kept only when they are in the same parent as the
// retrieved chunk and pass the principal's filter (tenant, served version,
// denied sections), so expansion can never reach text retrieval could not.
func (p *Pipeline) expand(ctx context.Context, cands []*candidate, f citebook.Filter) []*passage {
	used := map[string]bool{}
	ids := make([]string, len(cands))
	for i, c := range cands {
		used[c.chunk.ID] = true
		ids[i] = c.chunk.ID
	}
	var all map[string][]citebook.Chunk
	if len(ids) > 0 {
		var err error
		if all, err = p.deps.Library.Neighbours(ctx, ids, p.opts.Neighbours); err != nil {
			p.log.WarnContext(ctx, "neighbour expansion failed; using the chunks alone", "chunks", len(ids), "err", err)
		}
	}
	top := map[int]float64{}
	for _, c := range cands {
		top[c.query] = max(top[c.query], c.fused)
	}
	out := make([]*passage, 0, len(cands))
	for i, c := range cands {
		ps := &passage{primary: c, chunks: []citebook.Chunk{*c.chunk}, order: i + 1}
		ps.lead = lead(c.fused, top[c.query])
		nb, ok := all[c.chunk.ID]
		if !ok && all != nil {
			p.log.WarnContext(ctx, "neighbour expansion found no served chunk; using the chunk alone", "chunk", c.chunk.ID)
		}
		for _, n := range nb {
			// The metadata copy may lack access fields; the retrieved
			// chunk's are the book's.
			n.Tenant, n.Groups = c.chunk.Tenant, c.chunk.Groups
			if used[n.ID] || n.BookID != c.chunk.BookID || n.ParentID != c.chunk.ParentID || !f.Match(&n) {
				continue
			}
			used[n.ID] = true
			ps.chunks = append(ps.chunks, n)
		}
		sort.SliceStable(ps.chunks, func(i, j int) bool { return ps.chunks[i].Ordinal < ps.chunks[j].Ordinal })
		out = append(out, ps)
	}
	return out
}
