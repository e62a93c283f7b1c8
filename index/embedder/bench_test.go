package embedder

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/citebook/citebook/internal/corpus"
)

// BenchmarkBuiltin embeds Moby Dick paragraphs; the builtin embedder must
// keep up with indexing (reported as MB/s of text).
func BenchmarkBuiltin(b *testing.B) {
	raw, err := os.ReadFile(corpus.Path(b, "books/mobydick.txt"))
	if err != nil {
		b.Fatal(err)
	}
	paras := strings.Split(strings.ReplaceAll(string(raw), "\r\n", "\n"), "\n\n")
	e := NewBuiltin(0)
	b.SetBytes(int64(len(raw)))
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		if _, err := e.EmbedDocuments(context.Background(), paras); err != nil {
			b.Fatal(err)
		}
	}
}
