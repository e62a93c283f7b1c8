package lexical

import (
	"encoding/binary"
	"slices"

	"github.com/citebook/citebook"
)

// ChunkTerms calls fn for each term of chunk c as the index analysed it
// when the chunk was indexed, in order: the heading path's terms first
// (head true), then the text's — what analysis.EachTerm gives for
// strings.Join(c.HeadingPath, " ") and then for c.Text. want names the
// terms the caller looks for: w is the term's index in want, -1 for any
// other; name returns the term itself, when the caller needs more than w
// (only during that call of fn). It returns false, without calling fn, when
// the index does not hold c as given (no chunk with its ID, or one with
// another heading path or text); the caller then segments the text itself.
// The answering pipeline reads every candidate's terms on each search (its
// threshold and query features), and segmenting them again was a third of
// a search's CPU. fn runs under the index's read lock and must not call
// the index.
func (x *Index) ChunkTerms(c *citebook.Chunk, ref citebook.RowRef, want []string, fn func(w int, head bool, name func() string)) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	row, ok := x.row(c, ref)
	if !ok {
		return false
	}
	var buf [16]int32
	ids, mask := x.wantIDs(want, buf[:0])
	var id int32
	name := func() string { return x.vocab[id] }
	cs, head := x.codes(row), int(row.head)
	i := 0
	for v, ok := cs.next(); ok; v, ok = cs.next() {
		if v == sentMark {
			continue
		}
		id = int32(v - 1)
		fn(wanted(ids, mask, id), i < head, name)
		i++
	}
	return true
}

// ChunkSentences calls fn for each term of chunk c's text (not its
// heading path nor its index-only context) as ChunkTerms does, with the
// index of the sentence of analysis.Sentences(c.Text) it falls in:
// segmenting those sentences one by one gives exactly these terms. With
// starts non-nil, fn is called only for the terms whose start
// (analysis.TermStart) is among them. It returns false, without calling fn, as ChunkTerms does, and
// when the index kept no sentence marks for the chunk (sentenceMarks). The
// key-term coverage feature weighs windows of consecutive sentences of the
// best candidates, and splitting and segmenting their sentences again was
// a tenth of a search's CPU; it matches the question's terms by prefix, so
// only the terms starting like one of them concern it (starts), and
// handing it every term — each a look-up of the term's string — was 40%
// of the feature's CPU on bench/load.sh's library; with terms of the same
// first byte only, still a third of it (two bytes hand over a tenth as
// many).
func (x *Index) ChunkSentences(c *citebook.Chunk, ref citebook.RowRef, want []string, starts []uint16, fn func(w, sent int, name func() string)) bool {
	x.mu.RLock()
	defer x.mu.RUnlock()
	row, ok := x.row(c, ref)
	// A marked text ends with the mark after its last sentence (a
	// uvarint's last byte is never 0 otherwise).
	if !ok || row.length > row.head && (len(row.seq) == 0 || row.seq[len(row.seq)-1] != sentMark) {
		return false
	}
	sent := 0
	if c.IndexContext != "" {
		sent = -1 // the context's terms, before its mark
	}
	var buf [16]int32
	ids, mask := x.wantIDs(want, buf[:0])
	var first [256]bool // the starts' first bytes, checked first
	for _, s := range starts {
		first[s>>8] = true
	}
	var id int32
	name := func() string { return x.vocab[id] }
	cs, head := x.codes(row), int(row.head)
	i := 0
	for v, ok := cs.next(); ok; v, ok = cs.next() {
		if v == sentMark {
			sent++
			continue
		}
		if i++; i > head && sent >= 0 {
			id = int32(v - 1)
			if s := x.initial[id]; starts == nil || first[s>>8] && slices.Contains(starts, s) {
				fn(wanted(ids, mask, id), sent, name)
			}
		}
	}
	return true
}

// sentMark ends the index-only context and each sentence of a chunk's
// text in lrow.seq, where terms are coded as ID+1.
const sentMark = 0

// row returns c's row when the index holds c as given: its ID, with the
// same heading path, text and index-only context. ref is the handle of a
// hit of c, when it has one (rowIndex). Callers hold mu.
func (x *Index) row(c *citebook.Chunk, ref citebook.RowRef) (*lrow, bool) {
	r, ok := x.rowIndex(c, ref)
	if !ok {
		return nil, false
	}
	return &x.rows[r], true
}

// rowIndex is row's index in rows, for the postings. Callers hold mu.
// When this index gave ref since its last change and its row is the live
// row of c's ID, that is the row the ID map names (a live row's ID is in
// no other live row, and nothing changed since), so the map is not asked:
// the features ask for ~100 candidates a search, and these look-ups in a
// map of every chunk were half of rowIndex's CPU.
func (x *Index) rowIndex(c *citebook.Chunk, ref citebook.RowRef) (int32, bool) {
	r, ok := x.refRow(c, ref)
	if !ok {
		if r, ok = x.byID[c.ID]; !ok {
			return 0, false
		}
	}
	row := &x.rows[r]
	if row.dead || row.chunk.Text != c.Text || row.chunk.IndexContext != c.IndexContext || !slices.Equal(row.chunk.HeadingPath, c.HeadingPath) {
		return 0, false
	}
	return r, true
}

