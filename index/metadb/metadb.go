// Package metadb is the metadata database of a library: books, versions,
// index jobs and batches, the parents and chunks of every served version,
// the change log, and (through SQL) the grants and API tokens. It is the
// single place readers resolve which version of a book is served, so
// switching a book to a new version is one transaction here.
//
// It runs on SQLite (the zero-config default: one file in the data dir,
// through modernc.org/sqlite, pure Go) or on PostgreSQL (several servers on
// one library, through github.com/jackc/pgx/v5's database/sql driver). The
// SQL is written once, in the subset both understand, with ? placeholders
// that the PostgreSQL dialect rebinds to $n (sqlx.Rebind); sqlite.go and
// postgres.go hold only what differs: how to open and tune the connection,
// how to recognise constraint errors, what to retry, and how the change log
// keeps its generations in commit order. The schema of package migrations
// (one numbered folder per database, same numbers) is applied at Open.
package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"
	"unicode/utf8"

	"github.com/jmoiron/sqlx"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
)

// DB is an open metadata database. It is safe for concurrent use.
type DB struct {
	db     *SQL
	d      *dialect
	origin string // names this handle in the change log
}

var _ index.Meta = (*DB)(nil)

// Open opens the metadata database target names: a postgres:// or
// postgresql:// URL is a PostgreSQL database, anything else the path of a
// SQLite file (created if needed). Pending migrations are applied.
func Open(ctx context.Context, target string) (*DB, error) {
	d := sqliteDialect
	if isPostgres(target) {
		d = postgresDialect
	}
	db, err := d.open(ctx, target)
	if err != nil {
		return nil, err
	}
	out := &DB{db: &SQL{db: db, bind: d.bind, prepare: d.name == sqliteDialect.name}, d: d, origin: newOrigin()}
	out.db.owner = out
	return out, nil
}

// Dialect names the database behind db: "sqlite" or "postgres".
func (d *DB) Dialect() string { return string(d.d.name) }

// SQL exposes the connection pool so packages owning later migrations (ACL
// grants, API tokens) keep their queries beside their code; their ?
// placeholders are rebound like the store's own.
func (d *DB) SQL() *SQL { return d.db }

// Ping checks the database answers; /readyz reports it.
func (d *DB) Ping(ctx context.Context) error {
	return unavailable(d.db.db.PingContext(ctx), "ping")
}

// Close closes the database.
func (d *DB) Close() error { return d.db.close() }

// SQL is the connection pool in the database's dialect: statements are
// written with ? placeholders and rebound for PostgreSQL, so a statement has
// one text for both databases.
type SQL struct {
	db   *sql.DB
	bind int // sqlx bind type
	// prepare keeps queries prepared (SQLite: compiling a statement was
	// 4–5% of a search's CPU, for the few queries every request makes —
	// books, grants, the change log); stmts holds them by query text.
	prepare bool
	owner   *DB // for ExecAccess's transaction and change log
	smu     sync.RWMutex
	stmts   map[string]*sql.Stmt
	closed  bool // under smu
}

// maxStmts bounds the prepared queries; queries beyond it run unprepared.
const maxStmts = 64

// ExecContext runs a statement that returns no rows.
func (s *SQL) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return s.db.ExecContext(ctx, sqlx.Rebind(s.bind, query), args...)
}

// ExecAccess runs a statement that changes who may read what (a grant
// added or removed: acl.Store) in one transaction with an access change in
// the change log, so every process that caches access by the log's
// generation (acl.Resolver.Cache) stops using what it cached as soon as
// the statement commits.
func (s *SQL) ExecAccess(ctx context.Context, query string, args ...any) (sql.Result, error) {
	var res sql.Result
	err := s.owner.inTx(ctx, "write access", func(tx *txn) error {
		var err error
		if res, err = tx.ExecContext(ctx, query, args...); err != nil {
			return err
		}
		// Last: on PostgreSQL it locks the change log until commit.
		return s.owner.logChange(ctx, tx, accessChange)
	})
	return res, err
}

// QueryContext runs a query.
func (s *SQL) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryContext(ctx, args...)
	}
	return s.db.QueryContext(ctx, sqlx.Rebind(s.bind, query), args...)
}

// QueryRowContext runs a query expected to return at most one row.
func (s *SQL) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	if st := s.stmt(ctx, query); st != nil {
		return st.QueryRowContext(ctx, args...)
	}
	return s.db.QueryRowContext(ctx, sqlx.Rebind(s.bind, query), args...)
}

// stmt returns query prepared, or nil when it is not kept prepared: on
// PostgreSQL (its driver caches statements itself), for a query with an
// expanded list of placeholders (in: a new text for every length), once
// maxStmts are kept, or when preparing fails (the query then runs
// unprepared and reports the error).
func (s *SQL) stmt(ctx context.Context, query string) *sql.Stmt {
	if !s.prepare || strings.Contains(query, "?, ?") {
		return nil
	}
	s.smu.RLock()
	st, ok := s.stmts[query]
	s.smu.RUnlock()
	if ok {
		return st
	}
	s.smu.Lock()
	defer s.smu.Unlock()
	if st, ok := s.stmts[query]; ok || s.closed {
		return st
	}
	if len(s.stmts) >= maxStmts {
		return nil
	}
	st, err := s.db.PrepareContext(ctx, sqlx.Rebind(s.bind, query))
	if err != nil {
		return nil
	}
	if s.stmts == nil {
		s.stmts = map[string]*sql.Stmt{}
	}
	s.stmts[query] = st
	return st
}

