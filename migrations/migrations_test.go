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
