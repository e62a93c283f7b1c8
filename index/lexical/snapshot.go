package lexical

import (
	"bufio"
	"context"
	"encoding/gob"
	"fmt"
	"hash/fnv"
	"log/slog"
	"slices"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/index/internal/sqlitefile"
)

// A restart reads the inverted index back from lexical.snap when it was
// saved at the database's current generation, instead of decoding and
// segmenting every chunk again (≈12 s at 109k chunks). The snapshot's format
// string includes a fingerprint of the text analysis (what termCounts makes
// of a probe chunk), so a change to Terms or to what is indexed invalidates
// old snapshots by itself. It is saved after a rebuild and on Close when
// writes happened since. This file only saves and restores the in-memory
// structures; TestSnapshotRestoresEveryField fails if a field is added to
// Index without being restored here.
const snapName = "lexical.snap"

const (
	snapBatch = 4096
	postBatch = 1 << 20
)

type postBatchMsg struct{ Row, TF []int32 }

// seqBatchMsg holds the term sequences (lrow.seq) of one batch of rows,
// concatenated: row i's is the next Len[i] bytes of Data.
type seqBatchMsg struct {
	Len  []int32
	Data []byte
}

// noSnapshot is snapGen before any snapshot was saved or loaded.
const noSnapshot = ^uint64(0)

// snapFormat names the layout and the analysis the postings were built with.
var snapFormat = func() string {
	probe := citebook.Chunk{HeadingPath: []string{"Chapter 3: Graphs", "第三章 图"},
		Text: "The quick-brown fox's 2nd jump over boxes, caches and matrices, C++ & naïve café, 1,024 times; 数据库的索引和查询。 HTTP/2 IDs e-mail (https://CRAN. R-project.org/x) by Philip A. Nelson. Next (e.g. a) one!\n\n• Bullet 天！$$ x"}
	tf, n := termCounts(&probe)
	keys := make([]string, 0, len(tf))
	for k := range tf {
		keys = append(keys, k)
	}
	slices.Sort(keys)
	h := fnv.New64a()
	for _, k := range keys {
		fmt.Fprintf(h, "%s=%d\x00", k, tf[k])
	}
	probe.IndexContext = "(Dollars in millions) 2018 2017"
	_, head, marks := segment(&probe)
	fmt.Fprintf(h, "%d %v", head, marks) // sentence marks (lrow.seq)
	return fmt.Sprintf("lexical v5 analysis %x/%d", h.Sum64(), n)
}()

// snap is the in-memory index in gob's terms: per-row fields in row order
// and where each term's postings start. The rows' chunks follow it in gob
// messages of at most snapBatch chunks (a dead row as a zero chunk), each
// followed by those rows' term sequences (seqBatchMsg), then
// all postings in term order in postBatch messages of at most postBatch
// postings, so no message buffer holds the whole library at once.
type snap struct {
	Rows            int
	Length, Pos     []int32
	Head            []int32
	Dead            []bool
	Version, Retire []int
	Parent          []int32
	ParentIDs       []string // by interned parent ID
	Terms           []string // by term ID
	PostOff         []int64  // term i's postings are [PostOff[i], PostOff[i+1]) of all
	DF, MaxTF       []int32
	MinLen          []int32
	Live, TotalLen  int
}

