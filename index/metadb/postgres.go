package metadb

import (
	"context"
	"database/sql"
	"errors"
	"net/url"
	"strings"
	"time"

	"github.com/jackc/pgx/v5/pgconn"
	_ "github.com/jackc/pgx/v5/stdlib" // registers the "pgx" database/sql driver
	"github.com/jmoiron/sqlx"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/migrations"
)

// postgresDialect is the database several servers share. Its transactions
// run at READ COMMITTED: every statement reads one committed snapshot, so a
// reader's single query sees a book wholly before or wholly after its switch.
// Identity values are drawn before commit, so the change log is locked
// (EXCLUSIVE: plain reads go on, writers of the log queue) from logging to
// commit to keep generations in commit order. Deadlocks and serialization
// failures are retried.
var postgresDialect = &dialect{
	name:        migrations.Postgres,
	bind:        sqlx.DOLLAR,
	open:        openPostgres,
	unique:      pgCode("23505"),          // unique_violation
	foreignKey:  pgCode("23503"),          // foreign_key_violation
	retry:       pgCode("40001", "40P01"), // serialization_failure, deadlock_detected
	lockRows:    true,
	lockChanges: `LOCK TABLE changes IN EXCLUSIVE MODE`,
	claimLock:   `SELECT pg_advisory_xact_lock(7164379211690354)`, // "citebook job queue"
	skipLocked:  ` FOR UPDATE SKIP LOCKED`,
}

// isPostgres reports whether a metadata target names a PostgreSQL database.
func isPostgres(target string) bool {
	return strings.HasPrefix(target, "postgres://") || strings.HasPrefix(target, "postgresql://")
}

// openPostgres connects to the database dsn names (a postgres:// URL, as
// pgx takes it) and applies pending migrations; several servers may do so at
// once (migrations.Up holds an advisory lock).
func openPostgres(ctx context.Context, dsn string) (*sql.DB, error) {
	name := redact(dsn)
	db, err := sql.Open("pgx", dsn)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot use metadata database %s", name)
	}
	// A server's share of the database's connections (100 by default):
	// enough for its request and index workers, few enough for several
	// servers and workers side by side.
	db.SetMaxOpenConns(16)
	db.SetMaxIdleConns(16)
	db.SetConnMaxIdleTime(5 * time.Minute)
	if err := db.PingContext(ctx); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reach metadata database %s", name)
	}
	if _, err := migrations.Up(ctx, db, migrations.Postgres); err != nil {
		db.Close()
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot migrate metadata database %s", name)
	}
	return db, nil
}

// redact names a database in messages without its password.
func redact(dsn string) string {
	u, err := url.Parse(dsn)
	if err != nil {
		return "postgres://…"
	}
	return u.Redacted()
}

// pgCode matches PostgreSQL errors with one of the SQLSTATE codes.
func pgCode(codes ...string) func(error) bool {
	return func(err error) bool {
		var pe *pgconn.PgError
		if !errors.As(err, &pe) {
			return false
		}
		for _, c := range codes {
			if pe.Code == c {
				return true
			}
		}
		return false
	}
}
