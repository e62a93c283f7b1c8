// Package parsing is what every parser of ingest shares, so the PDF reader
// (ingest/pdf) can live in a package of its own without importing ingest:
// the Document all parsers produce and the chunker reads, the Limits every
// parse runs within (with their defaults), text cleaning, and the recovery
// that turns a parser's panic into an invalid-input error. ingest re-exports
// the types under its own names; only ingest and ingest/pdf import this
// package.
package parsing

import "github.com/citebook/citebook"

// Document is a parsed book before chunking: its sections in reading order,
// each a list of paragraphs that remember which physical pages they cover.
type Document struct {
	Title    string
	Format   citebook.Format
	Language string              // BCP 47-ish tag detected from content ("en", "zh")
	Pages    int                 // physical pages; 0 for reflowable formats
	Labels   []string            // printed page label per physical page (index page-1); "" when unknown
	Outline  []OutlineEntry      // the book's own table of contents, as found
	Sections []Section           // reading order; a section with blocks becomes a parent
	OCR      *citebook.OCRReport // what OCR read, when image-only pages were sent to it
}

// OutlineEntry is one entry of the book's table of contents.
type OutlineEntry struct {
	Title string `json:"title"`
	Level int    `json:"level"`          // 0 for top level
	Page  int    `json:"page,omitempty"` // physical page, 1-based; 0 for reflowable books
}

// Section is a run of paragraphs under one heading path. Sections appear in
// reading order; a chapter's text before its first subsection is a section of
// its own whose path is the chapter alone.
type Section struct {
	HeadingPath []string
	Blocks      []Block
}

// Block is one paragraph (or a code block, table row group or list) of
// cleaned text. Pages marks where each physical page begins inside Text; the
// first span is at offset 0. Reflowable formats leave Pages empty.
type Block struct {
	Text  string
	Pages []citebook.PageSpan
	// Geometry places the words of Text on their pages (PDF only), with
	// offsets into Text and lines numbered within the block.
	Geometry []citebook.WordBox
	// Header is how many bytes at the start of Text are a table's header
	// rows (column years, period labels, units), so the chunker can repeat
	// them in the index text of the table's later chunks; 0 for a block that
	// is no table or opens with figures.
	Header int
}

// Label returns the printed label of physical page p, or "" when unknown.
func (d *Document) Label(p int) string {
	if p < 1 || p > len(d.Labels) {
		return ""
	}
	return d.Labels[p-1]
}

// Untitled names text that comes before any heading, so every chunk still
// has a heading path a reader can recognise: the book's title, or "Front
// matter".
func (d *Document) Untitled() string {
	if d.Title != "" {
		return d.Title
	}
	return "Front matter"
}
