package migrations

import (
	"context"
	"database/sql"
	"io/fs"
	"os"
	"path"
	"strconv"
	"strings"
	"testing"

	_ "github.com/jackc/pgx/v5/stdlib"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"

	"github.com/citebook/citebook/internal/dbtest"
)

// TestSameNumbers: both databases have the same numbered migrations, so a
// schema version means the same tables on either.
func TestSameNumbers(t *testing.T) {
	names := func(d Dialect) []string {
		files, err := fs.Glob(files, string(d)+"/*.sql")
		require.NoError(t, err)
		var out []string
		for _, f := range files {
			out = append(out, path.Base(f))
		}
		return out
	}
	require.NotEmpty(t, names(SQLite))
	require.Equal(t, names(SQLite), names(Postgres))
}

// TestUpDownUp checks every migration applies, reverts and re-applies on
// both databases, so a Down section that does not match its Up is caught
// before it is needed.
func TestUpDownUp(t *testing.T) {
	dbtest.Each(t, func(t *testing.T, target string) {
		ctx := context.Background()
		d, driver, dsn := SQLite, "sqlite", "file:"+target
		listTables := `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'goose%' AND name NOT LIKE 'sqlite%'`
		if strings.HasPrefix(target, "postgres") {
			d, driver, dsn = Postgres, "pgx", target
			listTables = `SELECT tablename FROM pg_tables WHERE schemaname = current_schema() AND tablename NOT LIKE 'goose%'`
		}
		if d == SQLite {
			require.NoError(t, os.MkdirAll(path.Dir(target), 0o755))
		}
		db, err := sql.Open(driver, dsn)
		require.NoError(t, err)
		defer db.Close()

		names, err := fs.Glob(files, string(d)+"/*.sql")
		require.NoError(t, err)
		require.NotEmpty(t, names)
		for _, n := range names {
			b, err := fs.ReadFile(files, n)
			require.NoError(t, err)
			require.Contains(t, string(b), "-- +goose Up", n)
			require.Contains(t, string(b), "-- +goose Down", n)
		}

		last, err := strconv.ParseInt(strings.SplitN(path.Base(names[len(names)-1]), "_", 2)[0], 10, 64)
		require.NoError(t, err)
		v, err := Up(ctx, db, d)
		require.NoError(t, err)
		require.Equal(t, last, v, "the newest file's number is the schema version")
		v, err = Up(ctx, db, d)
		require.NoError(t, err)
		require.Equal(t, last, v, "a second Up finds nothing pending")

		p, err := provider(db, d)
		require.NoError(t, err)
		_, err = p.DownTo(ctx, 0)
		require.NoError(t, err)
		var tables []string
		rows, err := db.QueryContext(ctx, listTables)
		require.NoError(t, err)
		for rows.Next() {
			var n string
			require.NoError(t, rows.Scan(&n))
			tables = append(tables, n)
		}
		require.NoError(t, rows.Err())
		require.Empty(t, tables, "Down removes everything Up created: %s", strings.Join(tables, ", "))

		v, err = Up(ctx, db, d)
		require.NoError(t, err)
		require.Equal(t, last, v)
	})
}

// TestConcurrentUpPostgres: servers starting together against one database
// each run Up; the advisory lock lets one migrate while the others wait,
// and every one ends at the newest version.
func TestConcurrentUpPostgres(t *testing.T) {
	dsn := dbtest.DSN(t)
	ctx := context.Background()
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			db, err := sql.Open("pgx", dsn)
			if err != nil {
				errs <- err
				return
			}
			defer db.Close()
			_, err = Up(ctx, db, Postgres)
			errs <- err
		}()
	}
	for range 3 {
		require.NoError(t, <-errs)
	}
}
