package ingest

import (
	"context"
	"io"
)

// The package-level parsers within DefaultLimits are a convenience of the
// tests: production always parses through a Limits (cmd sets the deadline),
// so they live here rather than in the package.

// Parse detects the format of a book and parses it within DefaultLimits.
func Parse(ctx context.Context, name string, r io.ReaderAt, size int64) (*Document, error) {
	return Limits{}.Parse(ctx, name, r, size)
}

// ParsePDF reads a PDF into a Document: text rebuilt from glyph positions in
// reading order (columns, paragraphs, rejoined hyphenation), running heads and
// folios removed but used for printed page labels, and sections taken from
// the bookmarks or, without any, from numbered headings. Every paragraph keeps
// the physical pages it spans so citations can name the page of a quote.
//
// Files that cannot be read (empty, truncated, encrypted, image-only) are
// EINVALID errors; malformed content never panics.
//
// ParsePDF works within DefaultLimits; Limits.Parse takes others.
func ParsePDF(ctx context.Context, r io.ReaderAt, size int64) (*Document, error) {
	l := DefaultLimits()
	ctx, cancel := l.withDeadline(ctx)
	defer cancel()
	doc, err := parsePDF(ctx, r, size, l, ParseOptions{})
	if err != nil && ctx.Err() != nil {
		return nil, l.deadlineError(ctx)
	}
	return doc, err
}

// ParseEPUB reads an EPUB 2 or 3 book: the spine gives reading order, the
// nav document (or the NCX) gives the chapter tree, and paragraphs are mapped
// to it by file and fragment anchor so every block carries the heading path
// a reader sees. Common packaging faults are tolerated (mimetype not first,
// directory entries, everything under one extra top-level folder, a wrong
// declared language); unsafe paths and zip bombs are refused. Reflowable
// books have no pages, unless they carry a page list (print page numbers),
// which then becomes the document's pages and labels. It works within
// DefaultLimits; Limits.Parse takes others.
func ParseEPUB(ctx context.Context, r io.ReaderAt, size int64) (*Document, error) {
	return parseEPUB(ctx, r, size, DefaultLimits())
}

// Sniff checks within DefaultLimits that a file could be a book, cheaply
// enough to run while an upload is answered; see Limits.Sniff.
func Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	return Limits{}.Sniff(ctx, name, r, size)
}
