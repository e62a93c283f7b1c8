package qa

import (
	"context"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
)

// The prompt's worked example, for the external tests that check a model
// echoing it is caught.
const (
	ExampleText    = exampleText
	ExampleChunkID = exampleChunkID
)

// WindowCoverage is the key-term coverage feature of chunk c for the given
// key terms and weights, reading c's sentences from src (nil: segmenting).
func WindowCoverage(terms []string, weights []float64, src ChunkTerms, c *citebook.Chunk) float64 {
	s := &salient{seen: map[string]salientScore{}, src: src, terms: terms, weights: weights}
	for i, t := range terms {
		s.first[t[0]] = true
		s.total += weights[i]
	}
	return s.windowCoverage(c, citebook.RowRef{})
}

// WindowCoverages is WindowCoverage of each chunk by one salient, as a
// query's candidates are scored (its scratch reused from chunk to chunk).
func WindowCoverages(terms []string, weights []float64, src ChunkTerms, cs []citebook.Chunk) []float64 {
	s := &salient{seen: map[string]salientScore{}, src: src, terms: terms, weights: weights}
	for i, t := range terms {
		s.first[t[0]] = true
		s.total += weights[i]
	}
	out := make([]float64, len(cs))
	for i := range cs {
		out[i] = s.windowCoverage(&cs[i], citebook.RowRef{})
	}
	return out
}

// KeyTermWeights is the weight answerability gives each key term of the
// question, asked by pr of the books bookIDs.
func KeyTermWeights(ctx context.Context, p *Pipeline, pr citebook.Principal, bookIDs []string, question string) (map[string]float64, error) {
	lib, err := p.deps.Access.Filter(ctx, pr)
	if err != nil {
		return nil, err
	}
	keys, _ := p.keyTerms(ctx, question, namesSomeone(question), lib, acl.Narrow(lib, bookIDs))
	out := make(map[string]float64, len(keys))
	for _, k := range keys {
		out[k.text] = k.weight
	}
	return out, nil
}

// IsContents reports whether retrieval drops chunk c as a table of contents.
func IsContents(c *citebook.Chunk) bool { return isContents(c) }
