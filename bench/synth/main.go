// Command synth writes a synthetic library for load tests: Markdown books of
// paragraphs sized to become one chunk each (about 250 tokens), words drawn
// from a Zipf distribution over a fixed pseudo-word vocabulary so term
// statistics look like text, plus a manifest for `citebook index --manifest`
// and a file of questions built from the same vocabulary: half name three
// rarer words of one sentence of a random paragraph (a search finds and
// keeps passages, as for a reader's question the books answer), half three
// rare words drawn at random (no passage holds them together: the
// retrieval runs and the threshold drops what it found, as for a question
// the books do not answer).
package main

import (
	"bufio"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
)

func main() {
	out := flag.String("out", "synthetic", "output folder")
	chunks := flag.Int("chunks", 100000, "paragraphs (≈ chunks) in the whole library")
	books := flag.Int("books", 20, "books to spread them over")
	words := flag.Int("words", 90, "words per paragraph (≈ 300 tokens of pseudo-words)")
	questions := flag.Int("questions", 200, "questions to write")
	seed := flag.Uint64("seed", 1, "random seed, for reproducible libraries")
	only := flag.Bool("questions-only", false, "write questions.txt alone (the books as a run with the same flags writes them are generated, not written)")
	flag.Parse()
	if err := os.MkdirAll(*out, 0o755); err != nil {
		log.Fatal(err)
	}
	r := rand.New(rand.NewPCG(*seed, 2))
	// The questions draw on their own stream, so the books stay those of
	// earlier versions of this command (a cached library still matches).
	qr := rand.New(rand.NewPCG(*seed, 3))
	found := sampleSentences(qr, *chunks, *questions/2)
	var asked []string
	vocab := vocabulary(r, 20000)
	zipf := rand.NewZipf(r, 1.1, 2, uint64(len(vocab)-1))
	word := func() string { t, _ := wordRank(zipf, vocab); return t }

	var enc *json.Encoder
	if !*only {
		manifest, err := os.Create(filepath.Join(*out, "manifest.jsonl"))
		if err != nil {
			log.Fatal(err)
		}
		defer manifest.Close()
		enc = json.NewEncoder(manifest)
	}
	per := (*chunks + *books - 1) / *books
	for b := range *books {
		name := fmt.Sprintf("book%03d.md", b)
		w := bufio.NewWriter(io.Discard)
		var f *os.File
		if !*only {
			var err error
			if f, err = os.Create(filepath.Join(*out, name)); err != nil {
				log.Fatal(err)
			}
			w = bufio.NewWriter(f)
		}
		fmt.Fprintf(w, "# Synthetic book %d\n\n", b)
		for p := range per {
			if p%50 == 0 {
				fmt.Fprintf(w, "## Chapter %d: %s %s\n\n", p/50+1, word(), word())
			}
			sent := found[b*per+p]
			var rare []string
			for i := range *words {
				if i > 0 {
					w.WriteByte(' ')
				}
				t, rank := wordRank(zipf, vocab)
				w.WriteString(t)
				if sent > 0 && i/17 == sent-1 && rank >= 200 && !slices.Contains(rare, t) {
					rare = append(rare, t)
				}
				if i%17 == 16 {
					w.WriteByte('.')
				}
			}
			if len(rare) >= 3 {
				asked = append(asked, strings.Join(rare[:3], " "))
			}
			w.WriteString(".\n\n")
		}
		if err := w.Flush(); err != nil {
			log.Fatal(err)
		}
		if f != nil {
			f.Close()
			if err := enc.Encode(map[string]string{"book_id": fmt.Sprintf("synth%03d", b), "title": fmt.Sprintf("Synthetic book %d", b), "path": name}); err != nil {
				log.Fatal(err)
			}
		}
	}

	q, err := os.Create(filepath.Join(*out, "questions.txt"))
	if err != nil {
		log.Fatal(err)
	}
	defer q.Close()
	// Questions mix frequent and rare words, as real questions mix function
	// words with the few terms that matter; the found and the random ones
	// alternate.
	for i := range *questions {
		var about string
		if i%2 == 0 && i/2 < len(asked) {
			about = asked[i/2]
		} else {
			parts := make([]string, 0, 3)
			for range 3 {
				parts = append(parts, vocab[200+qr.IntN(len(vocab)-200)])
			}
			about = strings.Join(parts, " ")
		}
		fmt.Fprintln(q, "what does the book say about "+about+"?")
	}
}

// sampleSentences picks n of the library's paragraphs (by index over all
// books) and, for each, the 1-based sentence a question is built from;
// 0 for paragraphs not picked.
func sampleSentences(r *rand.Rand, paragraphs, n int) map[int]int {
	out := make(map[int]int, n)
	for len(out) < min(n, paragraphs) {
		out[r.IntN(paragraphs)] = 1 + r.IntN(5)
	}
	return out
}

// wordRank draws the next word and its rank in the vocabulary.
func wordRank(zipf *rand.Zipf, vocab []string) (string, int) {
	i := zipf.Uint64()
	return vocab[i], int(i)
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