// close closes the prepared statements and the pool.
func (s *SQL) close() error {
	s.smu.Lock()
	for _, st := range s.stmts {
		st.Close()
	}
	s.stmts, s.closed = nil, true
	s.smu.Unlock()
	return s.db.Close()
}

// txn is a transaction in the database's dialect.
type txn struct {
	tx   *sql.Tx
	bind int
}

func (t *txn) ExecContext(ctx context.Context, query string, args ...any) (sql.Result, error) {
	return t.tx.ExecContext(ctx, sqlx.Rebind(t.bind, query), args...)
}

func (t *txn) QueryContext(ctx context.Context, query string, args ...any) (*sql.Rows, error) {
	return t.tx.QueryContext(ctx, sqlx.Rebind(t.bind, query), args...)
}

func (t *txn) QueryRowContext(ctx context.Context, query string, args ...any) *sql.Row {
	return t.tx.QueryRowContext(ctx, sqlx.Rebind(t.bind, query), args...)
}

func (t *txn) PrepareContext(ctx context.Context, query string) (*sql.Stmt, error) {
	return t.tx.PrepareContext(ctx, sqlx.Rebind(t.bind, query))
}

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

// text makes a free-form message or title storable in both databases:
// PostgreSQL's text takes neither NUL nor invalid UTF-8, and a job must not
// lose its state because its error quoted a binary file. Valid text is
// unchanged.
func text(s string) string {
	if name(s) {
		return s
	}
	return strings.ReplaceAll(strings.ToValidUTF8(s, "\uFFFD"), "\x00", "")
}

// name reports whether s is stored as given by both databases; identifiers
// that are not are refused rather than changed.
func name(s string) bool { return utf8.ValidString(s) && !strings.ContainsRune(s, 0) }

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

// inTx runs fn in one write transaction. A transaction the database gave
// up on for a reason another attempt can fix (PostgreSQL's deadlock
// detection or a serialization failure; SQLite waits instead, busy_timeout)
// runs again from the start, up to three times.
func (d *DB) inTx(ctx context.Context, what string, fn func(tx *txn) error) error {
	var err error
	for attempt := 0; attempt < 3; attempt++ {
		if err = d.tryTx(ctx, fn); err == nil || !d.d.retry(err) || ctx.Err() != nil {
			break
		}
	}
	return unavailable(err, what)
}

func (d *DB) tryTx(ctx context.Context, fn func(tx *txn) error) error {
	t, err := d.db.db.BeginTx(ctx, nil)
	if err != nil {
		return err
	}
	defer t.Rollback()
	if err := fn(&txn{tx: t, bind: d.db.bind}); err != nil {
		return err
	}
	return t.Commit()
}

// scanner is a *sql.Row or *sql.Rows, so one scan function serves single
// lookups and listings.
type scanner interface{ Scan(...any) error }

