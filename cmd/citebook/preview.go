package main

import (
	"context"
	"io"

	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/web"
)

// previewer is web.Previewer over ingest: it previews a file with the same
// parser and chunker the indexer uses, so what an operator sees is what
// would be indexed. It lives here because web reaches parsing only through
// the interface.
type previewer struct {
	tok    *ingest.Tokenizer
	opts   ingest.ChunkOptions
	limits ingest.Limits // zero fields take ingest's defaults
}

// Preview parses and splits the file; nothing is stored.
func (p previewer) Preview(ctx context.Context, name string, r io.ReaderAt, size int64) (web.Preview, error) {
	doc, err := ingest.ParseOptions{Limits: p.limits}.Parse(ctx, name, r, size)
	if err != nil {
		return web.Preview{}, err
	}
	parents, chunks := ingest.Split(doc, "preview", p.tok, p.opts)
	return web.Preview{Title: doc.Title, Format: doc.Format, Language: doc.Language, Pages: doc.Pages, Parents: parents, Chunks: chunks}, nil
}

// Sniff runs the checks Parse starts with (empty, binary, truncated,
// password-protected) without reading the content.
func (p previewer) Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	return ingest.ParseOptions{Limits: p.limits}.Sniff(ctx, name, r, size)
}
