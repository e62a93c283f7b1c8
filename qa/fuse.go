package qa

import (
	"sort"

	"github.com/citebook/citebook"
)

// candidate is one chunk found for one query, with every score that ranked
// it on its way through the pipeline.
type candidate struct {
	chunk    citebook.Chunk
	query    int
	vecScore float64
	vecRank  int // 1-based, 0 when the vector side did not find it
	lexRank  int // 1-based, 0 when the lexical side did not find it
	fused    float64
	rerank   float64
}

// fuse merges the two rankings with reciprocal rank fusion: score =
// Σ 1/(k + rank). RRF needs no score calibration between cosine and BM25,
// which are on unrelated scales.
func fuse(query int, vec, lex []citebook.Hit, k float64) []*candidate {
	byID := map[string]*candidate{}
	var out []*candidate
	get := func(c citebook.Chunk) *candidate {
		if x, ok := byID[c.ID]; ok {
			return x
		}
		x := &candidate{chunk: c, query: query}
		byID[c.ID] = x
		out = append(out, x)
		return x
	}
	for i, h := range vec {
		c := get(h.Chunk)
		c.vecRank, c.vecScore = i+1, h.Score
		c.fused += 1 / (k + float64(i+1))
	}
	for i, h := range lex {
		c := get(h.Chunk)
		c.lexRank = i + 1
		c.fused += 1 / (k + float64(i+1))
	}
	sort.SliceStable(out, func(i, j int) bool {
		if out[i].fused != out[j].fused {
			return out[i].fused > out[j].fused
		}
		if out[i].vecScore != out[j].vecScore {
			return out[i].vecScore > out[j].vecScore
		}
		return out[i].chunk.ID < out[j].chunk.ID
	})
	return out
}
