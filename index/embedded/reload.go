package embedded

import (
	"context"
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
		all, err := s.bookIDs(ctx)
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
		rs, err := s.db.QueryContext(ctx, `SELECT retired, data, vec FROM chunks WHERE book_id=?`, id)
		if err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
		}
		for rs.Next() {
			var (
				l         loaded
				data, raw []byte
			)
			if err := rs.Scan(&l.c.Retired, &data, &raw); err != nil {
				rs.Close()
				return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
			}
			retired := l.c.Retired
			if err := json.Unmarshal(data, &l.c); err != nil {
				rs.Close()
				return citebook.Wrap(err, citebook.EINTERNAL, "vector store row is corrupt")
			}
			l.c.Retired = retired
			l.vec = decodeVec(raw, nil)
			byBook[id] = append(byBook[id], l)
		}
		err = rs.Err()
		rs.Close()
		if err != nil {
			return citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
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
	s.forget()
	return nil
}

// bookIDs lists every book with rows in the file or in memory.
func (s *Store) bookIDs(ctx context.Context) ([]string, error) {
	seen := map[string]bool{}
	var out []string
	rs, err := s.db.QueryContext(ctx, `SELECT DISTINCT book_id FROM chunks`)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
	}
	defer rs.Close()
	for rs.Next() {
		var id string
		if err := rs.Scan(&id); err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
		}
		seen[id] = true
		out = append(out, id)
	}
	if err := rs.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot reload vector store")
	}
	s.mu.RLock()
	for k := range s.books {
		if !seen[k.book] {
			seen[k.book] = true
			out = append(out, k.book)
		}
	}
	s.mu.RUnlock()
	return out, nil
}

// onlyWriter reports whether no other process has committed to the file
// since memory was loaded, so a snapshot of memory is a snapshot of the
// file. After another process wrote, memory holds what ReloadBooks brought
// in but maybe not everything (an unfinished build, a repair), so the next
// start rebuilds from the database instead.
func (s *Store) onlyWriter(ctx context.Context) bool {
	v, err := sqlitefile.DataVersion(ctx, s.db)
	return err == nil && v == s.dataVer
}
