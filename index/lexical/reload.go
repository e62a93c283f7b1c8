package lexical

import (
	"context"
	"encoding/json"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/internal/sqlitefile"
)

// ReloadBooks re-reads the given books (every book when ids is nil) from the
// index's file into memory, replacing what memory held for them. Another
// process (`citebook index` while `serve` runs) writes the same file;
// index.Follower calls this for the books it changed.
func (x *Index) ReloadBooks(ctx context.Context, ids []string) error {
	x.wmu.Lock()
	defer x.wmu.Unlock()
	x.mu.RLock()
	closed := x.closed
	x.mu.RUnlock()
	if closed {
		return errClosed()
	}
	if ids == nil {
		all, err := x.bookIDs(ctx)
		if err != nil {
			return err
		}
		ids = all
	}
	byBook := make(map[string][]counted, len(ids))
	for _, id := range ids {
		rs, err := x.db.QueryContext(ctx, `SELECT retired, data FROM chunks WHERE book_id=?`, id)
		if err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
		}
		var raw []stored
		for rs.Next() {
			var r stored
			if err := rs.Scan(&r.retired, &r.data); err != nil {
				rs.Close()
				return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
			}
			raw = append(raw, r)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
		}
		// Segmenting is the expensive part; it happens outside the lock.
		out, err := decode(raw)
		if err != nil {
			return err
		}
		byBook[id] = out
	}

	x.mu.Lock()
	defer x.mu.Unlock()
	for _, id := range ids {
		var old []string
		for k, rs := range x.books {
			if k.book == id {
				for _, r := range rs {
					old = append(old, x.rows[r].chunk.ID)
				}
			}
		}
		for _, cid := range old {
			x.remove(cid)
		}
		for _, c := range byBook[id] {
			x.putCounted(c.chunk, c.tf, c.length)
		}
	}
	x.maybeCompact()
	x.admits.Invalidate()
	return nil
}

// decode parses and segments stored rows.
func decode(raw []stored) ([]counted, error) {
	out := make([]counted, len(raw))
	for i := range raw {
		o := &out[i]
		if err := json.Unmarshal(raw[i].data, &o.chunk); err != nil {
			return nil, citebook.Wrap(err, citebook.EINTERNAL, "lexical index row is corrupt")
		}
		o.chunk.Retired = raw[i].retired
		o.tf, o.length = termCounts(&o.chunk)
	}
	return out, nil
}

// bookIDs lists every book with rows in the file or in memory.
func (x *Index) bookIDs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	rs, err := x.db.QueryContext(ctx, `SELECT DISTINCT book_id FROM chunks`)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
		}
		seen[id] = true
		out = append(out, id)
	}
	if err := rs.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload lexical index")
	}
	x.mu.RLock()
	for k := range x.books {
		if !seen[k.book] {
			seen[k.book] = true
			out = append(out, k.book)
		}
	}
	x.mu.RUnlock()
	return out, nil
}

// onlyWriter reports whether no other process has committed to the file
// since memory was loaded, so a snapshot of memory is a snapshot of the
// file. After another process wrote, memory holds what ReloadBooks brought
// in but maybe not everything, so the next start rebuilds from the database.
func (x *Index) onlyWriter(ctx context.Context) bool {
	v, err := sqlitefile.DataVersion(ctx, x.db)
	return err == nil && v == x.dataVer
}
