package citation

import (
	"math"

	"github.com/citebook/citebook"
)

// Place draws every citation on its pages: geometry holds the word boxes of
// the cited chunks by ID (from the metadata store). A citation whose chunk
// has no geometry (reflowable books, books indexed before geometry was kept)
// gets an empty list, so readers fall back to the text view.
func Place(cits []citebook.Citation, geometry map[string][]citebook.WordBox) {
	for i := range cits {
		c := &cits[i]
		c.Boxes, c.OCR = Boxes(geometry[c.ChunkID], c.CharStart, c.CharEnd)
	}
}

// Boxes returns one box per printed line for the words of a chunk that
// overlap the byte range [start, end) of its text, in reading order, so a
// quote that runs over a page break gets boxes on both pages. ocr reports
// whether any of those words were read by OCR.
func Boxes(words []citebook.WordBox, start, end int) (boxes []citebook.Box, ocr bool) {
	boxes = []citebook.Box{}
	line := map[int]int{} // line number → index in boxes
	for _, w := range words {
		if w.End <= start || w.Start >= end || w.X1 <= w.X0 || w.Y1 <= w.Y0 {
			continue
		}
		ocr = ocr || w.OCR
		k, ok := line[w.Line]
		if !ok || boxes[k].Page != w.Page {
			line[w.Line] = len(boxes)
			boxes = append(boxes, w.Box)
			continue
		}
		b := &boxes[k]
		b.X0, b.Y0 = math.Min(b.X0, w.X0), math.Min(b.Y0, w.Y0)
		b.X1, b.Y1 = math.Max(b.X1, w.X1), math.Max(b.Y1, w.Y1)
	}
	return boxes, ocr
}
