// Package sqlitefile is what the embedded vector store and the lexical index
// share about the SQLite file each keeps its durable copy in: how the file is
// opened for crash-safe single-writer use, and how one write call becomes one
// transaction, so both get the same durability from one piece of code — and
// how the in-memory index built from that file is saved beside it as a
// snapshot, so a restart can skip rebuilding it (snapshot.go).
package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"os"
	"path/filepath"

	"github.com/citebook/citebook"
	_ "modernc.org/sqlite" // registers the "sqlite" driver
)

// Open opens (creating dir when needed) the database file name inside dir.
// WAL with synchronous=FULL makes every committed transaction survive a
// crash or power loss; one connection suffices because each store serialises
// its writers and reads from memory. what names the store in errors.
func Open(dir, name, what string) (*sql.DB, error) {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot create %s directory %s", what, dir)
	}
	dsn := "file:" + filepath.Join(dir, name) +
		"?_pragma=journal_mode(WAL)&_pragma=synchronous(FULL)&_pragma=busy_timeout(10000)"
	db, err := sql.Open("sqlite", dsn)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot open %s", what)
	}
	db.SetMaxOpenConns(1)
	if _, err := db.Exec(`CREATE TABLE IF NOT EXISTS generation (id INTEGER PRIMARY KEY CHECK (id = 0), n INTEGER NOT NULL)`); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot open %s", what)
	}
	return db, nil
}

// Generation is the number of write transactions the file has committed
// (Write counts them in the same transaction), so an in-memory copy saved
// alongside can tell whether it still matches the file.
func Generation(ctx context.Context, db *sql.DB) (uint64, error) {
	var n uint64
	err := db.QueryRowContext(ctx, `SELECT n FROM generation WHERE id = 0`).Scan(&n)
	if errors.Is(err, sql.ErrNoRows) {
		return 0, nil
	}
	return n, err
}

// Write runs fn in one transaction, so a batch is on disk whole or not at
// all. Errors that already carry a code keep it; any other is reported as
// the store being unavailable for writing.
func Write(ctx context.Context, db *sql.DB, what string, fn func(tx *sql.Tx) error) error {
	tx, err := db.BeginTx(ctx, nil)
	if err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write %s", what)
	}
	defer tx.Rollback()
	_, err = tx.ExecContext(ctx, `INSERT INTO generation(id, n) VALUES(0, 1) ON CONFLICT(id) DO UPDATE SET n = n + 1`)
	if err == nil {
		err = fn(tx)
	}
	if err != nil {
		var ce *citebook.Error
		if errors.As(err, &ce) {
			return err
		}
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write %s", what)
	}
	if err := tx.Commit(); err != nil {
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot write %s", what)
	}
	return nil
}

// Each executes stmt n times inside tx, args(i) giving the arguments of the
// i-th run; preparing once keeps large batches cheap. An args error means a
// chunk could not be encoded, which is a bug rather than an outage.
func Each(ctx context.Context, tx *sql.Tx, stmt string, n int, args func(i int) ([]any, error)) error {
	st, err := tx.PrepareContext(ctx, stmt)
	if err != nil {
		return err
	}
	defer st.Close()
	for i := range n {
		a, err := args(i)
		if err != nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "cannot encode a chunk for storage")
		}
		if _, err := st.ExecContext(ctx, a...); err != nil {
			return err
		}
	}
	return nil
}

// DataVersion is SQLite's data_version of the connection: it changes when
// another connection (another process) commits to the file. With the single
// connection Open configures, an unchanged value means every commit since
// was this store's own, so its memory still matches the file.
func DataVersion(ctx context.Context, db *sql.DB) (int64, error) {
	var v int64
	err := db.QueryRowContext(ctx, `PRAGMA data_version`).Scan(&v)
	return v, err
}
