// Package migrations holds the metadata database schema as numbered SQL files
// and applies them when the database is opened, so every binary and test runs
// against the same schema without a separate migration step.
//
// There is one folder per database, sqlite/ and postgres/, holding the same
// numbers with the same tables and columns: the store's SQL is shared, and a
// file differs only where the two spell a thing differently (identity
// columns, booleans, bytea). Files are named NNNN_name.sql with goose
// annotations (-- +goose Up / Down). Applying them uses
// github.com/pressly/goose/v3: it is widely used and well maintained, records
// applied versions in its own table, runs each file in a transaction and,
// through its Provider API, needs no package-level state (no global dialect
// or file system), so several databases can be migrated in one process. On
// PostgreSQL a session advisory lock (goose's lock package) lets several
// servers start against one database at once: one migrates, the others wait
// and find nothing pending. To change the schema, add the next number to
// both folders; never edit an applied file.
package migrations

import (
	"context"
	"database/sql"
	"embed"
	"io/fs"

	"github.com/pressly/goose/v3"
	"github.com/pressly/goose/v3/lock"

	"github.com/citebook/citebook"
)

// files embeds every migration so a single binary carries its schema.
//
//go:embed sqlite/*.sql postgres/*.sql
var files embed.FS

// Dialect names a database the migrations exist for; it is also the folder
// holding them.
type Dialect string

// The databases a library's metadata can live in.
const (
	SQLite   Dialect = "sqlite"
	Postgres Dialect = "postgres"
)

// provider returns goose's migrator for db in dialect d.
func provider(db *sql.DB, d Dialect) (*goose.Provider, error) {
	var (
		gd   goose.Dialect
		opts []goose.ProviderOption
	)
	switch d {
	case SQLite:
		gd = goose.DialectSQLite3
	case Postgres:
		gd = goose.DialectPostgres
		// Probe every second for up to five minutes (goose's default
		// probes every 5 s): a second server starting beside the first
		// waits about as long as the migration takes.
		l, err := lock.NewPostgresSessionLocker(lock.WithLockTimeout(1, 300))
		if err != nil {
			return nil, err
		}
		opts = append(opts, goose.WithSessionLocker(l))
	default:
		return nil, citebook.Errorf(citebook.EINVALID, "no migrations for database %q", d)
	}
	sub, err := fs.Sub(files, string(d))
	if err != nil {
		return nil, err
	}
	return goose.NewProvider(gd, db, sub, opts...)
}

// Up applies every pending migration of dialect d to db and returns the
// schema version reached.
func Up(ctx context.Context, db *sql.DB, d Dialect) (int64, error) {
	p, err := provider(db, d)
	if err != nil {
		return 0, citebook.Wrap(err, citebook.EINTERNAL, "the embedded migrations are unusable")
	}
	if _, err := p.Up(ctx); err != nil {
		return 0, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot apply database migrations")
	}
	v, err := p.GetDBVersion(ctx)
	if err != nil {
		return 0, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot read the database schema version")
	}
	return v, nil
}