// loadSnapshot fills a reset index from its snapshot; it returns
// sqlitefile.ErrStale when there is none that matches the database.
func (x *Index) loadSnapshot(ctx context.Context) error {
	return sqlitefile.LoadSnapshot(ctx, x.db, x.dir, snapName, snapFormat, func(r *bufio.Reader, size int64) error {
		var sn snap
		dec := gob.NewDecoder(r)
		if err := dec.Decode(&sn); err != nil {
			return err
		}
		n := sn.Rows
		if n < 0 || int64(n) > size || len(sn.PostOff) > 0 && sn.PostOff[len(sn.PostOff)-1] > size {
			return fmt.Errorf("%d rows claimed in %d bytes", n, size)
		}
		chunks := make([]citebook.Chunk, 0, n)
		seqs := make([][]byte, 0, n)
		for len(chunks) < n {
			var batch []citebook.Chunk
			if err := dec.Decode(&batch); err != nil {
				return err
			}
			chunks = append(chunks, batch...)
			var sb seqBatchMsg
			if err := dec.Decode(&sb); err != nil {
				return err
			}
			if len(sb.Len) != len(batch) {
				return fmt.Errorf("%d term sequences for %d rows", len(sb.Len), len(batch))
			}
			data := sb.Data
			for _, l := range sb.Len {
				if l < 0 || int(l) > len(data) {
					return fmt.Errorf("term sequence overruns its batch")
				}
				if !validSeq(data[:l], len(sn.Terms)) {
					return fmt.Errorf("term sequence names an unknown term")
				}
				seqs = append(seqs, x.seqs.copyIn(data[:l]))
				data = data[l:]
			}
		}
		if len(chunks) != n || len(seqs) != n || len(sn.Head) != n || len(sn.Length) != n || len(sn.Pos) != n || len(sn.Dead) != n || len(sn.Version) != n || len(sn.Retire) != n ||
			len(sn.Parent) != n || len(sn.PostOff) != len(sn.Terms)+1 || len(sn.DF) != len(sn.Terms) ||
			len(sn.MaxTF) != len(sn.Terms) || len(sn.MinLen) != len(sn.Terms) || sn.PostOff[len(sn.Terms)] < 0 {
			return fmt.Errorf("inconsistent lengths")
		}
		total := sn.PostOff[len(sn.Terms)]
		if total > size {
			return fmt.Errorf("%d postings claimed in %d bytes", total, size)
		}
		// Off the heap (arena.go); a posting appended later moves its
		// term's list to the heap, since each list is capped.
		flat := x.seqs.postings(int(total))[:0]
		for int64(len(flat)) < total {
			var pb postBatchMsg
			if err := dec.Decode(&pb); err != nil {
				return err
			}
			if len(pb.Row) != len(pb.TF) || int64(len(flat)+len(pb.Row)) > total {
				return fmt.Errorf("postings overrun")
			}
			for i, r := range pb.Row {
				if r < 0 || int(r) >= n {
					return fmt.Errorf("posting names row %d of %d", r, n)
				}
				flat = append(flat, posting{r, pb.TF[i]})
			}
		}
		x.rows = make([]lrow, n)
		x.meta = make([]rmeta, n)
		x.idKeys = make([]uint64, n)
		for i := range sn.Parent {
			x.meta[i] = rmeta{sn.Version[i], sn.Retire[i], sn.Parent[i], sn.Length[i]}
		}
		for id, p := range sn.ParentIDs {
			x.parents[p] = int32(id)
		}
		for r := range n {
			x.rows[r] = lrow{chunk: chunks[r], length: sn.Length[r], head: sn.Head[r], pos: sn.Pos[r], dead: sn.Dead[r], seq: seqs[r]}
			x.idKeys[r] = idKey(chunks[r].ID)
			if sn.Dead[r] {
				continue
			}
			c := &x.rows[r].chunk
			x.byID[c.ID] = int32(r)
			key := bookKey{c.Tenant, c.BookID}
			rs := x.books[key]
			p := int(sn.Pos[r])
			if p >= len(rs) {
				rs = append(rs, make([]int32, p+1-len(rs))...)
			}
			rs[p] = int32(r)
			x.books[key] = rs
		}
		x.postings = make([][]posting, len(sn.Terms))
		x.vocab = sn.Terms
		x.initial = make([]uint16, len(sn.Terms))
		for id, t := range sn.Terms {
			x.terms[t] = int32(id)
			x.initial[id] = analysis.TermStart(t)
			lo, hi := sn.PostOff[id], sn.PostOff[id+1]
			if lo > hi || hi > int64(len(flat)) {
				return fmt.Errorf("postings of term %d out of range", id)
			}
			x.postings[id] = flat[lo:hi:hi] // capped, so an append copies
		}
		x.df, x.maxTF, x.minLen = sn.DF, sn.MaxTF, sn.MinLen
		x.live, x.totalLen = sn.Live, sn.TotalLen
		return nil
	})
}

