package qa

import (
	"context"

	"github.com/citebook/citebook"
)

// retrieve runs one query against both retrievers inside the filter, n
// vectors and nl keyword hits (the keywords also in their forms, scored
// with the statistics of lib, the reader's library). Each
// over-fetches so fusion and thresholding have room to work before the
// cut to k.
func (p *Pipeline) retrieve(ctx context.Context, query string, forms map[string][]string, vec []float32, f, lib citebook.Filter, n, nl int) (vec_, lex []citebook.Hit, err error) {
	vec_, err = p.deps.Vectors.Search(ctx, vec, f, n)
	if err != nil {
		return nil, nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "vector search failed")
	}
	lex, err = p.deps.Lexical.SearchForms(ctx, query, forms, f, lib, nl)
	if err != nil {
		return nil, nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "keyword search failed")
	}
	// Stores apply the filter inside the search; checking again here costs
	// nothing and keeps a misbehaving store from leaking a chunk.
	return keepMatching(vec_, &f), keepMatching(lex, &f), nil
}

func keepMatching(hits []citebook.Hit, f *citebook.Filter) []citebook.Hit {
	if len(hits) == 0 {
		return hits[:0:0]
	}
	// The stores' slices are fresh and every hit normally matches, so the
	// list is copied only from the first hit dropped.
	var out []citebook.Hit
	for i := range hits {
		switch ok := f.Match(&hits[i].Chunk); {
		case !ok && out == nil:
			out = append(make([]citebook.Hit, 0, len(hits)-1), hits[:i]...)
		case ok && out != nil:
			out = append(out, hits[i])
		}
	}
	if out == nil {
		return hits
	}
	return out
}
