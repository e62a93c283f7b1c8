package embedder

import (
	"context"
	"math"
	"slices"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// Builtin is an offline, deterministic embedder: feature hashing of the
// lexical index's terms (lowercased words; CJK characters and character
// bigrams) plus character trigrams of words, with sublinear term frequency
// and L2 normalisation. It is lexical, not semantic — texts are close when
// they share words or word fragments, never because they mean the same — so
// it suits offline use, tests and small libraries, not paraphrased questions.
type Builtin struct {
	dim int
}

// NewBuiltin returns a builtin embedder of dimension dim (384 when dim <= 0).
func NewBuiltin(dim int) *Builtin {
	if dim <= 0 {
		dim = DefaultBuiltinDim
	}
	return &Builtin{dim: dim}
}

// Version identifies the hashing scheme and dimension.
func (b *Builtin) Version() citebook.EmbeddingVersion {
	return citebook.EmbeddingVersion{Provider: ProviderBuiltin, Model: builtinModelVersion, Dimension: b.dim}
}

// EmbedDocuments embeds each text; it never fails except on cancellation.
func (b *Builtin) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	out := make([][]float32, len(texts))
	for i, t := range texts {
		if i%256 == 0 {
			if err := ctx.Err(); err != nil {
				return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "embedding cancelled")
			}
		}
		out[i] = b.embed(t)
	}
	return out, nil
}

// EmbedQuery embeds one text exactly as a document, so queries and chunks
// share one space.
func (b *Builtin) EmbedQuery(ctx context.Context, text string) ([]float32, error) {
	if err := ctx.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "embedding cancelled")
	}
	return b.embed(text), nil
}

// Feature weights: whole terms carry meaning, trigrams only soften
// morphology and typos.
const (
	termWeight    = 1.0
	trigramWeight = 0.5
)

func (b *Builtin) embed(text string) []float32 {
	// Features are their 64-bit hashes; collisions at 64 bits are negligible
	// next to the folding into dim buckets below.
	var terms, grams []uint64
	var w []rune
	// Terms as hash-ngram-v1 segmented them (analysis.EachTermV1), so a
	// change to the lexical index's stemming leaves stored vectors valid.
	analysis.EachTermV1(text, func(tb []byte) {
		t := string(tb)
		if analysis.IsSymbol(t) {
			return // hashed as before symbols were terms: stored vectors stay valid
		}
		terms = append(terms, hashString(seedTerm, t))
		w = append(w[:0], '<')
		for _, r := range t {
			w = append(w, r)
		}
		if len(w) < 5 || isCJKTerm(w[1:]) {
			return
		}
		// Trigrams of the word with boundary markers, so "graph" and
		// "graphs" or "colour" and "color" share most features.
		w = append(w, '>')
		for i := 0; i+3 <= len(w); i++ {
			grams = append(grams, hashRunes(seedGram, w[i:i+3]))
		}
	})
	v := make([]float64, b.dim)
	add := func(hs []uint64, weight float64) {
		// Sorting groups repeats for counting and fixes the order of the
		// float sums, so vectors are bit-identical from run to run.
		slices.Sort(hs)
		for i := 0; i < len(hs); {
			j := i + 1
			for j < len(hs) && hs[j] == hs[i] {
				j++
			}
			h := hs[i]
			w := weight * (1 + math.Log(float64(j-i))) // sublinear: the tenth repeat adds far less than the first
			if h>>63 == 1 {
				w = -w // signed hashing keeps collisions from biasing similarity upwards
			}
			v[h%uint64(b.dim)] += w
			i = j
		}
	}
	add(terms, termWeight)
	add(grams, trigramWeight)
	var ss float64
	for _, x := range v {
		ss += x * x
	}
	out := make([]float32, b.dim)
	if ss == 0 {
		return out
	}
	inv := 1 / math.Sqrt(ss)
	for i, x := range v {
		out[i] = float32(x * inv)
	}
	return out
}

func isCJKTerm(r []rune) bool {
	for _, c := range r {
		if c >= 0x2E80 {
			return true
		}
	}
	return false
}

// FNV-1a, computed inline so hashing a feature allocates nothing; the seeds
// keep terms and trigrams in separate feature spaces.
const (
	fnvOffset = 14695981039346656037
	fnvPrime  = 1099511628211
	seedTerm  = 't'
	seedGram  = 'g'
)

func hashString(seed byte, s string) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(seed)) * fnvPrime
	for i := 0; i < len(s); i++ {
		h = (h ^ uint64(s[i])) * fnvPrime
	}
	return h
}

func hashRunes(seed byte, rs []rune) uint64 {
	h := uint64(fnvOffset)
	h = (h ^ uint64(seed)) * fnvPrime
	var buf [4]byte
	for _, r := range rs {
		n := utf8.EncodeRune(buf[:], r)
		for _, c := range buf[:n] {
			h = (h ^ uint64(c)) * fnvPrime
		}
	}
	return h
}
