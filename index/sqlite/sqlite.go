// Package sqlite is the metadata database of a library: books, versions,
// index jobs and batches, and the parents and chunks of every served version.
// It is the single place readers resolve which version of a book is served,
// so switching a book to a new version is one transaction here.
//
// It uses SQLite through modernc.org/sqlite (pure Go, no cgo) in WAL mode so
// readers never block the builder, with the schema of package migrations
// applied at Open.
package sqlite

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	_ "modernc.org/sqlite" // registers the "sqlite" driver

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/migrations"
)

// DB is an open metadata database. It is safe for concurrent use.
type DB struct {
	db     *sql.DB
	origin string // names this handle in the change log
}

var _ index.Meta = (*DB)(nil)

// Open opens (creating if needed) the database file at path and applies
// pending migrations. Foreign keys are enforced, writers wait up to 10 s for
// a lock instead of failing, and transactions take the write lock up front
// so two writers never deadlock upgrading a read lock.
func Open(ctx context.Context, path string) (*DB, error) {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot create metadata directory")
	}
	q := url.Values{}
	q.Add("_pragma", "busy_timeout(10000)")
	q.Add("_pragma", "journal_mode(WAL)")
	q.Add("_pragma", "foreign_keys(1)")
	// FULL, not NORMAL: the builder deletes retired chunks from the stores
	// right after Activate commits, so a commit lost to a power cut would
	// leave the old version served without its chunks.
	q.Add("_pragma", "synchronous(FULL)")
	q.Set("_txlock", "immediate")
	db, err := sql.Open("sqlite", "file:"+path+"?"+q.Encode())
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot open metadata database")
	}
	// database/sql keeps 2 idle connections by default; under 16 concurrent
	// searches the rest were closed and reopened per query, and each open
	// re-reads the schema (4% of a search's CPU in the load benchmark).
	db.SetMaxIdleConns(8)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot open metadata database %s", path)
	}
	if _, err := migrations.Up(ctx, db); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot migrate metadata database %s", path)
	}
	return &DB{db: db, origin: newOrigin()}, nil
}

// SQL exposes the connection pool so packages owning later migrations (ACL
// grants, API tokens) keep their queries beside their code.
func (d *DB) SQL() *sql.DB { return d.db }

// Close closes the database.
func (d *DB) Close() error { return d.db.Close() }

func now() string { return time.Now().UTC().Format(time.RFC3339Nano) }

func parseTime(s string) time.Time {
	if s == "" {
		return time.Time{}
	}
	t, _ := time.Parse(time.RFC3339Nano, s)
	return t
}

func fmtTime(t time.Time) string {
	if t.IsZero() {
		return ""
	}
	return t.UTC().Format(time.RFC3339Nano)
}

func jsonText(v any) string {
	b, _ := json.Marshal(v)
	return string(b)
}

func unavailable(err error, what string) error {
	if err == nil {
		return nil
	}
	var ce *citebook.Error
	if errors.As(err, &ce) {
		return err
	}
	return citebook.Wrap(err, citebook.EUNAVAILABLE, "metadata database: %s", what)
}

// inTx runs fn in one write transaction.
func (d *DB) inTx(ctx context.Context, what string, fn func(tx *sql.Tx) error) error {
	tx, err := d.db.BeginTx(ctx, nil)
	if err != nil {
		return unavailable(err, what)
	}
	defer tx.Rollback()
	if err := fn(tx); err != nil {
		return unavailable(err, what)
	}
	return unavailable(tx.Commit(), what)
}

// scanner is a *sql.Row or *sql.Rows, so one scan function serves single
// lookups and listings.
type scanner interface{ Scan(...any) error }

// queryAll runs query and scans every row with scan, closing the rows, so
// each listing spells out only its columns; errors are reported as what.
func queryAll[T any](ctx context.Context, db *sql.DB, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
	rows, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return nil, unavailable(err, what)
	}
	defer rows.Close()
	var out []T
	for rows.Next() {
		v, err := scan(rows)
		if err != nil {
			return nil, unavailable(err, what)
		}
		out = append(out, v)
	}
	return out, unavailable(rows.Err(), what)
}

// affected fails with ENOTFOUND when a write matched no row, so updates of
// unknown records are not silently ignored.
func affected(res sql.Result, what string, notFound func() error) error {
	n, err := res.RowsAffected()
	if err != nil {
		return unavailable(err, what)
	}
	if n == 0 {
		return notFound()
	}
	return nil
}

// placeholders returns "?,?,…" with n marks and the IDs as arguments.
func placeholders(ids []string) (string, []any) {
	args := make([]any, len(ids))
	for i, id := range ids {
		args[i] = id
	}
	return strings.TrimSuffix(strings.Repeat("?,", len(ids)), ","), args
}

