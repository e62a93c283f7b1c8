package embedded

import (
	"context"
	"encoding/binary"
	"fmt"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/eval"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embed"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
)

// BenchmarkSearchDevQuestions measures the store on real questions: the dev
// sets' 1,240 questions (books-dev, FinanceBench, CMRC 2018) embedded by the
// builtin embedder over the chunks of their books (15k), padded to 100k
// chunks in one tenant with distractors made of the same books' words in
// random order (so they share vocabulary with the questions). recall@10 is
// the share of the exact top 10 (float32 row scan over every admitted row)
// that Search returns; cpu-ms/op is Search's CPU per question and
// exact-cpu-ms/op the row scan's, measured in the same run, x-exact their
// ratio; nnz is the questions' average count of non-zero dimensions.
func BenchmarkSearchDevQuestions(b *testing.B) {
	ctx := context.Background()
	docs, words, qs := devVectors(b)
	e := embed.NewBuiltin(benchDim)
	r := rand.New(rand.NewPCG(11, 12))
	for len(docs) < benchN {
		n := min(2000, benchN-len(docs))
		texts := make([]string, n)
		for i := range texts {
			var sb strings.Builder
			for range 180 {
				sb.WriteString(words[r.IntN(len(words))])
				sb.WriteByte(' ')
			}
			texts[i] = sb.String()
		}
		vs, err := e.EmbedDocuments(ctx, texts)
		if err != nil {
			b.Fatal(err)
		}
		docs = append(docs, vs...)
	}
	s, err := Open(ctx, b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	defer s.Close()
	const books = 20
	for lo := 0; lo < len(docs); lo += 10_000 {
		hi := min(lo+10_000, len(docs))
		cs := make([]citebook.Chunk, hi-lo)
		for j := range cs {
			i := lo + j
			cs[j] = citebook.Chunk{ID: fmt.Sprintf("c%06d", i), Tenant: "t", BookID: fmt.Sprintf("b%d", i%books), Version: 1, ParentID: fmt.Sprintf("p%d", i/5)}
		}
		if err := s.Upsert(ctx, cs, docs[lo:hi]); err != nil {
			b.Fatal(err)
		}
	}
	f := citebook.Filter{Tenant: "t"}
	for bk := range books {
		f.Books = append(f.Books, citebook.BookScope{BookID: fmt.Sprintf("b%d", bk), Version: 1})
	}
	nnz := 0
	for _, q := range qs {
		nnz += len(nonzero(q))
	}
	// Exact reference and its cost, over every question: the row scan over
	// a row-major copy of the same (unit) vectors.
	flat := make([]float32, 0, len(docs)*benchDim)
	for _, d := range docs {
		flat = append(flat, normalize(d)...)
	}
	rows := make([]int32, len(docs))
	for i := range rows {
		rows[i] = int32(i)
	}
	ref := &Store{dim: benchDim, vecs: flat}
	exact := make([][]int32, len(qs))
	runtime.GC()
	c0 := cpuTime()
	for i, q := range qs {
		for _, h := range ref.score(normalize(q), rows, 10) {
			exact[i] = append(exact[i], h.row)
		}
	}
	exactCPU := float64((cpuTime() - c0).Microseconds()) / float64(len(qs)) / 1000
	if !s.colsOnly {
		b.Fatal("the builtin embedder's vectors should make a columns-only store")
	}
	found, total := 0, 0
	for i, q := range qs {
		hits, err := s.Search(ctx, q, f, 10)
		if err != nil {
			b.Fatal(err)
		}
		got := map[string]bool{}
		for _, h := range hits {
			got[h.Chunk.ID] = true
		}
		for _, r := range exact[i] {
			total++
			if got[fmt.Sprintf("c%06d", r)] {
				found++
			}
		}
	}
	recall := float64(found) / float64(total)
	b.Run("k=10", func(b *testing.B) {
		runtime.GC()
		c0 := cpuTime()
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			if _, err := s.Search(ctx, qs[i%len(qs)], f, 10); err != nil {
				b.Fatal(err)
			}
		}
		b.StopTimer()
		cpu := float64((cpuTime() - c0).Microseconds()) / float64(b.N) / 1000
		b.ReportMetric(recall, "recall@10")
		b.ReportMetric(cpu, "cpu-ms/op")
		b.ReportMetric(exactCPU, "exact-cpu-ms/op")
		b.ReportMetric(exactCPU/cpu, "x-exact")
		b.ReportMetric(float64(nnz)/float64(len(qs)), "nnz")
	})
}

