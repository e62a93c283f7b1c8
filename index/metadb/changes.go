package metadb

import (
	"context"
	"crypto/rand"
	"database/sql"
	"encoding/hex"

	"github.com/citebook/citebook/index"
)

// keepChanges is how many change rows are kept; a reader further behind
// than that reloads everything.
const keepChanges = 10000

func newOrigin() string {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	return hex.EncodeToString(raw[:])
}

// accessChange is the book ID of a change-log row recording a change of who
// may read what (a grant, a book's groups or tenant, a deactivation), or of
// the library's embedding version: it advances the generation, by which
// caches know to read again (acl.Resolver.Cache, index.EmbeddingCache), and
// names no book for followers to reload.
const accessChange = ""

// logChange records, inside the transaction making it, that a book's served
// state changed (a version switch or a deletion), or access (accessChange). Generations must become
// visible in order (a follower that has read gen N skips everything below
// it): SQLite has one writer at a time anyway; PostgreSQL draws identity
// values before commit, so its dialect locks the table first and holds the
// lock to commit. Call it last in a transaction.
func (d *DB) logChange(ctx context.Context, tx *txn, bookID string) error {
	if d.d.lockChanges != "" {
		if _, err := tx.ExecContext(ctx, d.d.lockChanges); err != nil {
			return err
		}
	}
	var gen int64
	if err := tx.QueryRowContext(ctx, `INSERT INTO changes (book_id, origin, at) VALUES (?,?,?) RETURNING gen`,
		bookID, d.origin, now()).Scan(&gen); err != nil {
		return err
	}
	if gen%100 == 0 {
		_, err := tx.ExecContext(ctx, `DELETE FROM changes WHERE gen <= ?`, gen-keepChanges)
		return err
	}
	return nil
}

// Changes reports the newest generation and the books other database
// handles (another process, or another handle in this one) changed after
// generation since. All is set when since is older than the log kept, so
// the caller must reload everything.
func (d *DB) Changes(ctx context.Context, since int64) (index.Changes, error) {
	var ch index.Changes
	var oldest sql.NullInt64
	if err := d.db.QueryRowContext(ctx, `SELECT coalesce(max(gen), 0), min(gen) FROM changes`).Scan(&ch.Gen, &oldest); err != nil {
		return ch, unavailable(err, "read changes")
	}
	if ch.Gen <= since {
		ch.Gen = since
		return ch, nil
	}
	if oldest.Valid && oldest.Int64 > since+1 {
		ch.All = true
		return ch, nil
	}
	books, err := queryAll(ctx, d.db, "read changes", func(sc scanner) (id string, err error) { return id, sc.Scan(&id) },
		`SELECT DISTINCT book_id FROM changes WHERE gen > ? AND gen <= ? AND origin <> ? AND book_id <> ''`, since, ch.Gen, d.origin)
	ch.Books = books
	return ch, err
}

// ChunkLifespans returns, for each of the given chunk IDs that has metadata
// rows, the book and versions each row is visible in; a chunk unknown to the
// metadata (deleted, or never completed) is absent.
func (d *DB) ChunkLifespans(ctx context.Context, ids []string) (map[string][]index.Lifespan, error) {
	out := make(map[string][]index.Lifespan, len(ids))
	err := eachRowIn(ctx, d.db, `SELECT id, book_id, version, retired FROM chunks WHERE id IN (?)`, ids, nil, func(rows *sql.Rows) error {
		var id string
		var l index.Lifespan
		if err := rows.Scan(&id, &l.BookID, &l.Version, &l.Retired); err != nil {
			return err
		}
		out[id] = append(out[id], l)
		return nil
	})
	if err != nil {
		return nil, unavailable(err, "read chunk lifespans")
	}
	return out, nil
}
