package lexical

import (
	"context"

	"github.com/citebook/citebook"
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
	n := allowed.Len()
	if n == 0 {
		return out, 0, nil
	}
	for i, t := range terms {
		id, ok := x.terms[t]
		if !ok {
			continue
		}
		if n == x.live {
			// The filter admits only live rows (a removed row belongs to
			// no book), so admitting as many admits them all: df counts
			// exactly those (one tenant with every book in scope, the
			// common case of a large library, without walking postings).
			out[i] = int(x.df[id])
			continue
		}
		for _, p := range x.postings[id] {
			if allowed.Has(p.row) {
				out[i]++
			}
		}
	}
	return out, n, nil
}
