package pdf

import (
	"math"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/ledongthuc/pdf"
	"golang.org/x/text/unicode/norm"
)

// Vertical extent of a glyph around its baseline, as fractions of the font
// size. Fonts declare their own ascent and descent, but many PDFs declare
// them wrongly or not at all; these are typical of book faces (Computer
// Modern, Times, DejaVu), and boxes drawn with them match poppler's word
// boxes line by line (citation's TestQuoteBoxesMatchPoppler).
const (
	pdfAscent  = 0.80
	pdfDescent = 0.22
)

// pdfWord is a word as printed: its text and its bounding box, in PDF user
// space while the page is laid out and in page fractions (origin top left,
// y down) once normalizeLines has run.
type pdfWord struct {
	x0, y0, x1, y1 float64
	text           string
	ocr            bool
}

func (w *pdfWord) add(x0, x1, y0, y1 float64) {
	if w.text == "" {
		w.x0, w.x1, w.y0, w.y1 = x0, x1, y0, y1
		return
	}
	w.x0, w.x1 = math.Min(w.x0, x0), math.Max(w.x1, x1)
	w.y0, w.y1 = math.Min(w.y0, y0), math.Max(w.y1, y1)
}

// pageFrame is the visible area of a page (its crop box, or media box) and
// its rotation, which is what a renderer draws: word boxes are normalised to
// it so they line up with any page image.
type pageFrame struct {
	x0, y0, x1, y1 float64
	rotate         int // clockwise degrees: 0, 90, 180 or 270
}

// pageBoxes carries the inheritable page attributes down the page tree:
// looking them up from a page through /Parent would resolve (and inflate)
// the parents again for every page.
type pageBoxes struct {
	crop, media, rotate pdf.Value
}

// inherit returns the attributes node passes to its kids: its own where it
// sets them, else its parent's.
func (b pageBoxes) inherit(node pdf.Value) pageBoxes {
	if v := node.Key("CropBox"); v.Kind() == pdf.Array {
		b.crop = v
	}
	if v := node.Key("MediaBox"); v.Kind() == pdf.Array {
		b.media = v
	}
	if v := node.Key("Rotate"); !v.IsNull() {
		b.rotate = v
	}
	return b
}

// frame reads the visible area (crop box, else media box) and rotation; a
// missing or degenerate box falls back to US Letter, the default of PDF
// producers.
func (b pageBoxes) frame() pageFrame {
	f := pageFrame{0, 0, 612, 792, 0}
	box := b.crop
	if box.Kind() != pdf.Array || box.Len() != 4 {
		box = b.media
	}
	if box.Kind() == pdf.Array && box.Len() == 4 {
		a, c, d, e := box.Index(0).Float64(), box.Index(1).Float64(), box.Index(2).Float64(), box.Index(3).Float64()
		if math.Abs(d-a) > 1 && math.Abs(e-c) > 1 {
			f.x0, f.x1 = math.Min(a, d), math.Max(a, d)
			f.y0, f.y1 = math.Min(c, e), math.Max(c, e)
		}
	}
	r := int(b.rotate.Int64()) % 360
	if r < 0 {
		r += 360
	}
	if r%90 == 0 {
		f.rotate = r
	}
	return f
}

// normalize turns a word box in user space into page fractions as the page
// is displayed (rotation applied), origin top left, clamped to the page.
func (f pageFrame) normalize(w pdfWord) pdfWord {
	cl := func(v float64) float64 { return math.Max(0, math.Min(1, v)) }
	u0, u1 := (w.x0-f.x0)/(f.x1-f.x0), (w.x1-f.x0)/(f.x1-f.x0)
	v0, v1 := (f.y1-w.y1)/(f.y1-f.y0), (f.y1-w.y0)/(f.y1-f.y0) // top-left origin
	switch f.rotate {
	case 90:
		u0, u1, v0, v1 = 1-v1, 1-v0, u0, u1
	case 180:
		u0, u1, v0, v1 = 1-u1, 1-u0, 1-v1, 1-v0
	case 270:
		u0, u1, v0, v1 = v0, v1, 1-u1, 1-u0
	}
	w.x0, w.x1, w.y0, w.y1 = cl(u0), cl(u1), cl(v0), cl(v1)
	return w
}

