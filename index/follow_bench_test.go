package index_test

import (
	"context"
	"fmt"
	"math/rand/v2"
	"slices"
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
			if _, err := l.Search(ctx, q, flt, flt, 20); err != nil {
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

// BenchmarkVisibleCached measures the follower's check of 100 hits when
// the cache holds their lifespans, among those of 60k chunks of 8 books:
// by their chunk IDs (no row handles) and by the rows their handles name.
func BenchmarkVisibleCached(b *testing.B) {
	ctx := context.Background()
	const n, books = 60000, 8
	log := &scriptedLog{gen: 1, spans: make(map[string][]index.Lifespan, n)}
	store := new(citebook.RowOwner)
	all := make([]citebook.Hit, n)
	flt := citebook.Filter{Tenant: "t"}
	for bk := range books {
		flt.Books = append(flt.Books, citebook.BookScope{BookID: fmt.Sprintf("synth%03d", bk), Version: 1})
	}
	for i := range all {
		id, book := fmt.Sprintf("%016x", uint64(i)*0x9e3779b97f4a7c15), fmt.Sprintf("synth%03d", i%books)
		log.spans[id] = []index.Lifespan{{BookID: book, Version: 1}}
		all[i] = citebook.Hit{Chunk: citebook.Chunk{ID: id, BookID: book}, Ref: citebook.RowRef{Owner: store, Row: int32(i)}}
	}
	f, err := index.NewFollower(ctx, log, quiet())
	if err != nil {
		b.Fatal(err)
	}
	for i := 0; i < n; i += 100 {
		if _, err := f.Visible(ctx, all[i:i+100], flt); err != nil {
			b.Fatal(err)
		}
	}
	rng := rand.New(rand.NewPCG(1, 2))
	byRow, byID := make([][]citebook.Hit, 512), make([][]citebook.Hit, 512)
	for i := range byRow {
		for range 100 {
			byRow[i] = append(byRow[i], all[rng.IntN(n)])
		}
		byID[i] = slices.Clone(byRow[i])
		for j := range byID[i] {
			byID[i][j].Ref = citebook.RowRef{}
		}
	}
	for _, by := range []string{"id", "row"} {
		sets := byRow
		if by == "id" {
			sets = byID
		}
		b.Run(by, func(b *testing.B) {
			for i := range b.N {
				if _, err := f.Visible(ctx, sets[i%len(sets)], flt); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}
