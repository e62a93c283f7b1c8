package memstore

import (
	"bufio"
	"context"
	"encoding/gob"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/internal/sqlitefile"
)

// A restart reads the rows and vectors back from vectors.snap (gob for the
// chunks, raw little-endian float32 for the vectors) when it matches the
// database, instead of decoding every row's JSON from SQLite: at 100k
// chunks that took 4.3 s of CPU. The snapshot is saved after a rebuild from
// the database (in the background) and on Close when writes happened since.
const (
	snapName   = "vectors.snap"
	snapFormat = "embedded vectors v3"
)

// noSnapshot is snapGen before any snapshot was saved or loaded.
const noSnapshot = ^uint64(0)

// snapHead starts the payload; then come gob messages of at most
// snapBatch chunks each (live rows in row order), each followed by those
// chunks' vectors, so loading never holds more than a batch beside the
// store.
type snapHead struct {
	Dim, Rows int
}

const snapBatch = 4096

// loadSnapshot fills an empty store from its snapshot; it returns
// sqlitefile.ErrStale when there is none that matches the database.
func (s *Store) loadSnapshot(ctx context.Context, dir string) error {
	return sqlitefile.LoadSnapshot(ctx, s.db, dir, snapName, snapFormat, func(r *bufio.Reader, size int64) error {
		var h snapHead
		dec := gob.NewDecoder(r)
		if err := dec.Decode(&h); err != nil {
			return err
		}
		if h.Dim <= 0 && h.Rows > 0 || h.Rows < 0 || h.Dim > 1<<16 || int64(h.Rows)*int64(h.Dim)*4 > size {
			return fmt.Errorf("dimension %d, %d rows", h.Dim, h.Rows)
		}
		s.dim = h.Dim
		s.rows = make([]row, 0, h.Rows)
		s.vecs = s.mem.alloc(h.Rows * s.dim)[:0]
		buf := make([]byte, 4*s.dim)
		var vec []float32
		s.pend.on = true
		defer func() { s.pend.on = false; s.flushColumns() }()
		for done := 0; done < h.Rows; {
			var batch []citebook.Chunk
			if err := dec.Decode(&batch); err != nil {
				return err
			}
			if len(batch) == 0 || done+len(batch) > h.Rows {
				return fmt.Errorf("batch of %d rows after %d of %d", len(batch), done, h.Rows)
			}
			for _, c := range batch {
				if _, err := io.ReadFull(r, buf); err != nil {
					return err
				}
				vec = decodeVec(buf, vec)
				s.put(c, vec)
			}
			s.flushColumns()
			done += len(batch)
		}
		return nil
	})
}

// saveSnapshot writes the store's rows as of generation gen. Callers hold
// mu for reading (writers are held off meanwhile).
func (s *Store) saveSnapshot(gen uint64) error {
	t0 := time.Now()
	var order []int32
	for r := range s.rows {
		if s.rows[r].book != nil {
			order = append(order, int32(r))
		}
	}
	err := sqlitefile.SaveSnapshot(s.dir, snapName, gen, snapFormat, func(w *bufio.Writer) error {
		enc := gob.NewEncoder(w)
		if err := enc.Encode(snapHead{Dim: s.dim, Rows: len(order)}); err != nil {
			return err
		}
		buf := make([]byte, 4*s.dim)
		var vec []float32
		for lo := 0; lo < len(order); lo += snapBatch {
			part := order[lo:min(lo+snapBatch, len(order))]
			batch := make([]citebook.Chunk, len(part))
			for i, r := range part {
				batch[i] = s.rows[r].chunk
			}
			if err := enc.Encode(batch); err != nil {
				return err
			}
			for _, r := range part {
				vec = s.rowVec(r, vec)
				if _, err := w.Write(encodeVec(vec, buf)); err != nil {
					return err
				}
			}
		}
		return nil
	})
	if err == nil {
		s.snapGen = gen
		slog.Debug("vector store snapshot saved", "rows", len(order), "took", time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// snapshotIfChanged saves a snapshot when the database has moved on since
// the last one and no other process wrote it. Callers hold wmu.
func (s *Store) snapshotIfChanged(ctx context.Context) {
	sqlitefile.SnapshotIfChanged(ctx, s.db, s.snapGen, s.dataVer, what, s.dir, func(gen uint64) error {
		s.mu.RLock()
		defer s.mu.RUnlock()
		return s.saveSnapshot(gen)
	})
}

// resetMemory empties the in-memory index after a snapshot failed half-way.
func (s *Store) resetMemory() {
	s.freeVectors()
	s.dim, s.rows, s.free = 0, nil, nil
	s.colsOnly, s.decided = false, false
	s.byID, s.books, s.parents = map[string]int32{}, map[bookKey]*bookRows{}, map[string]int32{}
}

var errStale = sqlitefile.ErrStale

func isStale(err error) bool { return errors.Is(err, errStale) }
