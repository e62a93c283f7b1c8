package index

import (
	"context"

	"github.com/citebook/citebook"
)

// Delete removes a book from both stores and then from the metadata
// database. The stores go first: should the metadata step fail, the book is
// still listed with nothing behind it and `Verify` with repair can rebuild
// it, whereas the other order would leave vectors nothing could ever find.
func (b *Builder) Delete(ctx context.Context, bookID string) error {
	defer b.lockBook(bookID)()
	if _, err := b.meta.Book(ctx, bookID); err != nil {
		return err
	}
	ids, err := b.vec.IDs(ctx, bookID)
	if err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "listing the book's vectors")
	}
	if err := b.vec.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "deleting the book's vectors")
	}
	if ids, err = b.lex.IDs(ctx, bookID); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "listing the book's lexical entries")
	}
	if err := b.lex.Delete(ctx, ids); err != nil {
		return citebook.Wrap(err, citebook.ErrorCode(err), "deleting the book's lexical entries")
	}
	return b.meta.DeleteBook(ctx, bookID)
}
