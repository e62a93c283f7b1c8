package pdf

import (
	"context"
	"fmt"
	"io"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/ledongthuc/pdf"
)

// Test entry points into the PDF reader: production parses through ingest
// (which sets the deadline) and reads pages with pageGlyphsShared; these
// parse within given limits, or open and read one piece at a time.

// parseDefault parses within DefaultLimits, as ingest.Parse does.
func parseDefault(ctx context.Context, r io.ReaderAt, size int64) (*parsing.Document, error) {
	return parseWithin(ctx, parsing.Limits{}, r, size)
}

// parseWithin parses within lim, its deadline included, as ingest.Parse
// does.
func parseWithin(ctx context.Context, lim parsing.Limits, r io.ReaderAt, size int64) (*parsing.Document, error) {
	lim = lim.WithDefaults()
	ctx, cancel := lim.WithDeadline(ctx)
	defer cancel()
	doc, err := Parse(ctx, r, size, Options{Limits: lim})
	if err != nil && ctx.Err() != nil {
		return nil, lim.DeadlineError(ctx)
	}
	return doc, err
}

// fullText is the document's text, block by block.
func fullText(doc *parsing.Document) string {
	var sb strings.Builder
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			sb.WriteString(b.Text)
			sb.WriteString("\n\n")
		}
	}
	return sb.String()
}

// newPDFExtractor checks the file is a readable PDF and indexes its pages.
func newPDFExtractor(r io.ReaderAt, size int64) (*pdfExtractor, error) {
	x, err := openPDFReader(r, size, newDocBudget(context.Background(), parsing.Limits{}))
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
	return newFontCacheBudget(newDocBudget(context.Background(), parsing.Limits{}))
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
