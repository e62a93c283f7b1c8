package lexical

import "unsafe"

// seqArena holds the rows' term sequences (lrow.seq) and the postings a
// snapshot restores outside the Go heap, in anonymous mappings on Unix:
// at 100k chunks they are about 16 MB and 59 MB, which on the heap would
// let a GOGC=100 heap grow by as much again before a collection (the
// server's 1 GB budget at 100k chunks has no room for that). Sequences
// are handed out of seqBlock-byte blocks by bumping. A replaced or deleted
// row's bytes stay until the next reset (compaction, Close), which frees
// every block; callers hold the index's write lock, and nothing may keep
// what the arena handed out across a reset. Where mapping is unavailable
// or fails, blocks come from the heap.
type seqArena struct {
	blocks [][]byte // mapped blocks, freed by reset
	cur    []byte   // free space of the newest block
}

const seqBlock = 4 << 20

// copyIn returns a copy of b in the arena (nil for an empty b).
func (a *seqArena) copyIn(b []byte) []byte {
	if len(b) == 0 {
		return nil
	}
	if len(b) > len(a.cur) {
		n := max(seqBlock, len(b))
		blk, ok := mapBytes(n)
		if ok {
			a.blocks = append(a.blocks, blk)
		} else {
			blk = make([]byte, n)
		}
		a.cur = blk
	}
	out := a.cur[:len(b):len(b)]
	copy(out, b)
	a.cur = a.cur[len(b):]
	return out
}

// postings returns room for n postings, zeroed.
func (a *seqArena) postings(n int) []posting {
	if n == 0 {
		return nil
	}
	size := n * int(unsafe.Sizeof(posting{}))
	blk, ok := mapBytes(size)
	if !ok {
		return make([]posting, n)
	}
	a.blocks = append(a.blocks, blk)
	return unsafe.Slice((*posting)(unsafe.Pointer(unsafe.SliceData(blk))), n)
}

// reset frees every block; nothing may use what copyIn returned.
func (a *seqArena) reset() {
	for _, b := range a.blocks {
		unmapBytes(b)
	}
	a.blocks, a.cur = nil, nil
}
