package ingest

import (
	"context"
	"io"
)

// The package-level parsers within DefaultLimits are a convenience of the
// tests: production always parses through ParseOptions (cmd sets the deadline),
// so they live here rather than in the package.

// Parse detects the format of a book and parses it within DefaultLimits.
func Parse(ctx context.Context, name string, r io.ReaderAt, size int64) (*Document, error) {
	return ParseOptions{}.Parse(ctx, name, r, size)
}

// ParseEPUB reads an EPUB 2 or 3 book: the spine gives reading order, the
// nav document (or the NCX) gives the chapter tree, and paragraphs are mapped
// to it by file and fragment anchor so every block carries the heading path
// a reader sees. Common packaging faults are tolerated (mimetype not first,
// directory entries, everything under one extra top-level folder, a wrong
// declared language); unsafe paths and zip bombs are refused. Reflowable
// books have no pages, unless they carry a page list (print page numbers),
// which then becomes the document's pages and labels. It works within
// DefaultLimits; ParseOptions.Parse takes others.
func ParseEPUB(ctx context.Context, r io.ReaderAt, size int64) (*Document, error) {
	return parseEPUB(ctx, r, size, DefaultLimits())
}

// Sniff checks within DefaultLimits that a file could be a book, cheaply
// enough to run while an upload is answered; see ParseOptions.Sniff.
func Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	return ParseOptions{}.Sniff(ctx, name, r, size)
}
