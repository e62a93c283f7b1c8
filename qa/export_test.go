package qa

import "github.com/citebook/citebook"

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
