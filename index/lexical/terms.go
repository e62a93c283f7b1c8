package lexical

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Terms splits text into the terms the index stores and queries match.
// Words of alphabetic scripts are lowercased and lightly stemmed (English
// plurals), so "Vectors" matches "vector". Scripts written without spaces
// (Chinese, Japanese kana, Korean) yield every character and every pair of
// adjacent characters: unigrams keep recall for one-character words, bigrams
// give the precision of two-character words without a dictionary. Terms is
// exported because rerankers and the builtin embedder segment text the same
// way. Non-ASCII text is NFKC-normalised first, so ligatures from PDFs
// ("ﬁle") and full-width forms in CJK text ("ＰＤＦ", "２０２４") match what
// people type.
func Terms(s string) []string {
	if !isASCII(s) {
		// Invalid bytes become separators first: left in place they can hide
		// the next character from normalisation ("\xf1ĳ" kept the ĳ ligature
		// that "ĳ" alone folds to "ij"), and a term must match itself.
		s = norm.NFKC.String(strings.ToValidUTF8(s, " "))
	}
	var (
		out  []string
		word []byte
		prev rune // previous CJK rune in the current run, 0 outside a run
	)
	flush := func() {
		if len(word) > 0 {
			out = append(out, stem(string(word)))
			word = word[:0]
		}
	}
	for _, r := range s {
		if r < 0x80 { // ASCII fast path: most text in most books
			prev = 0
			switch {
			case 'a' <= r && r <= 'z' || '0' <= r && r <= '9':
				word = append(word, byte(r))
			case 'A' <= r && r <= 'Z':
				word = append(word, byte(r+'a'-'A'))
			default:
				flush()
			}
			continue
		}
		switch {
		case isCJK(r):
			flush()
			out = append(out, string(r))
			if prev != 0 {
				out = append(out, string([]rune{prev, r}))
			}
			prev = r
		case unicode.IsLetter(r) || unicode.IsDigit(r) || unicode.Is(unicode.Mn, r):
			prev = 0
			word = utf8.AppendRune(word, unicode.ToLower(r))
		default:
			prev = 0
			flush()
		}
	}
	flush()
	return out
}

// isCJK reports whether r belongs to a script written without spaces
// between words.
func isCJK(r rune) bool {
	return r >= 0x1100 && unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul)
}

// stem strips English plural endings from ASCII words; it is deliberately
// light so it never merges unrelated words.
func stem(w string) string {
	if len(w) < 4 || !isASCII(w) {
		return w
	}
	switch {
	case strings.HasSuffix(w, "ies") && len(w) > 4:
		return w[:len(w)-3] + "y"
	case strings.HasSuffix(w, "sses"):
		return w[:len(w)-2]
	case strings.HasSuffix(w, "s") && !strings.HasSuffix(w, "ss") && !strings.HasSuffix(w, "us") && !strings.HasSuffix(w, "is"):
		return w[:len(w)-1]
	}
	return w
}

func isASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] >= 0x80 {
			return false
		}
	}
	return true
}

// isStopword reports terms dropped from queries (not from the index) when
// other terms remain: they match nearly every chunk, add almost nothing to
// BM25 and make the search visit every row.
func isStopword(t string) bool {
	switch t {
	case "a", "an", "and", "are", "as", "at", "be", "by", "can", "do", "doe", "for", "from",
		"how", "i", "if", "in", "is", "it", "not", "of", "on", "or", "that", "the", "their",
		"there", "these", "they", "this", "to", "wa", "we", "what", "when", "where", "which",
		"who", "why", "will", "with", "you",
		"s", "t", "d", "ll", "re", "ve", // left of contractions and possessives
		"的", "是", "了", "在", "和", "有", "我", "他", "这", "也":
		return true
	}
	return false
}