// saveSnapshot writes the index as of generation gen. Callers hold mu for
// reading.
func (x *Index) saveSnapshot(gen uint64) error {
	t0 := time.Now()
	n := len(x.rows)
	sn := snap{Rows: n, Length: make([]int32, n), Pos: make([]int32, n), Head: make([]int32, n), Dead: make([]bool, n),
		Version: make([]int, n), Retire: make([]int, n), Parent: make([]int32, n),
		ParentIDs: make([]string, len(x.parents)), Terms: make([]string, len(x.postings)),
		PostOff: make([]int64, 0, len(x.postings)+1), DF: x.df, MaxTF: x.maxTF, MinLen: x.minLen, Live: x.live, TotalLen: x.totalLen}
	for r := range x.rows {
		row := &x.rows[r]
		sn.Length[r], sn.Pos[r], sn.Head[r], sn.Dead[r] = row.length, row.pos, row.head, row.dead
		m := x.meta[r]
		sn.Version[r], sn.Retire[r], sn.Parent[r] = m.version, m.retired, m.parent
	}
	for p, id := range x.parents {
		sn.ParentIDs[id] = p
	}
	copy(sn.Terms, x.vocab)
	var total int64
	for _, ps := range x.postings {
		sn.PostOff = append(sn.PostOff, total)
		total += int64(len(ps))
	}
	sn.PostOff = append(sn.PostOff, total)
	err := sqlitefile.SaveSnapshot(x.dir, snapName, gen, snapFormat, func(w *bufio.Writer) error {
		enc := gob.NewEncoder(w)
		if err := enc.Encode(&sn); err != nil {
			return err
		}
		batch := make([]citebook.Chunk, 0, snapBatch)
		var sb seqBatchMsg
		for r := range x.rows {
			batch = append(batch, x.rows[r].chunk)
			sb.Len = append(sb.Len, int32(len(x.rows[r].seq)))
			sb.Data = append(sb.Data, x.rows[r].seq...)
			if len(batch) == snapBatch || r == len(x.rows)-1 {
				if err := enc.Encode(batch); err != nil {
					return err
				}
				if err := enc.Encode(&sb); err != nil {
					return err
				}
				batch = batch[:0]
				sb.Len, sb.Data = sb.Len[:0], sb.Data[:0]
			}
		}
		var pb postBatchMsg
		flush := func() error {
			err := enc.Encode(&pb)
			pb.Row, pb.TF = pb.Row[:0], pb.TF[:0]
			return err
		}
		for _, ps := range x.postings {
			for _, p := range ps {
				pb.Row = append(pb.Row, p.row)
				pb.TF = append(pb.TF, p.tf)
				if len(pb.Row) == postBatch {
					if err := flush(); err != nil {
						return err
					}
				}
			}
		}
		if len(pb.Row) > 0 {
			return flush()
		}
		return nil
	})
	if err == nil {
		x.snapGen = gen
		slog.Debug("lexical snapshot saved", "rows", n, "took", time.Since(t0).Round(time.Millisecond))
	}
	return err
}

// snapshotIfChanged saves a snapshot when the database has moved on since
// the last one and no other process wrote it. Callers hold wmu.
func (x *Index) snapshotIfChanged(ctx context.Context) {
	sqlitefile.SnapshotIfChanged(ctx, x.db, x.snapGen, x.dataVer, what, x.dir, func(gen uint64) error {
		x.mu.RLock()
		defer x.mu.RUnlock()
		return x.saveSnapshot(gen)
	})
}
