package milvus

import (
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index/embed"
)

// BenchmarkIndexTypes measures FLAT, IVF_FLAT and HNSW on the real Milvus
// over one collection of the builtin embedder's vectors (Zipf-distributed
// pseudo-word paragraphs, as bench/synth writes, one tenant, every book in
// scope) at each size in CITEBOOK_MILVUS_BENCH_SIZES (default 20000,60000):
// p50-ms and p95-ms are the wall time of one filtered top-10 search,
// recall@10 the share of returned hits scoring at least FLAT's (exact) 10th
// best — by score, since the many ties of lexical vectors make the exact
// top 10 one of several equally right sets — and build-s what (re)indexing
// took. The
// store's "auto" plan (indexplan.go) is chosen from these figures.
func BenchmarkIndexTypes(b *testing.B) {
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		b.Skip("MILVUS_ADDR not set")
	}
	sizes := []int{20_000, 60_000}
	if env := os.Getenv("CITEBOOK_MILVUS_BENCH_SIZES"); env != "" {
		sizes = nil
		for _, f := range strings.Split(env, ",") {
			n, err := strconv.Atoi(f)
			if err != nil {
				b.Fatal(err)
			}
			sizes = append(sizes, n)
		}
	}
	for _, n := range sizes {
		b.Run(fmt.Sprintf("n=%d", n), func(b *testing.B) { benchIndexTypes(b, addr, n) })
	}
}

func benchIndexTypes(b *testing.B, addr string, n int) {
	ctx := context.Background()
	e := embed.NewBuiltin(benchDim)
	r := rand.New(rand.NewPCG(7, uint64(n)))
	vocab := make([]string, 20000)
	for i := range vocab {
		vocab[i] = fmt.Sprintf("w%x", r.Uint32()>>8)
	}
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	para := func(words int) string {
		var sb strings.Builder
		for range words {
			sb.WriteString(vocab[zipf.Uint64()])
			sb.WriteByte(' ')
		}
		return sb.String()
	}
	name := "citebook_bench_ix_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	open := func(index string) *Store {
		s, err := Open(ctx, Config{Addr: addr, Collection: name, Dim: benchDim, Index: index, Timeout: 10 * time.Minute})
		if err != nil {
			b.Fatal(err)
		}
		return s
	}
	s := open(IndexFlat)
	defer func() {
		s.Drop(ctx)
		s.Close()
	}()
	const books = 20
	for lo := 0; lo < n; lo += 1000 {
		cs := make([]citebook.Chunk, min(1000, n-lo))
		texts := make([]string, len(cs))
		for j := range cs {
			i := lo + j
			cs[j] = citebook.Chunk{ID: fmt.Sprintf("c%06d", i), BookID: fmt.Sprintf("b%d", i%books), Version: 1, ParentID: fmt.Sprintf("p%d", i/5), Tenant: "t", Text: "x"}
			texts[j] = para(90)
		}
		vs, err := e.EmbedDocuments(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		if err := s.Upsert(ctx, cs, vs); err != nil {
			b.Fatal(err)
		}
	}
	f := citebook.Filter{Tenant: "t"}
	for bk := range books {
		f.Books = append(f.Books, citebook.BookScope{BookID: fmt.Sprintf("b%d", bk), Version: 1})
	}
	qs := make([][]float32, 40)
	for i := range qs {
		v, err := e.EmbedQuery(ctx, "what does the book say about "+para(3))
		if err != nil {
			b.Fatal(err)
		}
		qs[i] = v
	}
	search := func(s *Store) ([][]citebook.Hit, []time.Duration) {
		var out [][]citebook.Hit
		var lat []time.Duration
		for _, q := range qs {
			t0 := time.Now()
			hits, err := s.Search(ctx, q, f, 10)
			if err != nil {
				b.Fatal(err)
			}
			lat = append(lat, time.Since(t0))
			out = append(out, hits)
		}
		sort.Slice(lat, func(i, j int) bool { return lat[i] < lat[j] })
		return out, lat
	}
	exact, _ := search(s)
	for _, ix := range []string{IndexFlat, IndexIVFFlat, IndexHNSW} {
		b.Run(ix, func(b *testing.B) {
			s.Close()
			t0 := time.Now()
			s = open(ix)
			build := time.Since(t0)
			if string(s.index) != ix {
				b.Fatalf("index %s, want %s", s.index, ix)
			}
			search(s) // warm
			var got [][]citebook.Hit
			var lat []time.Duration
			b.ResetTimer()
			for range b.N {
				got, lat = search(s)
			}
			b.StopTimer()
			found, total := 0, 0
			for i := range exact {
				if len(exact[i]) == 0 {
					continue
				}
				kth := exact[i][len(exact[i])-1].Score
				total += len(exact[i])
				for _, h := range got[i][:min(len(got[i]), len(exact[i]))] {
					if h.Score >= kth-1e-5 {
						found++
					}
				}
			}
			b.ReportMetric(float64(lat[len(lat)/2].Microseconds())/1000, "p50-ms")
			b.ReportMetric(float64(lat[len(lat)*95/100].Microseconds())/1000, "p95-ms")
			b.ReportMetric(float64(found)/float64(total), "recall@10")
			b.ReportMetric(build.Seconds(), "build-s")
			b.ReportMetric(0, "ns/op")
		})
	}
}
