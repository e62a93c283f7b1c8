// Package migrations holds the metadata database schema as numbered SQL files
// and applies them when the database is opened, so every binary and test runs
// against the same schema without a separate migration step.
//
// Files are named NNNN_name.sql with goose annotations (-- +goose Up / Down).
// Applying them uses github.com/pressly/goose/v3: it is widely used and well
// maintained, records applied versions in its own table, runs each file in a
// transaction and, through its Provider API, needs no package-level state (no
// global dialect or file system), so several databases can be migrated in one
// process. To change the schema, add the next numbered file; never edit an
// applied one.
package migrations

import (
	"context"
	"database/sql"
	"embed"

	"github.com/pressly/goose/v3"

	"github.com/citebook/citebook"
)

// files embeds every migration so a single binary carries its schema.
//
//go:embed *.sql
var files embed.FS

// Up applies every pending migration to a SQLite database and returns the
// schema version reached.
func Up(ctx context.Context, db *sql.DB) (int64, error) {
	p, err := goose.NewProvider(goose.DialectSQLite3, db, files)
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
