package index_test

import (
	"context"
	"testing"

	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
)

// BenchmarkReindexUnchanged measures re-indexing an unchanged 261-page book
// (Debian Reference); the target is at most 1 s per run, which the builder
// meets by hashing the file and skipping the parse.
func BenchmarkReindexUnchanged(b *testing.B) {
	ctx := context.Background()
	pdf := corpus.Path(b, "books/debian-reference.en.pdf")
	bl := testlib.Open(b, testlib.Config(b.TempDir())).Builder
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
