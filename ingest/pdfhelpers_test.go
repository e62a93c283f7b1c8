package ingest

import (
	"context"
	"fmt"
	"io"

	"github.com/citebook/citebook"
	"github.com/ledongthuc/pdf"
)

// Test entry points into the PDF reader: production opens a document
// through parsePDF (with its Limits and deadline) and reads pages with
// pageGlyphsShared; these open and read one piece at a time.

// newPDFExtractor checks the file is a readable PDF and indexes its pages.
func newPDFExtractor(r io.ReaderAt, size int64) (*pdfExtractor, error) {
	x, err := openPDFReader(r, size, newDocBudget(context.Background(), Limits{}))
	if err != nil {
		return nil, err
	}
	if err := x.loadPages(); err != nil {
		return nil, err
	}
	return x, nil
}

// newFontCache returns an empty cache for one document, within the default
// limits and without a deadline.
func newFontCache() *fontCache {
	return newFontCacheBudget(newDocBudget(context.Background(), Limits{}))
}

// pageGlyphs returns the page's glyphs in content-stream order (including
// text in form XObjects) with correct Unicode text, position and size: one
// pdf.Text per glyph, X/Y the glyph origin in user space (points, y up, like
// the library), FontSize the rendered size, W the advance width in points,
// S its text ("fi" for a ligature glyph). Glyphs whose code maps to no text
// are not returned but still advance the pen. It never panics: a malformed
// page yields an error (with whatever glyphs were read before it).
func (c *fontCache) pageGlyphs(p pdf.Page) (glyphs []pdf.Text, err error) {
	var res pdf.Value
	if !p.V.IsNull() {
		func() {
			defer func() {
				if r := recover(); r != nil {
					err = citebook.Wrap(fmt.Errorf("%v", r), citebook.EINVALID, "unreadable PDF page resources")
				}
			}()
			res = p.Resources()
		}()
	}
	if err != nil {
		return nil, err
	}
	return c.pageGlyphsRes(p, res)
}