// devVectors returns the builtin vectors of every chunk of the dev sets'
// books, the words of those chunks, and the vectors of the dev questions,
// cached in the temporary directory (parsing the 30 FinanceBench filings
// takes about a minute).
func devVectors(b *testing.B) (docs [][]float32, words []string, qs [][]float32) {
	dir := corpus.Dir(b)
	cache := filepath.Join(os.TempDir(), "citebook-devvectors-v1.bin")
	wcache := cache + ".words"
	if d, q, ok := readDevCache(cache); ok {
		if w, err := os.ReadFile(wcache); err == nil {
			return d, strings.Fields(string(w)), q
		}
	}
	ctx := context.Background()
	var sets []*eval.Dataset
	d1, err := eval.LoadJSONL(filepath.Join(dir, "books-dev/books-dev.jsonl"), filepath.Join(dir, "books"))
	if err != nil {
		b.Fatal(err)
	}
	d2, err := eval.LoadFinanceBench(filepath.Join(dir, "financebench/financebench_dev.jsonl"), filepath.Join(dir, "financebench"))
	if err != nil {
		b.Fatal(err)
	}
	d3, err := eval.LoadCMRC(filepath.Join(dir, "cmrc2018/cmrc2018_trial.json"), b.TempDir())
	if err != nil {
		b.Fatal(err)
	}
	sets = append(sets, d1, d2, d3)
	tok, err := ingest.NewTokenizer()
	if err != nil {
		b.Fatal(err)
	}
	e := embed.NewBuiltin(benchDim)
	var sb strings.Builder
	for _, ds := range sets {
		for _, bk := range ds.Books {
			doc, err := ingest.ParseFile(ctx, bk.Path)
			if err != nil {
				b.Fatalf("%s: %v", bk.Path, err)
			}
			_, cs := ingest.Split(doc, bk.ID, tok, ingest.DefaultChunkOptions())
			texts := make([]string, len(cs))
			for i, c := range cs {
				texts[i] = index.EmbedText(c)
				sb.WriteString(c.Text)
				sb.WriteByte(' ')
			}
			vs, err := e.EmbedDocuments(ctx, texts)
			if err != nil {
				b.Fatal(err)
			}
			docs = append(docs, vs...)
		}
		for _, q := range ds.Questions {
			v, err := e.EmbedQuery(ctx, q.Question)
			if err != nil {
				b.Fatal(err)
			}
			qs = append(qs, v)
		}
	}
	writeDevCache(cache, docs, qs)
	os.WriteFile(wcache, []byte(sb.String()), 0o644)
	return docs, strings.Fields(sb.String()), qs
}

func writeDevCache(path string, docs, qs [][]float32) {
	f, err := os.Create(path)
	if err != nil {
		return
	}
	defer f.Close()
	binary.Write(f, binary.LittleEndian, [3]int32{int32(len(docs)), int32(len(qs)), benchDim})
	for _, v := range append(docs[:len(docs):len(docs)], qs...) {
		binary.Write(f, binary.LittleEndian, v)
	}
}

func readDevCache(path string) (docs, qs [][]float32, ok bool) {
	f, err := os.Open(path)
	if err != nil {
		return nil, nil, false
	}
	defer f.Close()
	var h [3]int32
	if binary.Read(f, binary.LittleEndian, &h) != nil || h[2] != benchDim {
		return nil, nil, false
	}
	read := func(n int) [][]float32 {
		out := make([][]float32, n)
		for i := range out {
			out[i] = make([]float32, benchDim)
			if binary.Read(f, binary.LittleEndian, out[i]) != nil {
				return nil
			}
		}
		return out
	}
	if docs = read(int(h[0])); docs == nil {
		return nil, nil, false
	}
	if qs = read(int(h[1])); qs == nil {
		return nil, nil, false
	}
	return docs, qs, true
}
