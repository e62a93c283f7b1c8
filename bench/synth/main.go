// Command synth writes a synthetic library for load tests: Markdown books of
// paragraphs sized to become one chunk each (about 250 tokens), words drawn
// from a Zipf distribution over a fixed pseudo-word vocabulary so term
// statistics look like text, plus a manifest for `citebook index --manifest`
// and a file of questions built from the same vocabulary.
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"strings"
)

func main() {
	out := flag.String("out", "synthetic", "output folder")
	chunks := flag.Int("chunks", 100000, "paragraphs (≈ chunks) in the whole library")
	books := flag.Int("books", 20, "books to spread them over")
	words := flag.Int("words", 90, "words per paragraph (≈ 300 tokens of pseudo-words)")
	questions := flag.Int("questions", 200, "questions to write")
	seed := flag.Uint64("seed", 1, "random seed, for reproducible libraries")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*seed, 2))
	vocab := vocabulary(r, 20000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	word := func() string { return vocab[zipf.Uint64()] }

	manifest, err := os.Create(filepath.Join(*out, "manifest.jsonl"))
	if err != nil {
		log.Fatal(err)
	}
	defer manifest.Close()
	enc := json.NewEncoder(manifest)
	per := (*chunks + *books - 1) / *books
	for b := range *books {
		name := fmt.Sprintf("book%03d.md", b)
		f, err := os.Create(filepath.Join(*out, name))
		if err != nil {
			log.Fatal(err)
		}
		w := bufio.NewWriter(f)
		fmt.Fprintf(w, "# Synthetic book %d\n\n", b)
		for p := range per {
			if p%50 == 0 {
				fmt.Fprintf(w, "## Chapter %d: %s %s\n\n", p/50+1, word(), word())
			}
			for i := range *words {
				if i > 0 {
					w.WriteByte(' ')
				}
				w.WriteString(word())
				if i%17 == 16 {
					w.WriteByte('.')
				}
			}
			w.WriteString(".\n\n")
		}
		if err := w.Flush(); err != nil {
			log.Fatal(err)
		}
		f.Close()
		if err := enc.Encode(map[string]string{"book_id": fmt.Sprintf("synth%03d", b), "title": fmt.Sprintf("Synthetic book %d", b), "path": name}); err != nil {
			log.Fatal(err)
		}
	}

	q, err := os.Create(filepath.Join(*out, "questions.txt"))
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	// Questions mix frequent and rare words, as real questions mix function
	// words with the few terms that matter.
	for range *questions {
		parts := []string{"what", "does", "the", "book", "say", "about"}
		for range 3 {
			parts = append(parts, vocab[200+r.IntN(len(vocab)-200)])
		}
		fmt.Fprintln(q, strings.Join(parts, " ")+"?")
	}
}

// vocabulary makes n distinct pronounceable pseudo-words.
func vocabulary(r *rand.Rand, n int) []string {
	cons, vow := "bcdfghklmnprstvz", "aeiou"
	seen := map[string]bool{}
	out := make([]string, 0, n)
	for len(out) < n {
		var sb strings.Builder
		for range 2 + r.IntN(3) {
			sb.WriteByte(cons[r.IntN(len(cons))])
			sb.WriteByte(vow[r.IntN(len(vow))])
		}
		if w := sb.String(); !seen[w] {
			seen[w] = true
			out = append(out, w)
		}
	}
	return out
}