// refRow is the row ref names when this index gave it since its last
// change and that row is c's ID's live row. Callers hold mu.
func (x *Index) refRow(c *citebook.Chunk, ref citebook.RowRef) (int32, bool) {
	if ref.Owner == nil || ref.Owner != x.owner || ref.Row < 0 || int(ref.Row) >= len(x.rows) {
		return 0, false
	}
	row := &x.rows[ref.Row]
	return ref.Row, !row.dead && row.chunk.ID == c.ID
}

// wantIDs appends the term IDs of want to ids (-1: a term the index does
// not know) and sets bit id%64 of each in mask: most terms skip the scan
// of ids (wanted).
func (x *Index) wantIDs(want []string, ids []int32) ([]int32, uint64) {
	var mask uint64
	for _, t := range want {
		id, ok := x.terms[t]
		if !ok {
			id = -1
		} else {
			mask |= 1 << (uint(id) & 63)
		}
		ids = append(ids, id)
	}
	return ids, mask
}

// wanted is id's index in ids, -1 when absent.
func wanted(ids []int32, mask uint64, id int32) int {
	if mask&(1<<(uint(id)&63)) != 0 {
		for j, wid := range ids {
			if wid == id {
				return j
			}
		}
	}
	return -1
}

// codeReader walks a row's stored term sequence (see codes).
type codeReader struct {
	seq []byte
	max uint64 // the largest code the vocabulary holds
}

// codes reads row's term sequence. Callers hold mu.
func (x *Index) codes(row *lrow) codeReader {
	return codeReader{seq: row.seq, max: uint64(len(x.vocab))}
}

// next returns the next code (a term ID + 1, or sentMark); false at the
// end, and at a code the vocabulary cannot hold, which stops the walk
// (putCounted and the snapshot's loader check every sequence).
// One-byte codes, most of a sequence, take the inlined path.
func (r *codeReader) next() (uint64, bool) {
	if len(r.seq) > 0 && r.seq[0] < 0x80 && uint64(r.seq[0]) <= r.max {
		v := uint64(r.seq[0])
		r.seq = r.seq[1:]
		return v, true
	}
	return r.long()
}

// long is next for a longer code, the end, or a bad code.
func (r *codeReader) long() (uint64, bool) {
	if len(r.seq) == 0 {
		return 0, false
	}
	v, n := nextCode(r.seq)
	if n <= 0 || v > r.max {
		return 0, false
	}
	r.seq = r.seq[n:]
	return v, true
}

// nextCode decodes the first code of seq and its length in bytes (n <= 0:
// malformed): two-byte codes (IDs below 16383: most terms of most books)
// inline, longer ones through binary.Uvarint. codeReader.next decodes
// one-byte codes itself.
func nextCode(seq []byte) (v uint64, n int) {
	if len(seq) > 1 && seq[1] < 0x80 {
		return uint64(seq[0]&0x7f) | uint64(seq[1])<<7, 2
	}
	return binary.Uvarint(seq)
}

// HoldsAll reports for each chunk of cs which of want (the first 64) its
// indexed text — heading path and text — holds, bit i of held[i] for
// want[i], from the postings without reading the chunk's terms; ok[i] is
// false as ChunkTerms is for cs[i]. The proximity feature counts the
// question's term pairs adjacent in a candidate, which a candidate lacking
// one term of every pair cannot have, and asks this of every candidate.
// (Decoding the rows' term sequences instead cost more on the
// bench/load.sh library — 12% of a search's CPU against 9% — as a lookup
// per wanted term reads less than a row's ~300 codes.) Asked together, the
// wanted terms are looked up in the vocabulary once, not once per chunk,
// and each term's postings are walked once in row order for all the
// chunks (galloping, see cursor) instead of a binary search per chunk:
// one chunk at a time this was ≈ 10% of a search's CPU on that library.
//
// refs, when not nil, are the chunks' handles (rowIndex), refs[i] for cs[i].
func (x *Index) HoldsAll(cs []*citebook.Chunk, refs []citebook.RowRef, want []string) (held []uint64, ok []bool) {
	held, ok = make([]uint64, len(cs)), make([]bool, len(cs))
	x.mu.RLock()
	defer x.mu.RUnlock()
	// Row in the high half, the chunk's index in cs in the low one, so
	// sorting orders the chunks by row.
	order := make([]uint64, 0, len(cs))
	for i, c := range cs {
		var ref citebook.RowRef
		if refs != nil {
			ref = refs[i]
		}
		if r, held := x.rowIndex(c, ref); held {
			ok[i] = true
			order = append(order, uint64(r)<<32|uint64(i))
		}
	}
	slices.Sort(order)
	for b, t := range want[:min(len(want), 64)] {
		id, known := x.terms[t]
		if !known {
			continue
		}
		cur := cursor{ps: x.postings[id]}
		for _, o := range order {
			if _, found := cur.seek(int32(o >> 32)); found {
				held[uint32(o)] |= 1 << b
			}
		}
	}
	return held, ok
}

// validSeq reports whether seq codes only IDs below terms (and marks).
func validSeq(seq []byte, terms int) bool {
	for len(seq) > 0 {
		v, n := binary.Uvarint(seq)
		if n <= 0 || v > uint64(terms) {
			return false
		}
		seq = seq[n:]
	}
	return true
}

// decodeSeq appends the term IDs coded in seq to ids.
func decodeSeq(seq []byte, ids []int32) []int32 {
	for len(seq) > 0 {
		v, n := binary.Uvarint(seq)
		if n <= 0 {
			break
		}
		if v != sentMark {
			ids = append(ids, int32(v-1))
		}
		seq = seq[n:]
	}
	return ids
}
