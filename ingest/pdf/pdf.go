package pdf

import (
	"bytes"
	"context"
	"errors"
	"io"
	"log/slog"
	"math"
	"runtime"
	"strings"
	"sync"
	"sync/atomic"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/ledongthuc/pdf"
)

// Options are what a parse needs besides the file.
type Options struct {
	// Limits bound the parse; zero fields take their defaults. The
	// deadline (Limits.Timeout) is the caller's to set on the context.
	Limits parsing.Limits
	// OCR reads image-only pages; nil refuses a PDF without a text layer.
	OCR OCR
	// Progress is told after each OCR'd page how many of the image-only
	// pages are done; OCR takes seconds a page.
	Progress func(done, total int)
	// Path is the file being parsed, for OCR tools that read files;
	// without it the file is copied to a temporary one when pages need OCR.
	Path string
}

// Parse reads a PDF into a Document: text rebuilt from glyph positions in
// reading order (columns, paragraphs, rejoined hyphenation), running heads
// and folios removed but used for printed page labels, and sections taken
// from the bookmarks or, without any, from headings in the text. Every
// paragraph keeps the physical pages it spans (and its words' boxes) so
// citations can name the page of a quote. The language is left to the
// caller, which detects it the same way for every format.
//
// It works within o.Limits until ctx ends. Every read of the file checks
// ctx, so even work inside the PDF library stops; a limit passed or the end
// of ctx is reported rather than the damage it left behind. Files that
// cannot be read (empty, truncated, encrypted with a password, image-only
// without OCR) are EINVALID errors; malformed content never panics.
//
// With o.OCR, pages without text are read from their images instead of
// refusing the file.
func Parse(ctx context.Context, r io.ReaderAt, size int64, o Options) (doc *parsing.Document, err error) {
	budget := newDocBudget(ctx, o.Limits)
	defer func() {
		if err != nil {
			if berr := budget.check(); berr != nil {
				err = berr
			}
			doc = nil
		}
	}()
	defer parsing.Guard(citebook.FormatPDF, &err)
	x, err := openPDFReader(ctxReaderAt{ctx: ctx, r: r}, size, budget)
	if err != nil {
		return nil, err
	}
	x.ocr, x.src, x.size = o, r, size
	return x.parse(ctx)
}

// Check runs the checks Parse starts with, reading only the head, the
// trailer and the cross-reference data (an AES-256 file is decrypted in
// memory to check it opens): a PDF whose structure cannot be read or that
// needs a password is refused with the error Parse would end with. nil does
// not promise the parse will succeed.
func Check(ctx context.Context, r io.ReaderAt, size int64, lim parsing.Limits) (err error) {
	defer parsing.Guard(citebook.FormatPDF, &err) // the PDF library panics on malformed objects
	_, err = openPDFChecked(ctxReaderAt{ctx: ctx, r: r}, size, newDocBudget(ctx, lim), false)
	return err
}

// openPDFReader checks the file is a readable PDF; its pages are not indexed yet.
func openPDFReader(r io.ReaderAt, size int64, budget *docBudget) (*pdfExtractor, error) {
	return openPDFChecked(r, size, budget, true)
}

