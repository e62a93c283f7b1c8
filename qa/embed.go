package qa

import (
	"context"

	"github.com/citebook/citebook"
)

// checkEmbedding refuses to search with an embedder other than the one the
// library was indexed with: the cosines would be meaningless and the answer
// silently wrong.
func (p *Pipeline) checkEmbedding(ctx context.Context) error {
	lib, ok, err := p.deps.Library.EmbeddingVersion(ctx)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the library's embedding version")
	}
	if !ok {
		return nil
	}
	if q := p.deps.Embedder.Version(); q != lib {
		return citebook.Errorf(citebook.EINVALID,
			"the library was indexed with embedding %s but queries are embedded with %s; configure the same embedder or re-index",
			lib, q)
	}
	return nil
}

// embed embeds every query with the library's embedder.
func (p *Pipeline) embed(ctx context.Context, queries []string) ([][]float32, error) {
	vecs := make([][]float32, len(queries))
	for i, q := range queries {
		v, err := p.deps.Embedder.EmbedQuery(ctx, q)
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot embed the question")
		}
		vecs[i] = v
	}
	return vecs, nil
}
