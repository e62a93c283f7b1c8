package analysis

import (
	"strings"

	"golang.org/x/text/unicode/norm"
)

// CJKRuns lists the character pairs of each run of CJK characters in s
// that is long enough to hold a word boundary (three characters or more),
// one slice per run, each pair as Terms spells it. Segmenting by pairs
// makes a term of every two neighbouring characters, including those of
// two words ("写页码范围" gives 写页, 页码, 码范, 范围); Straddles tells
// them apart by how often the library holds each pair.
func CJKRuns(s string) [][]string {
	s = norm.NFKC.String(strings.ToValidUTF8(s, " "))
	var (
		out [][]string
		run []rune
	)
	flush := func() {
		if len(run) >= 3 {
			pairs := make([]string, 0, len(run)-1)
			for i := 1; i < len(run); i++ {
				pairs = append(pairs, string(run[i-1:i+1]))
			}
			out = append(out, pairs)
		}
		run = run[:0]
	}
	for _, r := range s {
		if IsCJK(r) {
			run = append(run, r)
			continue
		}
		flush()
	}
	flush()
	return out
}

// StraddleRatio is how many times as common as a pair each neighbouring
// pair of its run must be for the pair to count as crossing a word
// boundary.
const StraddleRatio = 4

// Straddles marks the pairs of one run (CJKRuns) that cross a word
// boundary, given the number of chunks holding each pair (df, same order):
// a pair that dips well below every neighbouring pair of its run — both
// at least StraddleRatio times as common — joins the end of one word to
// the start of the next (码范 between 页码 and 范围). A dip in the
// frequency of adjacent character pairs is the classic dictionary-free
// word boundary (Sproat and Shih, "A statistical method for finding word
// boundaries in Chinese text", 1990); here the statistics are the
// library's own, so a pair is judged by the books it is matched against.
// Only a dip counts: a pair at either end of a run has a neighbour on one
// side only, and a rare pair there is as often a name's first half (元皇
// of 元皇后, beside the common 皇后) as half of a word; and a pair whose
// neighbours are as rare as itself is left alone: nothing says where its
// words end.
func Straddles(df []int) []bool {
	out := make([]bool, len(df))
	for i := 1; i+1 < len(df); i++ {
		need := StraddleRatio * (df[i] + 1)
		out[i] = df[i-1] >= need && df[i+1] >= need
	}
	return out
}

// Spellings lists the other spellings of a lower-case English word
// between British and American usage: neighbouring / neighboring,
// licence / license, organise / organize, centre / center, catalogue /
// catalog, travelled / traveled, programme / program. A reader writes one,
// a book prints the other, and the two share no term; the caller keeps
// the spellings the books hold. The rules rewrite word endings and the
// -our- / -or- of a stem, so most candidates are no word at all.
func Spellings(term string) []string {
	if len(term) < 4 || !isASCII(term) {
		return nil
	}
	seen := map[string]bool{term: true}
	var out []string
	add := func(s string) {
		if len(s) >= 4 && !seen[s] {
			seen[s] = true
			out = append(out, s)
		}
	}
	for _, p := range spellingPairs {
		for _, d := range [][2]string{{p[0], p[1]}, {p[1], p[0]}} {
			// Every occurrence after the word's first two letters, one at a
			// time: "neighbouring" → "neighboring".
			for i := 2; i+len(d[0]) <= len(term); i++ {
				if term[i:i+len(d[0])] == d[0] {
					add(term[:i] + d[1] + term[i+len(d[0]):])
				}
			}
		}
	}
	for _, p := range spellingEndings {
		for _, d := range [][2]string{{p[0], p[1]}, {p[1], p[0]}} {
			if strings.HasSuffix(term, d[0]) {
				add(strings.TrimSuffix(term, d[0]) + d[1])
			}
		}
	}
	return out
}

// spellingPairs are British / American spellings inside a word.
var spellingPairs = [][2]string{
	{"our", "or"}, {"isat", "izat"}, {"ise", "ize"}, {"isi", "izi"}, {"yse", "yze"}, {"ysi", "yzi"},
	{"lled", "led"}, {"lling", "ling"}, {"ller", "ler"}, {"ogue", "og"}, {"amme", "am"}, {"tred", "tered"},
}

// spellingEndings are British / American word endings.
var spellingEndings = [][2]string{{"tre", "ter"}, {"ence", "ense"}, {"ences", "enses"}}

// TermStart is a term's first two bytes as one number (first byte high; 0
// for a missing byte). Two terms that qa's prefix matching can take for
// one word share it (they are equal, or share their first four letters),
// so a reader of a chunk's terms hands over only the terms whose start is
// among the key terms' (lexical's ChunkSentences).
func TermStart(t string) uint16 {
	switch len(t) {
	case 0:
		return 0
	case 1:
		return uint16(t[0]) << 8
	}
	return uint16(t[0])<<8 | uint16(t[1])
}
