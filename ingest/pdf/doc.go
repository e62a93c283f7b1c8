// Package pdf reads PDF books for ingest: it checks a file's structure
// before the PDF library follows it (hostile cross-reference data, nested
// object streams, AES-256 encryption the library lacks), walks the page tree
// once, decodes each page's text with its own content-stream interpreter and
// font decoding, lays glyphs out into lines, columns, paragraphs and table
// rows, and builds the sections from the bookmarks or from headings, with
// printed page labels and every word's box on its page. Pages without text
// are read through an OCR (ingest wires Tesseract) when one is given.
//
// Its API is Parse and Check (the cheap check an upload gets) with their
// Options; everything else is internal. It produces ingest's Document and
// works within ingest's Limits, both defined in ingest/internal/parsing so
// that this package does not import ingest. Every parse is bounded by a
// budget (decoded bytes per stream and per document, operators, text) and
// by the caller's context, which every read of the file checks.
//
// Inside this package the identifier pdf names the PDF library
// (github.com/ledongthuc/pdf), whose objects the reader walks.
package pdf