// queryAll runs query and scans every row with scan, closing the rows, so
// each listing spells out only its columns; errors are reported as what.
func queryAll[T any](ctx context.Context, db *SQL, what string, scan func(scanner) (T, error), query string, args ...any) ([]T, error) {
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

// queryOne runs query and scans its one row with scan: no row is
// notFound's error, any other failure EUNAVAILABLE reported as what.
func queryOne[T any](ctx context.Context, db *SQL, what string, notFound func() error, scan func(scanner) (T, error), query string, args ...any) (T, error) {
	v, err := scan(db.QueryRowContext(ctx, query, args...))
	if errors.Is(err, sql.ErrNoRows) {
		return v, notFound()
	}
	return v, unavailable(err, what)
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

// in expands the one "IN (?)" of query to a mark per ID and returns the
// arguments: args before the list, the IDs, then after.
func in(query string, before []any, ids []string, after ...any) (string, []any, error) {
	args := append(append(append([]any{}, before...), ids), after...)
	return sqlx.In(query, args...)
}

// chunked splits ids into groups small enough for SQLite's variable limit
// (PostgreSQL takes 65,535; one size serves both).
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

// eachRowIn runs query once per group of ids (its one "IN (?)" expanded,
// after the list) and hands every row to each, so the lookups by chunk ID
// spell out only their SQL and columns.
func eachRowIn(ctx context.Context, db *SQL, query string, ids []string, after []any, each func(*sql.Rows) error) error {
	return chunked(ids, func(part []string) error {
		q, args, err := in(query, nil, part, after...)
		if err != nil {
			return err
		}
		rows, err := db.QueryContext(ctx, q, args...)
		if err != nil {
			return err
		}
		defer rows.Close()
		for rows.Next() {
			if err := each(rows); err != nil {
				return err
			}
		}
		return rows.Err()
	})
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
	b, err := queryOne(ctx, d.db, "read book", func() error { return citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id) },
		scanBook, `SELECT `+bookCols+` FROM books WHERE id=?`, id)
	if err != nil {
		return nil, err
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
	if !name(b.ID) || !name(b.Tenant) {
		return citebook.Errorf(citebook.EINVALID, "a book's ID and tenant must be UTF-8 text without NUL characters")
	}
	if b.Groups == nil {
		b.Groups = []string{}
	}
	created := fmtTime(b.Created)
	if created == "" {
		created = now()
	}
	// Groups and tenant decide who reads the book: an access change.
	return d.inTx(ctx, "write book", func(tx *txn) error {
		_, err := tx.ExecContext(ctx, `INSERT INTO books (`+bookCols+`) VALUES (?,?,?,?,?,?,?,?,0,?)
		ON CONFLICT (id) DO UPDATE SET tenant=excluded.tenant, title=excluded.title, format=excluded.format,
		language=excluded.language, groups=excluded.groups, source=excluded.source, pages=excluded.pages`,
			b.ID, b.Tenant, text(b.Title), string(b.Format), b.Language, jsonText(b.Groups), b.Source, b.Pages, created)
		if err != nil {
			return err
		}
		return d.logChange(ctx, tx, accessChange)
	})
}

// DeleteBook removes a book with its versions, jobs, parents and chunks (the
// schema cascades) and its grants, in one transaction, so a book added again
// under the same ID starts clean. A missing book is ENOTFOUND.
func (d *DB) DeleteBook(ctx context.Context, id string) error {
	return d.inTx(ctx, "delete book", func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `DELETE FROM books WHERE id=?`, id)
		if err != nil {
			return err
		}
		if err := affected(res, "delete book", func() error {
			return citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
		}); err != nil {
			return err
		}
		if _, err = tx.ExecContext(ctx, `DELETE FROM grants WHERE book_id=?`, id); err != nil {
			return err
		}
		// Last: on PostgreSQL it locks the change log until commit.
		return d.logChange(ctx, tx, id)
	})
}

// Deactivate stops serving a book: readers resolve no version of it until a
// build activates one. A missing book is ENOTFOUND.
func (d *DB) Deactivate(ctx context.Context, id string) error {
	return d.inTx(ctx, "deactivate book", func(tx *txn) error {
		res, err := tx.ExecContext(ctx, `UPDATE books SET active_version=0 WHERE id=?`, id)
		if err != nil {
			return err
		}
		if err := affected(res, "deactivate book", func() error {
			return citebook.Errorf(citebook.ENOTFOUND, "book %q not found", id)
		}); err != nil {
			return err
		}
		// Serving no version closes the book to every reader.
		return d.logChange(ctx, tx, accessChange)
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
		v.BookID, v.Number, v.ContentHash, v.SourceHash, string(v.Status), text(v.Error), v.Embedding, v.Chunks, created)
	if err != nil && d.d.unique(err) {
		return citebook.Wrap(err, citebook.ECONFLICT, "version %d of book %q already exists", v.Number, v.BookID)
	}
	if err != nil && d.d.foreignKey(err) {
		return citebook.Wrap(err, citebook.ENOTFOUND, "book %q not found", v.BookID)
	}
	return unavailable(err, "create version")
}

// SetVersionStatus moves a version to status, recording msg as its error.
func (d *DB) SetVersionStatus(ctx context.Context, bookID string, version int, status citebook.VersionStatus, msg string) error {
	res, err := d.db.ExecContext(ctx, `UPDATE versions SET status=?, error=? WHERE book_id=? AND number=?`,
		string(status), text(msg), bookID, version)
	if err != nil {
		return unavailable(err, "update version")
	}
	return affected(res, "update version", func() error {
		return citebook.Errorf(citebook.ENOTFOUND, "version %d of book %q not found", version, bookID)
	})
}

// SetSourceHash records another source hash for a version whose content it
// also produces (index.Meta).
func (d *DB) SetSourceHash(ctx context.Context, bookID string, version int, hash string) error {
	res, err := d.db.ExecContext(ctx, `UPDATE versions SET source_hash=? WHERE book_id=? AND number=?`,
		hash, bookID, version)
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
	return d.inTx(ctx, "activate version", func(tx *txn) error {
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
	return d.inTx(ctx, "discard version", func(tx *txn) error {
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

// SetEmbeddingVersion records the embedding version of the library. It
// logs a change (as accessChange: no book to reload), by which caches of
// the version (index.EmbeddingCache) know to read it again.
func (d *DB) SetEmbeddingVersion(ctx context.Context, v citebook.EmbeddingVersion) error {
	return d.inTx(ctx, "write settings", func(tx *txn) error {
		if _, err := tx.ExecContext(ctx, `INSERT INTO index_settings (key, value) VALUES (?, ?)
		ON CONFLICT (key) DO UPDATE SET value=excluded.value`, embeddingKey, jsonText(v)); err != nil {
			return err
		}
		return d.logChange(ctx, tx, accessChange)
	})
}