// chunked splits ids into groups small enough for SQLite's variable limit.
func chunked(ids []string, fn func([]string) error) error {
	const max = 500
	for len(ids) > 0 {
		n := min(max, len(ids))
		if err := fn(ids[:n]); err != nil {
			return err
		}
		ids = ids[n:]
	}
	return nil
}

// ---- books ----

const bookCols = `id, tenant, title, format, language, groups, source, pages, active_version, created`

func scanBook(sc scanner) (citebook.Book, error) {
	var b citebook.Book
	var groups, created, format string
	if err := sc.Scan(&b.ID, &b.Tenant, &b.Title, &format, &b.Language, &groups, &b.Source, &b.Pages, &b.Active, &created); err != nil {
		return b, err
	}
	b.Format = citebook.Format(format)
	b.Created = parseTime(created)
	if err := json.Unmarshal([]byte(groups), &b.Groups); err != nil {
		return b, fmt.Errorf("book %s groups: %w", b.ID, err)
	}
	return b, nil
}

// Book returns a book or an ENOTFOUND error.
func (d *DB) Book(ctx context.Context, id string) (*citebook.Book, error) {
	b, err := scanBook(d.db.QueryRowContext(ctx, `SELECT `+bookCols+` FROM books WHERE id=?`, id))
	if errors.Is(err, sql.ErrNoRows) {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
	} else if err != nil {
		return nil, unavailable(err, "read book")
	}
	return &b, nil
}

// Books lists a tenant's books by ID; tenant "" lists every tenant's.
func (d *DB) Books(ctx context.Context, tenant string) ([]citebook.Book, error) {
	return queryAll(ctx, d.db, "list books", scanBook,
		`SELECT `+bookCols+` FROM books WHERE ?='' OR tenant=? ORDER BY id`, tenant, tenant)
}

// PutBook inserts or updates a book's descriptive fields; the active version
// is only ever changed by Activate. Created is set on insert when zero.
func (d *DB) PutBook(ctx context.Context, b citebook.Book) error {
	if b.ID == "" || b.Tenant == "" {
		return citebook.Errorf(citebook.EINVALID, "a book needs an ID and a tenant")
	}
	if b.Groups == nil {
		b.Groups = []string{}
	}
	created := fmtTime(b.Created)
	if created == "" {
		created = now()
	}
	_, err := d.db.ExecContext(ctx, `INSERT INTO books (`+bookCols+`) VALUES (?,?,?,?,?,?,?,?,0,?)
		ON CONFLICT (id) DO UPDATE SET tenant=excluded.tenant, title=excluded.title, format=excluded.format,
		language=excluded.language, groups=excluded.groups, source=excluded.source, pages=excluded.pages`,
		b.ID, b.Tenant, b.Title, string(b.Format), b.Language, jsonText(b.Groups), b.Source, b.Pages, created)
	return unavailable(err, "write book")
}

