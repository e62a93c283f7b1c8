package memstore

import (
	"context"
	"database/sql"
	"encoding/json"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/internal/sqlitefile"
)

// ReloadBooks re-reads the given books (every book when ids is nil) from the
// store's file into memory, replacing what memory held for them. Another
// process (`citebook index` while `serve` runs) writes the same file;
// index.Follower calls this for the books it changed.
func (s *Store) ReloadBooks(ctx context.Context, ids []string) error {
	s.wmu.Lock()
	defer s.wmu.Unlock()
	if err := s.checkOpen(); err != nil {
		return err
	}
	if ids == nil {
		all, err := sqlitefile.BookIDs(ctx, s.db, what, s.memoryBooks())
		if err != nil {
			return err
		}
		ids = all
	}
	type loaded struct {
		c   citebook.Chunk
		vec []float32
	}
	byBook := make(map[string][]loaded, len(ids))
	for _, id := range ids {
		err := sqlitefile.Rows(ctx, s.db, what, func(rs *sql.Rows) error {
			var (
				l         loaded
				data, raw []byte
			)
			if err := rs.Scan(&l.c.Retired, &data, &raw); err != nil {
				return err
			}
			retired := l.c.Retired
			if err := json.Unmarshal(data, &l.c); err != nil {
				return citebook.Wrap(err, citebook.EINTERNAL, "vector store row is corrupt")
			}
			l.c.Retired = retired
			l.vec = decodeVec(raw, nil)
			byBook[id] = append(byBook[id], l)
			return nil
		}, `SELECT retired, data, vec FROM chunks WHERE book_id=?`, id)
		if err != nil {
			return err
		}
	}

	s.mu.Lock()
	defer s.mu.Unlock()
	for _, id := range ids {
		var old []string
		for k, br := range s.books {
			if k.book == id {
				for _, r := range br.rows {
					old = append(old, s.rows[r].chunk.ID)
				}
			}
		}
		for _, cid := range old {
			s.remove(cid)
		}
		for _, l := range byBook[id] {
			if s.dim != 0 && len(l.vec) != s.dim {
				return citebook.Errorf(citebook.EINTERNAL, "vector store row %s has dimension %d, want %d", l.c.ID, len(l.vec), s.dim)
			}
			s.put(l.c, l.vec)
		}
	}
	s.renew()
	s.forget()
	return nil
}

// memoryBooks lists the books memory holds rows of.
func (s *Store) memoryBooks() []string {
	s.mu.RLock()
	defer s.mu.RUnlock()
	var out []string
	for k := range s.books {
		out = append(out, k.book)
	}
	return out
}