// normalizeLines converts every word of a laid-out page to page fractions.
func normalizeLines(lines []pdfLine, f pageFrame) {
	for i := range lines {
		for j := range lines[i].words {
			lines[i].words[j] = f.normalize(lines[i].words[j])
		}
	}
}

// placedWord is a printed word with the page and line it is on.
type placedWord struct {
	pdfWord
	page, line int
}

// alignGeometry maps printed words onto text, the cleaned paragraph they
// were joined into: each word gets the byte range of text its letters and
// digits landed in. Cleaning and joining only drop or replace punctuation
// (break hyphens, soft hyphens, dot leaders), so the two streams of letters
// and digits are walked in step and resynchronised after a rare mismatch.
// Words with no letter or digit (a dash, a bullet) get no box of their own;
// the line they are on is drawn from its other words.
func alignGeometry(text string, words []placedWord) []citebook.WordBox {
	if len(words) == 0 || text == "" {
		return nil
	}
	type tc struct {
		r          rune
		start, end int
	}
	var ts []tc
	for i, r := range text {
		if isWordRune(r) {
			ts = append(ts, tc{r, i, i + utf8.RuneLen(r)})
		}
	}
	type lc struct {
		r rune
		w int
	}
	var ls []lc
	for wi, w := range words {
		for _, r := range norm.NFC.String(w.text) {
			if isWordRune(r) {
				ls = append(ls, lc{r, wi})
			}
		}
	}
	start := make([]int, len(words))
	end := make([]int, len(words))
	for i := range start {
		start[i] = -1
	}
	mapTo := func(t tc, w int) {
		if start[w] < 0 || t.start < start[w] {
			start[w] = t.start
		}
		end[w] = max(end[w], t.end)
	}
	eq := func(i, j int) bool { return i < len(ts) && j < len(ls) && ts[i].r == ls[j].r }
	const window = 12
	i, j := 0, 0
	for i < len(ts) && j < len(ls) {
		if eq(i, j) {
			mapTo(ts[i], ls[j].w)
			i++
			j++
			continue
		}
		// Resynchronise on the nearest point where two characters agree.
		skipL, skipT := -1, -1
		for d := 1; d <= window; d++ {
			if skipL < 0 && eq(i, j+d) && (eq(i+1, j+d+1) || i+1 >= len(ts)) {
				skipL = d
			}
			if skipT < 0 && eq(i+d, j) && (eq(i+d+1, j+1) || j+1 >= len(ls)) {
				skipT = d
			}
			if skipL >= 0 || skipT >= 0 {
				break
			}
		}
		switch {
		case skipL >= 0 && (skipT < 0 || skipL <= skipT):
			j += skipL
		case skipT >= 0:
			// Text characters with no printed counterpart (an ellipsis for a
			// leader) belong to the word printed where they stand.
			for k := i; k < i+skipT; k++ {
				mapTo(ts[k], ls[j].w)
			}
			i += skipT
		default:
			mapTo(ts[i], ls[j].w) // a substitution
			i++
			j++
		}
	}
	out := make([]citebook.WordBox, 0, len(words))
	for wi, w := range words {
		if start[wi] < 0 {
			continue
		}
		out = append(out, citebook.WordBox{
			Start: start[wi], End: end[wi], Line: w.line, OCR: w.ocr,
			Box: citebook.Box{Page: w.page, X0: w.x0, Y0: w.y0, X1: w.x1, Y1: w.y1},
		})
	}
	return out
}

// unitWords lists the printed words of a document paragraph in reading
// order, numbering its lines.
func (u *pdfUnit) unitWords() []placedWord {
	var out []placedWord
	line := 0
	for _, p := range u.parts {
		for _, ws := range p.words {
			for _, w := range ws {
				out = append(out, placedWord{pdfWord: w, page: p.page, line: line})
			}
			line++
		}
	}
	return out
}

func isWordRune(r rune) bool { return unicode.IsLetter(r) || unicode.IsDigit(r) }
