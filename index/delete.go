package index

import (
	"context"

	"github.com/citebook/citebook"
)

// Delete removes a book: it is first taken out of service in the metadata,
// then removed from both stores, then from the metadata. A delete cut short
// (a kill, a store outage) therefore never leaves a served version with
// chunks missing from a store; the book stays listed, unserved, and
// deleting it again finishes the job.
func (b *Builder) Delete(ctx context.Context, bookID string) error {
	defer b.lockBook(bookID)()
	if _, err := b.meta.Book(ctx, bookID); err != nil {
		return err
	}
	if err := b.claimBook(ctx, bookID); err != nil {
		return err
	}
	if err := b.meta.Deactivate(ctx, bookID); err != nil {
		return err
	}
	b.point(fpDeleteDeactivated)
	ids, err := b.vec.IDs(ctx, bookID)
	if err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "listing the book's vectors")
	}
	if err := b.vec.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "deleting the book's vectors")
	}
	b.point(fpDeleteVectors)
	if ids, err = b.lex.IDs(ctx, bookID); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "listing the book's lexical entries")
	}
	if err := b.lex.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "deleting the book's lexical entries")
	}
	b.point(fpDeleteLexical)
	return b.meta.DeleteBook(ctx, bookID)
}
