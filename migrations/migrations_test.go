package migrations

import (
	"context"
	"database/sql"
	"io/fs"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/pressly/goose/v3"
	"github.com/stretchr/testify/require"
	_ "modernc.org/sqlite"
)

// TestUpDownUp checks every migration applies, reverts and re-applies, so a
// Down section that does not match its Up is caught before it is needed.
func TestUpDownUp(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db"))
	require.NoError(t, err)
	defer db.Close()

	names, err := fs.Glob(files, "*.sql")
	require.NoError(t, err)
	require.NotEmpty(t, names)
	for _, n := range names {
		b, err := fs.ReadFile(files, n)
		require.NoError(t, err)
		require.Contains(t, string(b), "-- +goose Up", n)
		require.Contains(t, string(b), "-- +goose Down", n)
	}

	last, err := strconv.ParseInt(strings.SplitN(names[len(names)-1], "_", 2)[0], 10, 64)
	require.NoError(t, err)
	v, err := Up(ctx, db)
	require.NoError(t, err)
	require.Equal(t, last, v, "the newest file's number is the schema version")

	p, err := goose.NewProvider(goose.DialectSQLite3, db, files)
	require.NoError(t, err)
	_, err = p.DownTo(ctx, 0)
	require.NoError(t, err)
	var tables []string
	rows, err := db.QueryContext(ctx, `SELECT name FROM sqlite_master WHERE type='table' AND name NOT LIKE 'goose%' AND name NOT LIKE 'sqlite%'`)
	require.NoError(t, err)
	for rows.Next() {
		var n string
		require.NoError(t, rows.Scan(&n))
		tables = append(tables, n)
	}
	require.NoError(t, rows.Err())
	require.Empty(t, tables, "Down removes everything Up created: %s", strings.Join(tables, ", "))

	v, err = Up(ctx, db)
	require.NoError(t, err)
	require.Equal(t, last, v)
}

// TestJobOwnerKeepsHistory applies 0004 (which rebuilds jobs and batches)
// to a library with history, foreign keys enforced as at run time: no job
// or batch is lost, the batches still cascade from their job, and new job
// IDs continue after the old ones.
func TestJobOwnerKeepsHistory(t *testing.T) {
	ctx := context.Background()
	db, err := sql.Open("sqlite", "file:"+filepath.Join(t.TempDir(), "m.db")+"?_pragma=foreign_keys(1)")
	require.NoError(t, err)
	defer db.Close()
	db.SetMaxOpenConns(1)
	p, err := goose.NewProvider(goose.DialectSQLite3, db, files)
	require.NoError(t, err)
	_, err = p.UpTo(ctx, 3)
	require.NoError(t, err)
	for _, q := range []string{
		`INSERT INTO books (id, tenant, created) VALUES ('b', 't', 'now')`,
		`INSERT INTO jobs (book_id, version, status, started) VALUES ('b', 1, 'completed', 'x'), ('b', 2, 'running', 'y')`,
		`INSERT INTO batches (job_id, n, status, chunk_ids) VALUES (1, 0, 'done', '["a"]'), (2, 0, 'done', '["b"]'), (2, 1, 'pending', '["c"]')`,
	} {
		_, err := db.ExecContext(ctx, q)
		require.NoError(t, err, q)
	}
	_, err = Up(ctx, db)
	require.NoError(t, err)

	count := func(q string) (n int) {
		require.NoError(t, db.QueryRowContext(ctx, q).Scan(&n))
		return n
	}
	require.Equal(t, 2, count(`SELECT count(*) FROM jobs`))
	require.Equal(t, 3, count(`SELECT count(*) FROM batches`))
	require.Equal(t, 0, count(`SELECT count(*) FROM jobs WHERE pid <> 0 OR host <> '' OR superseded_by <> 0`))
	_, err = db.ExecContext(ctx, `INSERT INTO jobs (book_id, version, status, started, pid) VALUES ('b', 3, 'abandoned', 'z', 7)`)
	require.NoError(t, err)
	require.Equal(t, 3, count(`SELECT max(id) FROM jobs`))
	_, err = db.ExecContext(ctx, `INSERT INTO batches (job_id, n) VALUES (99, 0)`)
	require.Error(t, err, "batches still reference jobs")
	_, err = db.ExecContext(ctx, `DELETE FROM jobs WHERE id = 2`)
	require.NoError(t, err)
	require.Equal(t, 1, count(`SELECT count(*) FROM batches`), "deleting a job still deletes its batches")
}
