package index_test

import (
	"context"
	"log/slog"
	"path/filepath"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/internal/corpus"
)

// BenchmarkFreshSearch measures what following the change log costs a
// search: the sync query plus the metadata check of the hits, on R-intro
// (k=20, lexical and vector), against the bare stores in the same run.
// It reports fresh/bare as a ratio and the added microseconds per search.
func BenchmarkFreshSearch(b *testing.B) {
	ctx := context.Background()
	dir := b.TempDir()
	meta, err := metadb.Open(ctx, filepath.Join(dir, "citebook.db"))
	if err != nil {
		b.Fatal(err)
	}
	defer meta.Close()
	f, err := index.NewFollower(ctx, meta, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
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
	f.Follow(vec, lex)
	emb := newEmbedder(b)
	bl := index.NewBuilder(meta, vec, lex, emb, index.BuilderOptions{Logger: slog.New(slog.DiscardHandler)})
	res, err := bl.Index(ctx, citebook.BookInput{BookID: "rintro", Tenant: "acme", Path: corpus.Path(b, "books/R-intro.pdf")})
	if err != nil {
		b.Fatal(err)
	}
	flt := citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "rintro", Version: res.Version}}}
	const q = "how do I fit a linear model with factors"
	qv, err := emb.EmbedDocuments(ctx, []string{q})
	if err != nil {
		b.Fatal(err)
	}
	fv, fl := index.FreshVectors{VectorStore: vec, F: f}, index.FreshLexical{LexicalIndex: lex, F: f}
	search := func(v index.VectorStore, l index.LexicalIndex) func() {
		return func() {
			if _, err := v.Search(ctx, qv[0], flt, 20); err != nil {
				b.Fatal(err)
			}
			if _, err := l.Search(ctx, q, flt, 20); err != nil {
				b.Fatal(err)
			}
		}
	}
	bare, fresh := search(vec, lex), search(fv, fl)
	var tBare, tFresh time.Duration
	for b.Loop() {
		t0 := time.Now()
		bare()
		t1 := time.Now()
		fresh()
		tBare += t1.Sub(t0)
		tFresh += time.Since(t1)
	}
	b.ReportMetric(float64(tFresh)/float64(tBare), "fresh/bare")
	b.ReportMetric(float64((tFresh-tBare).Microseconds())/float64(b.N), "added-µs/op")
}
