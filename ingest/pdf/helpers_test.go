package pdf

import (
	"context"
	"io"
	"strings"

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

// pageGlyphs reads physical page n (1-based) as a parse does: the page and
// the resources it inherits from loadPages' walk, through the document's
// font cache.
func (x *pdfExtractor) pageGlyphs(n int) ([]pdf.Text, error) {
	return x.glyphCache.pageGlyphsShared(x.pages[n-1], x.inherited[n-1])
}
