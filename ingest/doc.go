// Package ingest turns book files into citebook parents and chunks: parsers
// per format produce a Document (sections of paragraphs that remember their
// pages), cleaning normalizes text, and the chunker splits it to a token
// budget. It knows nothing of storage or answering. PDFs are read by
// ingest/pdf; the types every parser shares are defined once in
// ingest/internal/parsing and re-exported here.
package ingest

import "github.com/citebook/citebook/ingest/internal/parsing"

// The parsed book and the bounds of a parse. They are defined in
// ingest/internal/parsing, below both ingest and ingest/pdf, so the PDF
// reader produces them without importing ingest; these names are the ones
// the rest of citebook uses.
type (
	Document     = parsing.Document
	OutlineEntry = parsing.OutlineEntry
	Section      = parsing.Section
	Block        = parsing.Block
	Limits       = parsing.Limits
)

// DefaultLimits are the bounds a parse runs within when a Limits field is
// zero; see parsing.DefaultLimits, the one place they are set.
func DefaultLimits() Limits { return parsing.DefaultLimits() }
