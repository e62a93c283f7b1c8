package index_test

import (
	"context"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
)

// BenchmarkFreshSearch measures what following the change log costs a
// search: the sync query plus the metadata check of the hits, on R-intro
// (k=20, lexical and vector), against the bare stores in the same run.
// It reports fresh/bare as a ratio and the added microseconds per search.
func BenchmarkFreshSearch(b *testing.B) {
	ctx := context.Background()
	l := testlib.Open(b, testlib.Config(b.TempDir()))
	f, vec, lex, emb, bl := l.Follow, l.Vectors, l.Lexical, l.Embed, l.Builder
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
