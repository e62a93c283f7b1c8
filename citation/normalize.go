package citation

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// normalized is text reduced to what a quote must match — letters, digits
// and symbols, NFKC-folded (full-width forms, ligatures) and lower-cased —
// with a map from every kept rune back to the bytes of the original text it
// came from, so a match can be reported as offsets into the original.
type normalized struct {
	runes []rune
	start []int // start[i] = byte offset in the original of the rune that produced runes[i]
	end   []int // end[i] = byte offset just after that original rune
}

// normalize drops whitespace and punctuation entirely rather than collapsing
// them: a model re-typing "R, the language" as "R the language", a line
// break inside a sentence, or Chinese text quoted without its full-width
// commas must all still match.
func normalize(s string) normalized {
	n := normalized{}
	for off := 0; off < len(s); {
		r, size := utf8.DecodeRuneInString(s[off:])
		for _, f := range fold(r) {
			if unicode.IsSpace(f) || unicode.IsPunct(f) || unicode.IsControl(f) || unicode.Is(unicode.Mn, f) || f == utf8.RuneError {
				continue
			}
			n.runes = append(n.runes, unicode.ToLower(f))
			n.start = append(n.start, off)
			n.end = append(n.end, off+size)
		}
		off += size
	}
	return n
}

// fold maps one rune through NFKC; ASCII is returned as is to keep the
// common case cheap.
func fold(r rune) []rune {
	if r < utf8.RuneSelf {
		return []rune{r}
	}
	if isQuoteMark(r) {
		return nil
	}
	return []rune(norm.NFKC.String(string(r)))
}

// isQuoteMark reports typographic marks NFKC keeps but models swap freely.
func isQuoteMark(r rune) bool {
	return strings.ContainsRune("‘’‚‛“”„‟«»‹›「」『』〝〞〟", r)
}

// index finds needle in hay and returns the rune index of the first match.
func (n normalized) index(needle []rune, from int) int {
	if len(needle) == 0 {
		return -1
	}
	for i := from; i+len(needle) <= len(n.runes); i++ {
		if n.runes[i] != needle[0] {
			continue
		}
		ok := true
		for j := 1; j < len(needle); j++ {
			if n.runes[i+j] != needle[j] {
				ok = false
				break
			}
		}
		if ok {
			return i
		}
	}
	return -1
}
