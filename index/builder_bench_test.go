package index_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/corpus"
)

// BenchmarkReindexUnchanged measures re-indexing an unchanged 261-page book
// (Debian Reference); the target is at most 1 s per run, which the builder
// meets by hashing the file and skipping the parse.
func BenchmarkReindexUnchanged(b *testing.B) {
	ctx := context.Background()
	pdf := corpus.Path(b, "books/debian-reference.en.pdf")
	dir := b.TempDir()
	meta, err := metadb.Open(ctx, filepath.Join(dir, "citebook.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer meta.Close()
	vec, err := memstore.Open(ctx, filepath.Join(dir, "vectors"))
	if err != nil {
		b.Fatal(err)
	}
	defer vec.Close()
	lex, err := lexical.Open(ctx, filepath.Join(dir, "lexical"))
	if err != nil {
		b.Fatal(err)
	}
	defer lex.Close()
	bl := index.NewBuilder(meta, vec, lex, newEmbedder(b), index.BuilderOptions{Logger: slog.New(slog.DiscardHandler)})
	in := index.BookInput{BookID: "debian-reference", Tenant: "acme", Path: pdf}
	first, err := bl.Index(ctx, in)
	if err != nil {
		b.Fatal(err)
	}
	b.ReportMetric(float64(first.Chunks), "chunks")
	b.ResetTimer()
	for b.Loop() {
		res, err := bl.Index(ctx, in)
		if err != nil {
			b.Fatal(err)
		}
		if !res.Unchanged {
			b.Fatalf("re-index of an unchanged book: %+v", res)
		}
	}
}