// openPDFChecked opens the file for the library after checking its structure;
// deep also inflates the object streams within the budget, which reads the
// whole file (a parse does; the upload sniff does not).
func openPDFChecked(r io.ReaderAt, size int64, budget *docBudget, deep bool) (*pdfExtractor, error) {
	if size <= 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "PDF file is empty")
	}
	head := make([]byte, 1024)
	n, _ := r.ReadAt(head, 0)
	if !bytes.Contains(head[:n], []byte("%PDF-")) {
		return nil, citebook.Errorf(citebook.EINVALID, "not a PDF file: no %%PDF header")
	}
	check := checkXrefSections(r, size)
	if deep {
		check = checkPDFStructure(r, size, budget)
	}
	if check != nil {
		return nil, check
	}
	if hasEncryptDict(r, size) {
		if err := checkEncryptedXref(r, size); err != nil {
			return nil, err
		}
	}
	rd, err := pdf.NewReader(r, size)
	if err == nil {
		if err := checkXrefNesting(rd); err != nil {
			return nil, err
		}
	}
	if err != nil && !errors.Is(err, pdf.ErrInvalidPassword) && hasEncryptDict(r, size) {
		// AES-256 (V5), which the library does not decrypt.
		if data, derr := decryptAES256(r, size); derr == nil {
			if deep {
				if err := checkObjectStreams(bytes.NewReader(data), size, budget); err != nil {
					return nil, err
				}
			}
			var plain io.ReaderAt = bytes.NewReader(data)
			if cr, ok := r.(ctxReaderAt); ok {
				plain = ctxReaderAt{ctx: cr.ctx, r: plain}
			}
			rd, err = pdf.NewReader(plain, size)
			if err == nil {
				if err := checkXrefNesting(rd); err != nil {
					return nil, err
				}
			}
		} else if errors.Is(derr, errPDFPassword) {
			err = derr
		}
	}
	if err != nil {
		switch {
		case errors.Is(err, pdf.ErrInvalidPassword) || errors.Is(err, errPDFPassword) || strings.Contains(err.Error(), "encrypt") || hasEncryptDict(r, size):
			return nil, citebook.Wrap(err, citebook.EINVALID, "PDF file is encrypted; remove the password and upload it again")
		case strings.Contains(err.Error(), "EOF"), strings.Contains(err.Error(), "startxref"):
			return nil, citebook.Wrap(err, citebook.EINVALID, "PDF file is truncated or corrupt")
		}
		return nil, citebook.Wrap(err, citebook.EINVALID, "PDF file is corrupt")
	}
	return &pdfExtractor{r: rd, root: rd.Trailer().Key("Root"), glyphCache: newFontCacheBudget(budget), budget: budget}, nil
}

// hasEncryptDict looks for an /Encrypt entry near the end of the file, where
// the trailer lives, or near its start, where a linearized file's
// first-page trailer does, so a failure to open an encrypted file is
// reported (and handled) as encryption rather than corruption.
func hasEncryptDict(r io.ReaderAt, size int64) bool {
	n := min(size, 64<<10)
	buf := make([]byte, n)
	for _, off := range []int64{size - n, 0} {
		m, _ := r.ReadAt(buf, off)
		if bytes.Contains(buf[:m], []byte("/Encrypt")) {
			return true
		}
	}
	return false
}

// pdfExtractor holds the state of one Parse call.
type pdfExtractor struct {
	r     *pdf.Reader
	root  pdf.Value
	pages []pdf.Page
	// inherited holds each page's resources from its ancestors, found on
	// the walk: Page.Resources climbs the /Parent chain instead, resolving
	// (and re-parsing) every ancestor with all its kids, per page.
	inherited []pdf.Value
	pageByRef map[string]int // "12 0 R" → physical page, for outline destinations
	names     *nameNode      // the /Dests name tree, loaded as it is searched
	// glyphCache decodes page text with the document's fonts parsed once.
	glyphCache *fontCache
	// badPages counts pages whose content stream could not be read whole.
	badPages atomic.Int64
	// budget bounds the document's decoding, operators and text.
	budget *docBudget
	// frames are the pages' visible areas, read during the page-tree walk
	// where inherited boxes cost nothing to carry down.
	frames []pageFrame
	// ocr reads image-only pages of src (size bytes) when ocr.OCR is set.
	ocr  Options
	src  io.ReaderAt
	size int64
}

// glyphs is the one place page text is decoded. A page whose content stream
// breaks part-way keeps the glyphs read before the break: one damaged page
// should not make a whole book unreadable.
// A limit passed stops the document instead: glyphs returns its error.
func (x *pdfExtractor) glyphs(i int) ([]pdf.Text, error) {
	var inherited pdf.Value
	if i < len(x.inherited) {
		inherited = x.inherited[i]
	}
	g, err := x.glyphCache.pageGlyphsShared(x.pages[i], inherited)
	if berr := x.budget.check(); berr != nil {
		return nil, berr
	}
	if err != nil {
		x.badPages.Add(1)
	}
	n := 0
	for _, t := range g {
		n += len(t.S)
	}
	if err := x.budget.addText(int64(n)); err != nil {
		return nil, err
	}
	return g, nil
}

