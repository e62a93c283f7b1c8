package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// TestBookIDsAndRows: a full reload visits the file's books and those only
// memory still holds, each once; a row that cannot be read is the file
// being unavailable, a corrupt row keeps its own code.
func TestBookIDsAndRows(t *testing.T) {
	ctx := context.Background()
	db := testDB(t, `CREATE TABLE chunks (id TEXT PRIMARY KEY, book_id TEXT NOT NULL)`,
		`INSERT INTO chunks VALUES ('a1','a'), ('a2','a'), ('b1','b')`)

	ids, err := BookIDs(ctx, db, "test store", []string{"b", "gone", "gone"})
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a", "b", "gone"}, ids)

	var got []string
	err = Rows(ctx, db, "test store", func(rs *sql.Rows) error {
		var id string
		err := rs.Scan(&id)
		got = append(got, id)
		return err
	}, `SELECT id FROM chunks WHERE book_id=?`, "a")
	require.NoError(t, err)
	require.ElementsMatch(t, []string{"a1", "a2"}, got)

	err = Rows(ctx, db, "test store", func(*sql.Rows) error { return errors.New("disk gone") }, `SELECT id FROM chunks`)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
	require.Contains(t, citebook.ErrorMessage(err), "cannot reload test store")
	err = Rows(ctx, db, "test store", func(*sql.Rows) error {
		return citebook.Errorf(citebook.EINTERNAL, "row is corrupt")
	}, `SELECT id FROM chunks`)
	require.Equal(t, citebook.EINTERNAL, citebook.ErrorCode(err))
	err = Rows(ctx, db, "test store", func(*sql.Rows) error { return nil }, `SELECT nope FROM chunks`)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err))
}
