package metadb

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"os"
	"path/filepath"

	"github.com/jmoiron/sqlx"
	"modernc.org/sqlite"
	sqlite3 "modernc.org/sqlite/lib"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/migrations"
)

// sqliteDialect is the zero-config database: one file in the data dir. It
// has one writer at a time, so the change log needs no lock, and a writer
// waits for the lock (busy_timeout) rather than failing, so nothing is
// retried.
var sqliteDialect = &dialect{
	name:       migrations.SQLite,
	bind:       sqlx.QUESTION,
	open:       openSQLite,
	unique:     sqliteCode(sqlite3.SQLITE_CONSTRAINT_UNIQUE, sqlite3.SQLITE_CONSTRAINT_PRIMARYKEY),
	foreignKey: sqliteCode(sqlite3.SQLITE_CONSTRAINT_FOREIGNKEY),
	retry:      func(error) bool { return false },
}

// openSQLite opens (creating if needed) the database file at path and
// applies pending migrations. Foreign keys are enforced, writers wait up to
// 10 s for a lock instead of failing, and transactions take the write lock
// up front so two writers never deadlock upgrading a read lock.
func openSQLite(ctx context.Context, path string) (*sql.DB, error) {
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
	if _, err := migrations.Up(ctx, db, migrations.SQLite); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot migrate metadata database %s", path)
	}
	return db, nil
}

// sqliteCode matches SQLite errors with one of the extended result codes.
func sqliteCode(codes ...int) func(error) bool {
	return func(err error) bool {
		var se *sqlite.Error
		if !errors.As(err, &se) {
			return false
		}
		for _, c := range codes {
			if se.Code() == c {
				return true
			}
		}
		return false
	}
}
