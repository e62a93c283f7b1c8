package sqlitefile

import (
	"context"
	"database/sql"
	"errors"
	"log/slog"

	"github.com/citebook/citebook"
)

// Both stores keep their memory in step with a file another process may
// write (`citebook index` while `serve` runs): ReloadBooks re-reads books
// from the file, and a snapshot of memory is saved only while memory is
// still a copy of the file. What the two share about that lives here.

// BookIDs lists every book with rows in the file, then those of inMemory
// the file no longer has, each once: the books a full reload must visit.
// what names the store in errors.
func BookIDs(ctx context.Context, db *sql.DB, what string, inMemory []string) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	err := Rows(ctx, db, what, func(rs *sql.Rows) error {
		var id string
		if err := rs.Scan(&id); err != nil {
			return err
		}
		seen[id] = true
		out = append(out, id)
		return nil
	}, `SELECT DISTINCT book_id FROM chunks`)
	if err != nil {
		return nil, err
	}
	for _, id := range inMemory {
		if !seen[id] {
			seen[id] = true
			out = append(out, id)
		}
	}
	return out, nil
}

// Rows runs a query of the file and calls scan for each row. A failure of
// the query, of reading a row or of scan itself is the file being
// unavailable ("cannot reload <what>"), unless scan returns an error that
// already carries a code (a corrupt row), which is returned as it is.
func Rows(ctx context.Context, db *sql.DB, what string, scan func(*sql.Rows) error, query string, args ...any) error {
	fail := func(err error) error {
		if e := (*citebook.Error)(nil); errors.As(err, &e) {
			return err
		}
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload %s", what)
	}
	rs, err := db.QueryContext(ctx, query, args...)
	if err != nil {
		return fail(err)
	}
	defer rs.Close()
	for rs.Next() {
		if err := scan(rs); err != nil {
			return fail(err)
		}
	}
	if err := rs.Err(); err != nil {
		return fail(err)
	}
	return nil
}

// OnlyWriter reports whether no other process has committed to the file
// since memory was loaded (when the connection's data version was
// dataVer), so a snapshot of memory is a snapshot of the file. After
// another process wrote, memory holds what ReloadBooks brought in but maybe
// not everything (an unfinished build, a repair), so the next start
// rebuilds from the database instead.
func OnlyWriter(ctx context.Context, db *sql.DB, dataVer int64) bool {
	v, err := DataVersion(ctx, db)
	return err == nil && v == dataVer
}

// SnapshotIfChanged calls save with the file's generation when the file has
// moved on since the last snapshot (lastGen) and memory is still a copy of
// it (OnlyWriter). Callers hold their write lock, so the generation cannot
// change meanwhile. A failed save is logged: only the next restart is
// slower, the database is intact.
func SnapshotIfChanged(ctx context.Context, db *sql.DB, lastGen uint64, dataVer int64, what, dir string, save func(gen uint64) error) {
	gen, err := Generation(ctx, db)
	if err != nil || gen == lastGen || !OnlyWriter(ctx, db, dataVer) {
		return
	}
	if err := save(gen); err != nil {
		slog.Warn("cannot save "+what+" snapshot", "dir", dir, "err", err)
	}
}
