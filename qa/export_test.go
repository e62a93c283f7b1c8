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
	return s.windowCoverage(c)
}

// KeyTermWeights is the weight answerability gives each key term of the
// question, asked by pr of the books bookIDs.
func KeyTermWeights(ctx context.Context, p *Pipeline, pr citebook.Principal, bookIDs []string, question string) (map[string]float64, error) {
	lib, err := p.deps.Access.Filter(ctx, pr)
	if err != nil {
		return nil, err
	}
	keys, _ := p.keyTerms(ctx, question, lib, acl.Narrow(lib, bookIDs))
	out := make(map[string]float64, len(keys))
	for _, k := range keys {
		out[k.text] = k.weight
	}
	return out, nil
}
