package web

import (
	"context"
	"io"

	"github.com/citebook/citebook/ingest"
)

// IngestPreviewer previews a file with the same parser and chunker the
// indexer uses, so what an operator sees is what would be indexed.
type IngestPreviewer struct {
	Tokenizer *ingest.Tokenizer
	Options   ingest.ChunkOptions
	Limits    ingest.Limits // zero fields take ingest's defaults
}

// Preview parses and splits the file; nothing is stored.
func (p IngestPreviewer) Preview(ctx context.Context, name string, r io.ReaderAt, size int64) (Preview, error) {
	doc, err := p.Limits.Parse(ctx, name, r, size)
	if err != nil {
		return Preview{}, err
	}
	parents, chunks := ingest.Split(doc, "preview", p.Tokenizer, p.Options)
	return Preview{Title: doc.Title, Format: doc.Format, Language: doc.Language, Pages: doc.Pages, Parents: parents, Chunks: chunks}, nil
}

// Sniff refuses files that are plainly not readable books (empty, binary,
// password-protected) before an upload is stored: the same checks Parse
// starts with, without reading the content.
func (p IngestPreviewer) Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	return p.Limits.Sniff(ctx, name, r, size)
}