// loadPages walks the page tree once, recording each page and the reference
// that names it.
func (x *pdfExtractor) loadPages() error {
	x.pageByRef = map[string]int{}
	var walk func(node pdf.Value, ref string, depth int, inherited pdf.Value, inh pageBoxes)
	// A malformed tree may list a node twice or contain a cycle; each
	// reference is visited once and the walk stops at the declared count.
	limit := int(x.root.Key("Pages").Key("Count").Int64())
	if maxPages := int(x.budget.lim.MaxPages); limit <= 0 || limit > maxPages {
		limit = maxPages
	}
	seen := map[string]bool{}
	visits := 0
	walk = func(node pdf.Value, ref string, depth int, inherited pdf.Value, inh pageBoxes) {
		visits++
		if depth > 64 || len(x.pages) >= limit || visits > 4*limit+64 {
			return
		}
		if ref != "" {
			if seen[ref] {
				return
			}
			seen[ref] = true
		}
		kids := node.Key("Kids")
		if node.Key("Type").Name() == "Pages" || kids.Kind() == pdf.Array && node.Key("Type").Name() != "Page" {
			if r := node.Key("Resources"); !r.IsNull() {
				inherited = r
			}
			refs := refKeys(kids)
			for i := 0; i < kids.Len(); i++ {
				r := ""
				if len(refs) == kids.Len() {
					r = refs[i]
				}
				walk(kids.Index(i), r, depth+1, inherited, inh.inherit(node))
			}
			return
		}
		if node.Kind() != pdf.Dict {
			return
		}
		x.pages = append(x.pages, pdf.Page{V: node})
		x.inherited = append(x.inherited, inherited)
		x.frames = append(x.frames, inh.inherit(node).frame())
		if ref != "" {
			x.pageByRef[ref] = len(x.pages)
		}
	}
	walk(x.root.Key("Pages"), "", 0, pdf.Value{}, pageBoxes{})
	if len(x.pages) == 0 {
		return citebook.Errorf(citebook.EINVALID, "PDF file has no pages")
	}
	return nil
}

// pdfPara is a paragraph of one page, before paragraphs running over a page
// break are joined.
type pdfPara struct {
	page     int
	lines    []string
	words    [][]pdfWord // where each line's words are printed
	cells    []int       // table cells of each line (pdfLine.cells)
	joins    []string    // separator before each line after the first
	size     float64
	bold     bool
	mono     bool
	nlines   int
	indented bool // first line indented from the column edge
	width    float64
	table    bool // rows of a table, one per line
}

func (p *pdfPara) text() string {
	var sb strings.Builder
	for i, l := range p.lines {
		if i > 0 {
			sb.WriteString(p.joins[i-1])
		}
		sb.WriteString(l)
	}
	return sb.String()
}

// pdfUnit is a paragraph of the document: one or more page parts.
type pdfUnit struct {
	parts []*pdfPara
}

func (x *pdfExtractor) parse(ctx context.Context) (*parsing.Document, error) {
	// The outline is read while the page tree is walked and pages are laid
	// out: all of them mostly wait on the library inflating object streams,
	// and the reader keeps no state. Destinations are matched to pages once
	// both are known.
	ctx, cancel := context.WithCancel(ctx)
	var items []pdfOutlineItem
	var outlineErr error
	outlineDone := make(chan struct{})
	go func() {
		defer close(outlineDone)
		defer parsing.Guard(citebook.FormatPDF, &outlineErr)
		items = x.readOutline(ctx)
	}()
	// Even when the pages panic, the outline is stopped and waited for, so
	// nothing reads the file after Parse returns.
	defer func() {
		cancel()
		<-outlineDone
	}()
	pageLines, err := x.loadAndLayoutPages(ctx)
	if err != nil {
		cancel()
	}
	<-outlineDone
	if err != nil {
		return nil, err
	}
	if outlineErr != nil {
		slog.Warn("pdf outline unreadable; using headings from the text", "err", outlineErr)
		items = nil
	}
	for i := range items {
		items[i].Page = x.destPage(items[i].dest)
	}
	n := len(x.pages)
	chars := 0
	for _, lines := range pageLines {
		for _, l := range lines {
			chars += l.chars
		}
	}
	var ocrReport *citebook.OCRReport
	if x.ocr.OCR != nil { // pages without text are read from their images
		if ocrReport, err = x.ocrPages(ctx, x.src, x.size, pageLines, x.ocr); err != nil {
			return nil, err
		}
		chars = 0
		for _, lines := range pageLines {
			for _, l := range lines {
				chars += l.chars
			}
		}
	}
	if chars == 0 {
		return nil, noTextLayer(x.ocr)
	}

	folios := stripRunning(pageLines)
	labels := pageLabels(x.root, n)
	if labels == nil {
		labels = labelsFromFolios(folios)
	}

	body := bodySize(pageLines)
	var paras []*pdfPara
	for i, lines := range pageLines {
		paras = append(paras, liftFootnotes(paragraphs(lines, i+1), body)...)
	}
	units := joinPages(paras, body)

	doc := &parsing.Document{
		Format: citebook.FormatPDF,
		Pages:  n,
		Labels: labels,
	}
	doc.Title = x.title(pageLines, body)
	for _, it := range items {
		doc.Outline = append(doc.Outline, it.OutlineEntry)
	}
	var sections []parsing.Section
	if len(items) > 0 {
		sections = sectionsFromOutline(units, items, doc)
	} else {
		sections = sectionsFromHeadings(units, body, doc)
	}
	doc.Sections = sections
	if len(doc.Sections) == 0 {
		return nil, noTextLayer(x.ocr)
	}
	doc.OCR = ocrReport
	return doc, nil
}

