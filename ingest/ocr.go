package ingest

import (
	"time"

	"github.com/citebook/citebook/ingest/pdf"
)

// ParseOptions are a parse's limits and its optional collaborators.
type ParseOptions struct {
	// Limits bound the parse. With OCR, a zero Timeout means
	// DefaultOCRTimeout: Tesseract takes seconds a page.
	Limits Limits
	// OCR reads image-only PDF pages; nil refuses PDFs without a text
	// layer, as before.
	OCR pdf.OCR
	// Progress is told after each OCR'd page how many of the image-only
	// pages are done; OCR takes seconds a page.
	Progress func(done, total int)
	// path is the file being parsed, for OCR tools that read files.
	path string
}

// DefaultOCRTimeout bounds a parse that reads pages by OCR, unless
// Limits.Timeout says otherwise: a few hundred scanned pages at a few
// seconds each.
const DefaultOCRTimeout = time.Hour

// limits are the options' Limits with defaults, the OCR timeout included.
func (o ParseOptions) limits() Limits {
	l := o.Limits
	if o.OCR != nil && l.Timeout <= 0 {
		l.Timeout = DefaultOCRTimeout
	}
	return l.WithDefaults()
}

// lineKey numbers a Tesseract line from its block, paragraph and line.
func lineKey(block, par, line int) int { return (block*1000+par)*1000 + line }