// DeleteBook removes a book with its versions, jobs, parents and chunks (the
// schema cascades) and its grants, in one transaction, so a book added again
// under the same ID starts clean. A missing book is ENOTFOUND.
func (d *DB) DeleteBook(ctx context.Context, id string) error {
	return d.inTx(ctx, "delete book", func(tx *sql.Tx) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM books WHERE id=?`, id)
		if err != nil {
			return err
		}
		if err := affected(res, "delete book", func() error {
			return citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
		}); err != nil {
			return err
		}
		if err := d.logChange(ctx, tx, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `DELETE FROM grants WHERE book_id=?`, id)
		return err
	})
}

// Deactivate stops serving a book: readers resolve no version of it until a
// build activates one. A missing book is ENOTFOUND.
func (d *DB) Deactivate(ctx context.Context, id string) error {
	res, err := d.db.ExecContext(ctx, `UPDATE books SET active_version=0 WHERE id=?`, id)
	if err != nil {
		return unavailable(err, "deactivate book")
	}
	return affected(res, "deactivate book", func() error {
		return citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
	})
}

// ---- versions ----

// Versions lists a book's versions, oldest first.
func (d *DB) Versions(ctx context.Context, bookID string) ([]citebook.Version, error) {
	return queryAll(ctx, d.db, "list versions", scanVersion, `SELECT book_id, number, content_hash, source_hash,
		status, error, embedding, chunks, created, completed FROM versions WHERE book_id=? ORDER BY number`, bookID)
}

func scanVersion(sc scanner) (citebook.Version, error) {
	var v citebook.Version
	var status, created, completed string
	err := sc.Scan(&v.BookID, &v.Number, &v.ContentHash, &v.SourceHash, &status, &v.Error,
		&v.Embedding, &v.Chunks, &created, &completed)
	v.Status = citebook.VersionStatus(status)
	v.Created, v.Completed = parseTime(created), parseTime(completed)
	return v, err
}

// CreateVersion records a new build of a book; a number already used is a
// conflict (two builders racing on one book).
func (d *DB) CreateVersion(ctx context.Context, v citebook.Version) error {
	if v.Status == "" {
		v.Status = citebook.VersionQueued
	}
	created := fmtTime(v.Created)
	if created == "" {
		created = now()
	}
	_, err := d.db.ExecContext(ctx, `INSERT INTO versions (book_id, number, content_hash, source_hash, status,
		error, embedding, chunks, created) VALUES (?,?,?,?,?,?,?,?,?)`,
		v.BookID, v.Number, v.ContentHash, v.SourceHash, string(v.Status), v.Error, v.Embedding, v.Chunks, created)
	if err != nil && strings.Contains(err.Error(), "UNIQUE") {
		return citebook.Wrap(err, citebook.ECONFLICT, "version %d of book %q already exists", v.Number, v.BookID)
	}
	if err != nil && strings.Contains(err.Error(), "FOREIGN KEY") {
		return citebook.Wrap(err, citebook.ENOTFOUND, "book %q not found", v.BookID)
	}
	return unavailable(err, "create version")
}

// SetVersionStatus moves a version to status, recording msg as its error.
func (d *DB) SetVersionStatus(ctx context.Context, bookID string, version int, status citebook.VersionStatus, msg string) error {
	res, err := d.db.ExecContext(ctx, `UPDATE versions SET status=?, error=? WHERE book_id=? AND number=?`,
		string(status), msg, bookID, version)
	if err != nil {
		return unavailable(err, "update version")
	}
	return affected(res, "update version", func() error {
		return citebook.Errorf(citebook.ENOTFOUND, "version %d of book %q not found", version, bookID)
	})
}

// Activate completes a version and makes it the one readers are served, in
// one transaction: before it commits every reader resolves the old version,
// after it the new one. A failed version cannot be activated, nor one whose
// chunk rows (counted inside the transaction) are not the number its build
// recorded, so a version is never served with rows missing.
func (d *DB) Activate(ctx context.Context, bookID string, version int) error {
	return d.inTx(ctx, "activate version", func(tx *sql.Tx) error {
		var status string
		var want int
		err := tx.QueryRowContext(ctx, `SELECT status, chunks FROM versions WHERE book_id=? AND number=?`, bookID, version).Scan(&status, &want)
		if errors.Is(err, sql.ErrNoRows) {
			return citebook.Errorf(citebook.ENOTFOUND, "version %d of book %q not found", version, bookID)
		} else if err != nil {
			return err
		}
		if citebook.VersionStatus(status) == citebook.VersionFailed {
			return citebook.Errorf(citebook.ECONFLICT, "version %d of book %q failed and cannot be served", version, bookID)
		}
		var have int
		if err := tx.QueryRowContext(ctx, `SELECT count(DISTINCT id) FROM chunks WHERE book_id=? AND`+visibleAt,
			bookID, version, version).Scan(&have); err != nil {
			return err
		}
		if have != want {
			return citebook.Errorf(citebook.ECONFLICT, "version %d of book %q has %d of its %d chunks in the metadata and cannot be served",
				version, bookID, have, want)
		}
		if _, err := tx.ExecContext(ctx, `UPDATE versions SET status='completed', error='', completed=? WHERE book_id=? AND number=?`,
			now(), bookID, version); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `UPDATE books SET active_version=? WHERE id=?`, version, bookID); err != nil {
			return err
		}
		return d.logChange(ctx, tx, bookID)
	})
}

// DiscardVersion removes the rows a build of version wrote and undoes its
// retirements, so the next build starts from the active version.
func (d *DB) DiscardVersion(ctx context.Context, bookID string, version int) error {
	return d.inTx(ctx, "discard version", func(tx *sql.Tx) error {
		for _, table := range []string{"parents", "chunks"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE book_id=? AND version=?`, bookID, version); err != nil {
				return err
			}
			if _, err := tx.ExecContext(ctx, `UPDATE `+table+` SET retired=0 WHERE book_id=? AND retired=?`, bookID, version); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---- embedding version ----

const embeddingKey = "embedding_version"

// EmbeddingVersion returns the library's embedding version; ok is false
// before anything was embedded.
func (d *DB) EmbeddingVersion(ctx context.Context) (citebook.EmbeddingVersion, bool, error) {
	var v citebook.EmbeddingVersion
	var s string
	err := d.db.QueryRowContext(ctx, `SELECT value FROM index_settings WHERE key=?`, embeddingKey).Scan(&s)
	if errors.Is(err, sql.ErrNoRows) {
		return v, false, nil
	} else if err != nil {
		return v, false, unavailable(err, "read settings")
	}
	if err := json.Unmarshal([]byte(s), &v); err != nil {
		return v, false, unavailable(err, "read embedding version")
	}
	return v, true, nil
}

// SetEmbeddingVersion records the embedding version of the library.
func (d *DB) SetEmbeddingVersion(ctx context.Context, v citebook.EmbeddingVersion) error {
	_, err := d.db.ExecContext(ctx, `INSERT INTO index_settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value=excluded.value`, embeddingKey, jsonText(v))
	return unavailable(err, "write settings")
}
