package metadb

import (
	"context"
	"database/sql"
	"encoding/json"
	"slices"

	"github.com/citebook/citebook"
)

// visibleAt is the row filter for "visible in version ?" (bind it twice).
const visibleAt = ` version <= ? AND (retired = 0 OR retired > ?) `

// activeJoin restricts rows aliased r to the served version of their book.
const activeJoin = ` JOIN books b ON b.id = r.book_id
	WHERE r.version <= b.active_version AND (r.retired = 0 OR r.retired > b.active_version) `

// SaveParents writes parent rows visible from version on; a row for the same
// ID and version is replaced.
func (d *DB) SaveParents(ctx context.Context, version int, ps []citebook.Parent) error {
	return d.inTx(ctx, "save parents", func(tx *txn) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO parents (id, book_id, version, retired, ordinal,
			heading_path, page_start, page_end, text, pages, data) VALUES (?,?,?,0,?,?,?,?,?,?,?)
			ON CONFLICT (id, version) DO UPDATE SET book_id=excluded.book_id, retired=0, ordinal=excluded.ordinal,
			heading_path=excluded.heading_path, page_start=excluded.page_start, page_end=excluded.page_end,
			text=excluded.text, pages=excluded.pages, data=excluded.data`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, p := range ps {
			if _, err := stmt.ExecContext(ctx, p.ID, p.BookID, version, p.Ordinal, jsonText(p.HeadingPath),
				p.PageStart, p.PageEnd, text(p.Text), jsonText(p.Pages), jsonText(p)); err != nil {
				return err
			}
		}
		return nil
	})
}

// RetireParents ends the current (unretired, older) rows of the given
// parents at version.
func (d *DB) RetireParents(ctx context.Context, bookID string, ids []string, version int) error {
	return d.retire(ctx, "parents", bookID, ids, version)
}

// RetireChunks ends the current (unretired, older) rows of the given chunks
// at version.
func (d *DB) RetireChunks(ctx context.Context, bookID string, ids []string, version int) error {
	return d.retire(ctx, "chunks", bookID, ids, version)
}

func (d *DB) retire(ctx context.Context, table, bookID string, ids []string, version int) error {
	return d.inTx(ctx, "retire "+table, func(tx *txn) error {
		return chunked(ids, func(part []string) error {
			q, args, err := in(`UPDATE `+table+` SET retired=? WHERE book_id=? AND retired=0
				AND version < ? AND id IN (?)`, []any{version, bookID, version}, part)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, q, args...)
			return err
		})
	})
}

// scanParent decodes a parent row (its data column).
func scanParent(sc scanner) (citebook.Parent, error) {
	var p citebook.Parent
	var data string
	if err := sc.Scan(&data); err != nil {
		return p, err
	}
	return p, json.Unmarshal([]byte(data), &p)
}

// Parents returns a book's parents visible in version, in reading order.
func (d *DB) Parents(ctx context.Context, bookID string, version int) ([]citebook.Parent, error) {
	return queryAll(ctx, d.db, "read parents", scanParent,
		`SELECT data FROM parents WHERE book_id=? AND`+visibleAt+`ORDER BY ordinal`, bookID, version, version)
}

// Parent returns a parent as its book's served version has it, or an
// ENOTFOUND error; this is what the answerer expands a chunk to.
func (d *DB) Parent(ctx context.Context, id string) (*citebook.Parent, error) {
	ps, err := queryAll(ctx, d.db, "read parent", scanParent, `SELECT r.data FROM parents r`+activeJoin+`AND r.id=?`, id)
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "section %q not found", id)
	}
	return &ps[0], nil
}

// SaveChunks writes chunk rows, each visible from its Version on; a row for
// the same ID and version is replaced. The whole chunk is kept so readers
// can expand and cite without the vector store.
func (d *DB) SaveChunks(ctx context.Context, cs []citebook.Chunk) error {
	return d.inTx(ctx, "save chunks", func(tx *txn) error {
		stmt, err := tx.PrepareContext(ctx, `INSERT INTO chunks (id, book_id, version, retired, parent_id, ordinal,
			content_hash, page_start, page_end, data, geometry) VALUES (?,?,?,?,?,?,?,?,?,?,?)
			ON CONFLICT (id, version) DO UPDATE SET book_id=excluded.book_id, retired=excluded.retired,
			parent_id=excluded.parent_id, ordinal=excluded.ordinal, content_hash=excluded.content_hash,
			page_start=excluded.page_start, page_end=excluded.page_end, data=excluded.data,
			geometry=excluded.geometry`)
		if err != nil {
			return err
		}
		defer stmt.Close()
		for _, c := range cs {
			if _, err := stmt.ExecContext(ctx, c.ID, c.BookID, c.Version, c.Retired, c.ParentID, c.Ordinal,
				c.ContentHash, c.PageStart, c.PageEnd, jsonText(c), encodeGeometry(c.Geometry)); err != nil {
				return err
			}
		}
		return nil
	})
}

// chunkCols are the columns scanChunk reads: the chunk as JSON and its
// lifespan, which is kept in columns so it can be updated in place.
const chunkCols = `r.data, r.version, r.retired`

func scanChunk(sc scanner) (citebook.Chunk, error) {
	var c citebook.Chunk
	var data string
	var version, retired int
	if err := sc.Scan(&data, &version, &retired); err != nil {
		return c, err
	}
	if err := json.Unmarshal([]byte(data), &c); err != nil {
		return c, err
	}
	c.Version, c.Retired = version, retired
	return c, nil
}

// ChunksAt returns a book's chunks visible in version, in reading order.
func (d *DB) ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error) {
	return queryAll(ctx, d.db, "read chunks", scanChunk, `SELECT `+chunkCols+` FROM chunks r WHERE book_id=? AND`+
		visibleAt+`ORDER BY ordinal`, bookID, version, version)
}

// ChunkIDs lists the IDs of a book's chunks visible in version.
func (d *DB) ChunkIDs(ctx context.Context, bookID string, version int) ([]string, error) {
	return queryAll(ctx, d.db, "read chunk IDs", func(sc scanner) (id string, err error) { return id, sc.Scan(&id) },
		`SELECT id FROM chunks WHERE book_id=? AND`+visibleAt+`ORDER BY ordinal`, bookID, version, version)
}

// ChunksByID returns chunks as their books' served versions have them, in no
// set order; unknown or unserved IDs are left out.
func (d *DB) ChunksByID(ctx context.Context, ids []string) ([]citebook.Chunk, error) {
	var out []citebook.Chunk
	err := chunked(ids, func(part []string) error {
		q, args, err := in(`SELECT `+chunkCols+` FROM chunks r`+activeJoin+`AND r.id IN (?)`, nil, part)
		if err != nil {
			return err
		}
		cs, err := queryAll(ctx, d.db, "read chunks", scanChunk, q, args...)
		out = append(out, cs...)
		return err
	})
	return out, err
}

// Neighbours returns, for each chunk ID, the chunk and up to n chunks on
// each side of it in its book's served version, in reading order, so an
// answer can show context around a passage. It is one query per 500 IDs
// (SQLite's variable limit), not two per chunk, so expanding a question's
// chunks is one round trip. IDs unknown in the served version are absent.
func (d *DB) Neighbours(ctx context.Context, ids []string, n int) (map[string][]citebook.Chunk, error) {
	n = max(n, 0)
	out := make(map[string][]citebook.Chunk, len(ids))
	// Distinct IDs, so one split across two queries is not expanded twice.
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	// c holds each asked chunk's served position; the outer join reads the
	// served rows of the same book within n ordinals of it.
	err := eachRowIn(ctx, d.db, `WITH c AS (SELECT r.id, r.book_id, r.ordinal FROM chunks r`+activeJoin+
		`AND r.id IN (?))
		SELECT c.id, `+chunkCols+` FROM c JOIN chunks r ON r.book_id = c.book_id
		AND r.ordinal BETWEEN c.ordinal - ? AND c.ordinal + ?`+activeJoin+`ORDER BY c.id, r.ordinal`,
		ids, []any{n, n}, func(rows *sql.Rows) error {
			var id string
			c, err := scanChunk(scanFunc(func(dest ...any) error { return rows.Scan(append([]any{&id}, dest...)...) }))
			if err != nil {
				return err
			}
			out[id] = append(out[id], c)
			return nil
		})
	if err != nil {
		return nil, unavailable(err, "read neighbours")
	}
	return out, nil
}

// scanFunc adapts a closure to scanner, so a row with leading columns of
// its own can still be scanned by scanChunk.
type scanFunc func(dest ...any) error

func (f scanFunc) Scan(dest ...any) error { return f(dest...) }

// IncrementHits counts one more retrieval for each chunk, so popular
// passages can be found and cached.
//
// Servers count the same chunks at once, so where rows are locked one by one
// (PostgreSQL) they are locked in ID order first: two counts then queue
// instead of deadlocking, which costs the deadlock timeout (1 s) and a retry.
func (d *DB) IncrementHits(ctx context.Context, ids []string) error {
	ids = slices.Compact(slices.Sorted(slices.Values(ids)))
	return d.inTx(ctx, "count hits", func(tx *txn) error {
		return chunked(ids, func(part []string) error {
			if d.d.lockRows {
				q, args, err := in(`SELECT id FROM chunks WHERE retired = 0 AND id IN (?) ORDER BY id, version FOR UPDATE`, nil, part)
				if err != nil {
					return err
				}
				if _, err := tx.ExecContext(ctx, q, args...); err != nil {
					return err
				}
			}
			q, args, err := in(`UPDATE chunks SET hit_count = hit_count + 1 WHERE retired = 0 AND id IN (?)`, nil, part)
			if err != nil {
				return err
			}
			_, err = tx.ExecContext(ctx, q, args...)
			return err
		})
	})
}

// HitCounts returns the retrieval count of each known chunk.
func (d *DB) HitCounts(ctx context.Context, ids []string) (map[string]int, error) {
	out := make(map[string]int, len(ids))
	err := eachRowIn(ctx, d.db, `SELECT id, SUM(hit_count) FROM chunks WHERE id IN (?) GROUP BY id`, ids, nil, func(rows *sql.Rows) error {
		var id string
		var n int
		if err := rows.Scan(&id, &n); err != nil {
			return err
		}
		out[id] = n
		return nil
	})
	return out, unavailable(err, "read hit counts")
}

// DeleteRetired physically removes a book's parent and chunk rows retired at
// or before version, once no reader can be served them any more, and logs a
// change of the book.
func (d *DB) DeleteRetired(ctx context.Context, bookID string, version int) error {
	return d.inTx(ctx, "delete retired", func(tx *txn) error {
		for _, table := range []string{"parents", "chunks"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE book_id=? AND retired<>0 AND retired<=?`,
				bookID, version); err != nil {
				return err
			}
		}
		// The stores dropped the retired chunks just before: another
		// process reloads the book so its memory drops them too.
		return d.logChange(ctx, tx, bookID)
	})
}

// ChunkRows counts the chunk rows of every book and version (an index
// scan): how large the library's in-memory indexes will be, before they load.
func (d *DB) ChunkRows(ctx context.Context) (int, error) {
	var n int
	err := d.db.QueryRowContext(ctx, `SELECT count(*) FROM chunks`).Scan(&n)
	return n, unavailable(err, "count chunks")
}
