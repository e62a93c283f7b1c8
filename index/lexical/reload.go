package lexical

import (
	"context"
	"database/sql"
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
	if err := x.checkOpen(); err != nil {
		return err
	}
	if ids == nil {
		all, err := sqlitefile.BookIDs(ctx, x.db, what, x.memoryBooks())
		if err != nil {
			return err
		}
		ids = all
	}
	byBook := make(map[string][]counted, len(ids))
	for _, id := range ids {
		var raw []stored
		err := sqlitefile.Rows(ctx, x.db, what, func(rs *sql.Rows) error {
			var r stored
			if err := rs.Scan(&r.retired, &r.data); err != nil {
				return err
			}
			raw = append(raw, r)
			return nil
		}, `SELECT retired, data FROM chunks WHERE book_id=?`, id)
		if err != nil {
			return err
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
			x.putCounted(c.chunk, c.terms, c.head, c.marks)
		}
	}
	x.maybeCompact()
	x.changed()
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
		o.terms, o.head, o.marks = segment(&o.chunk)
	}
	return out, nil
}

// memoryBooks lists the books memory holds rows of.
func (x *Index) memoryBooks() []string {
	x.mu.RLock()
	defer x.mu.RUnlock()
	var out []string
	for k := range x.books {
		out = append(out, k.book)
	}
	return out
}