// loadAndLayoutPages indexes the page tree, then lays out every page.
func (x *pdfExtractor) loadAndLayoutPages(ctx context.Context) ([][]pdfLine, error) {
	if err := x.loadPages(); err != nil {
		return nil, err
	}
	return x.layoutPages(ctx)
}

// layoutPages decodes and lays out every page, spread over the available
// CPUs. A panic on one page becomes an invalid-input error for the file.
func (x *pdfExtractor) layoutPages(ctx context.Context) ([][]pdfLine, error) {
	out := make([][]pdfLine, len(x.pages))
	workers := min(runtime.GOMAXPROCS(0), len(x.pages))
	var next atomic.Int64
	errs := make([]error, workers)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			defer parsing.Guard(citebook.FormatPDF, &errs[w])
			fonts := map[string]glyphFont{}
			for {
				i := int(next.Add(1)) - 1
				if i >= len(x.pages) {
					return
				}
				if err := parsing.CheckCtx(ctx); err != nil {
					errs[w] = err
					return
				}
				g, err := x.glyphs(i)
				if err != nil {
					errs[w] = err
					return
				}
				out[i] = layoutPage(g, fonts)
				normalizeLines(out[i], x.frames[i])
			}
		}()
	}
	wg.Wait()
	if err := errors.Join(errs...); err != nil {
		return nil, err
	}
	if n := x.badPages.Load(); n > 0 {
		slog.Warn("pdf pages with unreadable content", "pages", n)
	}
	return out, nil
}

// title prefers the document information title and falls back to the
// largest text near the top of the first page with text.
func (x *pdfExtractor) title(pageLines [][]pdfLine, body float64) string {
	t := strings.Join(strings.Fields(pdfText(x.r.Trailer().Key("Info").Key("Title"))), " ")
	l := strings.ToLower(t)
	if t != "" && !strings.HasSuffix(l, ".dvi") && !strings.HasSuffix(l, ".doc") && !strings.HasSuffix(l, ".docx") &&
		!strings.HasSuffix(l, ".tex") && !strings.HasPrefix(l, "microsoft word") && l != "untitled" {
		return t
	}
	for _, lines := range pageLines {
		if len(lines) == 0 {
			continue
		}
		best := -1
		for i, ln := range lines {
			if ln.size > body*1.15 && (best < 0 || ln.size > lines[best].size+0.1) && len(ln.text) > 2 {
				best = i
			}
		}
		if best < 0 {
			return ""
		}
		// A title may wrap: take the following lines of the same size.
		parts := []string{lines[best].text}
		for j := best + 1; j < len(lines) && math.Abs(lines[j].size-lines[best].size) < 0.1 && len(parts) < 3; j++ {
			parts = append(parts, lines[j].text)
		}
		return strings.Join(strings.Fields(strings.Join(parts, " ")), " ")
	}
	return ""
}

// bodySize is the font size most characters are set in.
func bodySize(pageLines [][]pdfLine) float64 {
	count := map[float64]int{}
	for _, lines := range pageLines {
		for _, l := range lines {
			count[math.Round(l.size*2)/2] += l.chars
		}
	}
	best, bestN := 10.0, 0
	for s, c := range count {
		if c > bestN || c == bestN && s < best { // ties to the smaller size, not to map order
			best, bestN = s, c
		}
	}
	return best
}

// pdfText is a text string with control characters made spaces: the
// library leaves AES-128 padding (bytes 1–16) on the strings it decrypts.
func pdfText(v pdf.Value) string {
	return strings.Map(func(r rune) rune {
		if unicode.IsControl(r) {
			return ' '
		}
		return r
	}, v.Text())
}
