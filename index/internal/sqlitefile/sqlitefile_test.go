package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// TestWrite checks that a batch is committed whole or not at all and that
// failures keep the code that tells a bug from an outage.
func TestWrite(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, `CREATE TABLE kv (k TEXT PRIMARY KEY, v INTEGER NOT NULL)`)

	insert := func(keys ...string) func(tx *sql.Tx) error {
		return func(tx *sql.Tx) error {
			return Each(ctx, tx, `INSERT INTO kv(k, v) VALUES(?, 1)`, len(keys), func(i int) ([]any, error) {
				if keys[i] == "unencodable" {
					return nil, errors.New("cannot encode")
				}
				return []any{keys[i]}, nil
			})
		}
	}
	tests := []struct {
		name string
		keys []string
		code string // "" when the write succeeds
		rows int    // rows in the table afterwards
	}{
		{"batch commits", []string{"a", "b"}, "", 2},
		{"duplicate key rolls back the batch", []string{"c", "a"}, citebook.EUNAVAILABLE, 2},
		{"encoding failure is a bug", []string{"d", "unencodable"}, citebook.EINTERNAL, 2},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			err := Write(ctx, db, "test store", insert(tc.keys...))
			require.Equal(t, tc.code, citebook.ErrorCode(err), "%v", err)
			var n int
			require.NoError(t, db.QueryRowContext(ctx, `SELECT count(*) FROM kv`).Scan(&n))
			require.Equal(t, tc.rows, n)
		})
	}
}

// testDB is a file opened as the stores open theirs, with the statements
// run; it is closed when the test ends.
func testDB(t *testing.T, stmts ...string) *sql.DB {
	t.Helper()
	db, err := Open(t.TempDir(), "t.db", "test store")
	require.NoError(t, err)
	t.Cleanup(func() { db.Close() })
	for _, st := range stmts {
		_, err = db.ExecContext(context.Background(), st)
		require.NoError(t, err)
	}
	return db
}
