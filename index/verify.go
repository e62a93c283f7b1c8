package index

import (
	"context"
	"slices"

	"github.com/citebook/citebook"
)

// Drift is how one store differs from the metadata of the served version.
type Drift struct {
	Missing []string `json:"missing"` // served chunks the store lacks
	Extra   []string `json:"extra"`   // stored chunks the served version does not have
}

// VerifyReport compares a book's served version with what the stores hold,
// so silent loss (a wiped collection, a crash between writes) is found and,
// with repair, fixed.
type VerifyReport struct {
	BookID   string `json:"book_id"`
	Version  int    `json:"version"`
	Expected int    `json:"expected"`
	Vector   Drift  `json:"vector"`
	Lexical  Drift  `json:"lexical"`
	Repaired bool   `json:"repaired"`
}

// OK reports whether both stores match the metadata.
func (r *VerifyReport) OK() bool {
	return len(r.Vector.Missing)+len(r.Vector.Extra)+len(r.Lexical.Missing)+len(r.Lexical.Extra) == 0
}

// Verify compares the chunk IDs of a book's served version with the IDs in
// the vector store and the lexical index. With repair, missing chunks are
// embedded and written again and extra ones deleted; the report still
// describes the drift found before repairing. A build running at the same
// time shows up as drift, so verify between builds.
func (b *Builder) Verify(ctx context.Context, bookID string, repair bool) (*VerifyReport, error) {
	defer b.lockBook(bookID)()
	book, err := b.meta.Book(ctx, bookID)
	if err != nil {
		return nil, err
	}
	rep := &VerifyReport{BookID: bookID, Version: book.Active}
	var want []string
	if book.Active > 0 {
		if want, err = b.meta.ChunkIDs(ctx, bookID, book.Active); err != nil {
			return nil, err
		}
	}
	rep.Expected = len(want)
	vecIDs, err := b.vec.IDs(ctx, bookID)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot list the vector store")
	}
	lexIDs, err := b.lex.IDs(ctx, bookID)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot list the lexical index")
	}
	rep.Vector = diff(want, vecIDs)
	rep.Lexical = diff(want, lexIDs)
	if !repair || rep.OK() {
		return rep, nil
	}
	// A build in another process would have its fresh chunks deleted.
	if err := b.claimBook(ctx, bookID); err != nil {
		return rep, err
	}

	if len(rep.Vector.Missing)+len(rep.Lexical.Missing) > 0 {
		if err := b.repairMissing(ctx, book, rep); err != nil {
			return rep, err
		}
	}
	if len(rep.Vector.Extra) > 0 {
		if err := b.vec.Delete(ctx, rep.Vector.Extra); err != nil {
			return rep, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot delete from the vector store")
		}
	}
	if len(rep.Lexical.Extra) > 0 {
		if err := b.lex.Delete(ctx, rep.Lexical.Extra); err != nil {
			return rep, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot delete from the lexical index")
		}
	}
	// Deleted extras may be chunks an unfinished build wrote: its batches
	// must no longer claim them, or a resume would skip them.
	deleted := slices.Concat(rep.Vector.Extra, rep.Lexical.Extra)
	if n, err := b.resetBatches(ctx, bookID, book.Active, deleted); err != nil {
		return rep, err
	} else if n > 0 {
		b.log.InfoContext(ctx, "batches of an unfinished build reset after repair", "book", bookID, "batches", n)
	}
	rep.Repaired = true
	b.log.InfoContext(ctx, "repaired", "book", bookID, "version", book.Active,
		"vector_missing", len(rep.Vector.Missing), "vector_extra", len(rep.Vector.Extra),
		"lexical_missing", len(rep.Lexical.Missing), "lexical_extra", len(rep.Lexical.Extra))
	return rep, nil
}

// repairMissing writes the served chunks a store lacks from the metadata
// copy, embedding them again for the vector store.
func (b *Builder) repairMissing(ctx context.Context, book *citebook.Book, rep *VerifyReport) error {
	ev := b.emb.Version()
	if lib, ok, err := b.meta.EmbeddingVersion(ctx); err != nil {
		return err
	} else if ok && lib != ev {
		return citebook.Errorf(citebook.EINVALID, "the library is embedded with %s but the embedder is %s", lib, ev)
	}
	all, err := b.meta.ChunksAt(ctx, book.ID, book.Active)
	if err != nil {
		return err
	}
	pick := func(ids []string) []citebook.Chunk {
		set := make(map[string]bool, len(ids))
		for _, id := range ids {
			set[id] = true
		}
		var out []citebook.Chunk
		for _, c := range all {
			if set[c.ID] {
				c.Retired = 0
				out = append(out, c)
			}
		}
		return out
	}
	vecMissing := pick(rep.Vector.Missing)
	for i := 0; i < len(vecMissing); i += b.opt.BatchSize {
		part := vecMissing[i:min(i+b.opt.BatchSize, len(vecMissing))]
		if err := b.upsertVectors(ctx, part, embedTexts(part)); err != nil {
			return err
		}
	}
	if lexMissing := pick(rep.Lexical.Missing); len(lexMissing) > 0 {
		if err := b.lex.Upsert(ctx, lexMissing); err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write the lexical index")
		}
	}
	return nil
}

// diff returns what have lacks of want and holds beyond it, sorted.
func diff(want, have []string) Drift {
	w := make(map[string]bool, len(want))
	for _, id := range want {
		w[id] = true
	}
	h := make(map[string]bool, len(have))
	var d Drift
	for _, id := range have {
		h[id] = true
		if !w[id] {
			d.Extra = append(d.Extra, id)
		}
	}
	for _, id := range want {
		if !h[id] {
			d.Missing = append(d.Missing, id)
		}
	}
	slices.Sort(d.Missing)
	slices.Sort(d.Extra)
	return d
}
