package milvus

import (
	"context"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"
	"time"

	"github.com/citebook/citebook"
)

const benchDim = 384 // a common sentence-embedding size

// benchStore opens a fresh collection on MILVUS_ADDR; benchmarks are skipped
// without a server since `make bench` does not start one.
func benchStore(b *testing.B) *Store {
	b.Helper()
	addr := os.Getenv("MILVUS_ADDR")
	if addr == "" {
		b.Skip("MILVUS_ADDR not set")
	}
	name := "citebook_bench_" + strconv.FormatInt(time.Now().UnixNano(), 10)
	s, err := Open(context.Background(), Config{Addr: addr, Collection: name, Dim: benchDim})
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() {
		s.Drop(context.Background())
		s.Close()
	})
	return s
}

func benchChunks(rng *rand.Rand, book string, n int) ([]citebook.Chunk, [][]float32) {
	chunks := make([]citebook.Chunk, n)
	vecs := make([][]float32, n)
	for i := range chunks {
		chunks[i] = citebook.Chunk{
			ID: book + "-" + strconv.Itoa(i), BookID: book, Version: 1, ParentID: "p" + strconv.Itoa(i/20),
			Tenant: "t", HeadingPath: []string{"Chapter", "Section"}, Text: "a paragraph of about this many words, repeated for size. ",
		}
		vecs[i] = randomVector(rng)
	}
	return chunks, vecs
}

func randomVector(rng *rand.Rand) []float32 {
	v := make([]float32, benchDim)
	for i := range v {
		v[i] = rng.Float32()*2 - 1
	}
	return v
}

// BenchmarkUpsert writes a book-sized batch of 500 chunks per iteration.
func BenchmarkUpsert(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(1, 2))
	chunks, vecs := benchChunks(rng, "book", 500)
	b.ResetTimer()
	for range b.N {
		if err := s.Upsert(context.Background(), chunks, vecs); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkSearch is one reader's filtered top-10 over 20 books of 500
// chunks, the shape of a question against a small library. Target: well
// under 50ms per search on a developer machine.
func BenchmarkSearch(b *testing.B) {
	s := benchStore(b)
	rng := rand.New(rand.NewPCG(3, 4))
	var scopes []citebook.BookScope
	for i := range 20 {
		book := "book" + strconv.Itoa(i)
		chunks, vecs := benchChunks(rng, book, 500)
		if err := s.Upsert(context.Background(), chunks, vecs); err != nil {
			b.Fatal(err)
		}
		if i%2 == 0 {
			scopes = append(scopes, citebook.BookScope{BookID: book, Version: 1})
		}
	}
	f := citebook.Filter{Tenant: "t", Books: scopes, DenyParents: []string{"p1", "p2"}}
	query := randomVector(rng)
	b.ResetTimer()
	for range b.N {
		hits, err := s.Search(context.Background(), query, f, 10)
		if err != nil {
			b.Fatal(err)
		}
		if len(hits) != 10 {
			b.Fatalf("got %d hits", len(hits))
		}
	}
}
