package index

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/citebook/citebook"
)

// A version is only ever switched to when every one of its chunks is in
// every store. Batch records say what a build wrote, but a kill, a repair
// or an operator can remove records behind their back, so the builder
// trusts only what the stores hold: a resumed build skips a done batch's
// chunks only if both stores still have them visible in the version, a
// chunk kept from the served version that a store lost is written again,
// and the switch itself is preceded by a check of every chunk in both
// stores and the metadata (and Activate re-counts the metadata inside its
// transaction).

// visibleIn returns the IDs, of those given, that both stores hold for the
// book, visible in version v.
func (b *Builder) visibleIn(ctx context.Context, bookID string, ids []string, v int) (map[string]bool, error) {
	vecs, err := b.vec.Get(ctx, ids)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the vector store")
	}
	lex, err := b.lex.Get(ctx, ids)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the lexical index")
	}
	inVec := make(map[string]bool, len(vecs))
	for _, c := range vecs {
		if c.BookID == bookID && c.VisibleIn(v) {
			inVec[c.ID] = true
		}
	}
	ok := make(map[string]bool, len(ids))
	for _, c := range lex {
		if c.BookID == bookID && c.VisibleIn(v) && inVec[c.ID] {
			ok[c.ID] = true
		}
	}
	return ok, nil
}

// checkComplete refuses to switch the book to version v unless the
// metadata serves exactly the chunks of the build in v and both stores hold
// every one of them, visible in v.
func (b *Builder) checkComplete(ctx context.Context, bookID string, v int, chunks []citebook.Chunk) error {
	want := make([]string, len(chunks))
	for i, c := range chunks {
		want[i] = c.ID
	}
	rows, err := b.meta.ChunkIDs(ctx, bookID, v)
	if err != nil {
		return err
	}
	var problems []string
	if d := diff(want, rows); len(d.Missing)+len(d.Extra) > 0 {
		problems = append(problems, fmt.Sprintf("the metadata has %d of its chunks and %d others", len(want)-len(d.Missing), len(d.Extra)))
	}
	vecs, err := b.vec.Get(ctx, want)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the vector store")
	}
	if n := countVisible(vecs, bookID, v); n != len(want) {
		problems = append(problems, fmt.Sprintf("the vector store has %d of its %d chunks", n, len(want)))
	}
	lex, err := b.lex.Get(ctx, want)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the lexical index")
	}
	if n := countVisible(lex, bookID, v); n != len(want) {
		problems = append(problems, fmt.Sprintf("the lexical index has %d of its %d chunks", n, len(want)))
	}
	if len(problems) > 0 {
		return citebook.Errorf(citebook.ECONFLICT, "version %d of %s is incomplete and was not activated: %s; run the build again with --resume",
			v, bookID, strings.Join(problems, ", "))
	}
	return nil
}

// countVisible counts distinct chunks of the book visible in version v.
func countVisible(cs []citebook.Chunk, bookID string, v int) int {
	seen := make(map[string]bool, len(cs))
	for _, c := range cs {
		if c.BookID == bookID && c.VisibleIn(v) {
			seen[c.ID] = true
		}
	}
	return len(seen)
}

// resetBatches marks pending again the done batches of unfinished builds
// (versions newer than active) that wrote any of the deleted chunks, so
// their records say what the stores hold and a resume writes them again.
func (b *Builder) resetBatches(ctx context.Context, bookID string, active int, deleted []string) (int, error) {
	if len(deleted) == 0 {
		return 0, nil
	}
	gone := make(map[string]bool, len(deleted))
	for _, id := range deleted {
		gone[id] = true
	}
	jobs, err := b.meta.Jobs(ctx, bookID)
	if err != nil {
		return 0, err
	}
	n := 0
	for _, j := range jobs {
		if j.Version <= active || j.Status == JobCompleted {
			continue
		}
		bs, err := b.meta.Batches(ctx, j.ID)
		if err != nil {
			return n, err
		}
		for _, bt := range bs {
			if bt.Status != BatchDone || !slices.ContainsFunc(bt.ChunkIDs, func(id string) bool { return gone[id] }) {
				continue
			}
			bt.Status, bt.Error = BatchPending, "chunks removed by repair; a resumed build writes them again"
			if err := b.meta.UpdateBatch(ctx, bt); err != nil {
				return n, err
			}
			n++
		}
	}
	return n, nil
}
