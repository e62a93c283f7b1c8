package pdf

import (
	"context"
	"io"
	"math"
	"os"
	"sort"
	"sync"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/ledongthuc/pdf"
)

// OCRWord is a word read off a page image: its text, its box as fractions
// of the page (origin top left) and the printed line it belongs to.
type OCRWord struct {
	Text           string
	X0, Y0, X1, Y1 float64
	Line           int // words of one printed line share it
}

// OCR reads the words printed on physical page n (1-based) of the PDF file
// at path; the parser calls it for pages that have no text layer.
// Tesseract implements it.
type OCR interface {
	PageWords(ctx context.Context, path string, n int) ([]OCRWord, error)
}

// noTextLayer is the refusal of a PDF without text, saying how to read it.
func noTextLayer(o Options) error {
	if o.OCR == nil {
		return citebook.Errorf(citebook.EINVALID, "PDF file has no text layer (scanned images only); "+
			"indexing reads such files with OCR when tesseract-ocr (with its language data, e.g. tesseract-ocr-eng) "+
			"and poppler-utils are installed on the server")
	}
	return citebook.Errorf(citebook.EINVALID, "PDF file has no text layer and OCR found no text on its pages")
}

// ocrWorkers bounds concurrent OCR pages: each runs two child processes
// that use a core each.
const ocrWorkers = 2

// ocrPages reads the pages of pageLines that have no text through o.OCR and
// lays their words out like a text layer, in place. The file is the one at
// o.Path, or a temporary copy of r.
func (x *pdfExtractor) ocrPages(ctx context.Context, r io.ReaderAt, size int64, pageLines [][]pdfLine, o Options) (*citebook.OCRReport, error) {
	var todo []int
	for i, lines := range pageLines {
		chars := 0
		for _, l := range lines {
			chars += l.chars
		}
		if chars == 0 && x.hasImage(i) {
			todo = append(todo, i)
		}
	}
	if len(todo) == 0 || o.OCR == nil {
		return nil, nil
	}
	path := o.Path
	if path == "" {
		f, err := os.CreateTemp("", "citebook-ocr-*.pdf")
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot stage the file for OCR")
		}
		defer os.Remove(f.Name())
		_, err = io.Copy(f, io.NewSectionReader(r, 0, size))
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		if err != nil {
			return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "cannot stage the file for OCR")
		}
		path = f.Name()
	}
	rep := &citebook.OCRReport{Pages: len(todo)}
	var mu sync.Mutex
	done := 0
	next := make(chan int)
	var wg sync.WaitGroup
	for range min(ocrWorkers, len(todo)) {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for i := range next {
				words, err := o.OCR.PageWords(ctx, path, i+1)
				var lines []pdfLine
				if err == nil {
					lines = ocrLines(words, x.frames[i])
				}
				mu.Lock()
				if err != nil {
					rep.Failed = append(rep.Failed, citebook.PageFailure{Page: i + 1, Error: err.Error()})
				} else if len(lines) > 0 {
					pageLines[i] = lines
					rep.Read++
				}
				done++
				if o.Progress != nil {
					o.Progress(done, len(todo))
				}
				mu.Unlock()
			}
		}()
	}
	for _, i := range todo {
		if ctx.Err() != nil {
			break
		}
		next <- i
	}
	close(next)
	wg.Wait()
	if err := parsing.CheckCtx(ctx); err != nil {
		return nil, err
	}
	sort.Slice(rep.Failed, func(a, b int) bool { return rep.Failed[a].Page < rep.Failed[b].Page })
	return rep, nil
}

// hasImage reports whether page i draws an image XObject (directly or in a
// form), so blank pages and pages of vector art are not sent to OCR.
func (x *pdfExtractor) hasImage(i int) bool {
	var look func(res pdf.Value, depth int) bool
	look = func(res pdf.Value, depth int) bool {
		xo := res.Key("XObject")
		for _, k := range xo.Keys() {
			v := xo.Key(k)
			switch v.Key("Subtype").Name() {
			case "Image":
				return true
			case "Form":
				if depth < 4 && look(v.Key("Resources"), depth+1) {
					return true
				}
			}
		}
		return false
	}
	res := x.pages[i].V.Key("Resources")
	if res.IsNull() && i < len(x.inherited) {
		res = x.inherited[i]
	}
	return look(res, 0)
}

// ocrLines turns OCR words into the lines of a page, through the same
// layout as a text layer (columns, line grouping, reading order): each word
// becomes a run in PDF user space set on its line's baseline, at the size
// its line's height implies, and keeps its own box, normalised to the page.
func ocrLines(words []OCRWord, f pageFrame) []pdfLine {
	if len(words) == 0 {
		return nil
	}
	w, h := f.x1-f.x0, f.y1-f.y0
	byLine := map[int][]OCRWord{}
	var order []int
	for _, wd := range words {
		if _, ok := byLine[wd.Line]; !ok {
			order = append(order, wd.Line)
		}
		byLine[wd.Line] = append(byLine[wd.Line], wd)
	}
	// A line's height depends on whether its words have ascenders and
	// descenders; the layout reads a change of size as a new paragraph, so
	// sizes within a quarter of the page's typical one are taken as it.
	bases := make([]float64, len(order))
	sizes := make([]float64, len(order))
	for k, id := range order {
		ws := byLine[id]
		// Most words sit on the baseline; descenders hang below it, so
		// the median bottom is the baseline.
		bottoms := make([]float64, len(ws))
		top, bottom := math.Inf(1), math.Inf(-1)
		for i, wd := range ws {
			bottoms[i] = wd.Y1
			top, bottom = math.Min(top, wd.Y0), math.Max(bottom, wd.Y1)
		}
		sort.Float64s(bottoms)
		bases[k] = f.y1 - bottoms[len(bottoms)/2]*h
		sizes[k] = math.Max(1, (bottom-top)*h/(pdfAscent+pdfDescent))
	}
	typical := append([]float64(nil), sizes...)
	sort.Float64s(typical)
	body := typical[len(typical)/2]
	var frags []pdfFrag
	for k, id := range order {
		ws := byLine[id]
		base, size := bases[k], sizes[k]
		if math.Abs(size-body) <= 0.25*body {
			size = body
		}
		// Words closer than an em form one run, as glyphs do in a text
		// layer: a run per word would let the gaps between words pass for
		// a column gutter.
		sort.SliceStable(ws, func(a, b int) bool { return ws[a].X0 < ws[b].X0 })
		var cur *pdfFrag
		for _, wd := range ws {
			word := pdfWord{x0: f.x0 + wd.X0*w, x1: f.x0 + wd.X1*w, y0: f.y1 - wd.Y1*h, y1: f.y1 - wd.Y0*h, text: wd.Text, ocr: true}
			if cur == nil || word.x0-cur.x1 > size {
				frags = append(frags, pdfFrag{x0: word.x0, x1: word.x1, y: base, size: size})
				cur = &frags[len(frags)-1]
			} else {
				prev, _ := utf8.DecodeLastRuneInString(cur.text)
				next, _ := utf8.DecodeRuneInString(wd.Text)
				if !isCJK(prev) || !isCJK(next) {
					cur.text += " "
				}
			}
			cur.text += wd.Text
			cur.chars += utf8.RuneCountInString(wd.Text)
			cur.x1 = math.Max(cur.x1, word.x1)
			cur.words = append(cur.words, word)
		}
	}
	lines := layoutFrags(frags)
	normalizeLines(lines, f)
	return lines
}
