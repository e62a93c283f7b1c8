package web

import (
	"context"
	"io"

	"github.com/citebook/citebook/ingest"
)

// ingestPreviewer is the tests' Previewer: ingest's parser and chunker, as
// cmd wires them in production (web itself never imports ingest).
type ingestPreviewer struct{ tok *ingest.Tokenizer }

func (p ingestPreviewer) Preview(ctx context.Context, name string, r io.ReaderAt, size int64) (Preview, error) {
	doc, err := ingest.ParseOptions{}.Parse(ctx, name, r, size)
	if err != nil {
		return Preview{}, err
	}
	parents, chunks := ingest.Split(doc, "preview", p.tok, ingest.DefaultChunkOptions())
	return Preview{Title: doc.Title, Format: doc.Format, Language: doc.Language, Pages: doc.Pages, Parents: parents, Chunks: chunks}, nil
}

func (p ingestPreviewer) Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	return ingest.ParseOptions{}.Sniff(ctx, name, r, size)
}
