package ingest

import (
	"slices"

	"github.com/citebook/citebook"
)

// addWords appends a block's word boxes, shifted to absolute offsets and
// with line numbers made unique across blocks.
func (c *chunker) addWords(ws []citebook.WordBox, off int) {
	if len(ws) == 0 {
		return
	}
	base := c.nextLine
	first := len(c.words)
	for _, w := range ws {
		w.Start += off
		w.End += off
		w.Line += base
		c.nextLine = max(c.nextLine, w.Line+1)
		c.words = append(c.words, w)
	}
	added := c.words[first:]
	slices.SortStableFunc(added, func(a, b citebook.WordBox) int { return a.Start - b.Start })
}

// geometry returns the word boxes inside [start, end) of the full text, with
// offsets relative to start and lines renumbered from 0.
func (c *chunker) geometry(start, end int) []citebook.WordBox {
	i, _ := slices.BinarySearchFunc(c.words, start, func(w citebook.WordBox, s int) int { return w.Start - s })
	var out []citebook.WordBox
	lines := map[int]int{}
	for ; i < len(c.words) && c.words[i].Start < end; i++ {
		w := c.words[i]
		if w.End > end {
			w.End = end
		}
		l, ok := lines[w.Line]
		if !ok {
			l = len(lines)
			lines[w.Line] = l
		}
		w.Start, w.End, w.Line = w.Start-start, w.End-start, l
		out = append(out, w)
	}
	return out
}
