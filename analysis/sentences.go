package analysis

import (
	"strings"
	"unicode"
	"unicode/utf8"
)

// Sentences splits text into sentences: after . ! ? followed by a space,
// after the CJK full stops 。！？ (with any closing quote or bracket), before
// bullets, and at blank lines that do not fall inside a sentence (PDF
// extraction leaves some there). Pieces are trimmed; empty ones dropped.
func Sentences(text string) []string {
	var out []string
	start := 0
	flush := func(end int) {
		if s := strings.TrimSpace(text[start:end]); s != "" {
			out = append(out, s)
		}
		start = end
	}
	for i := 0; i < len(text); {
		r, size := utf8.DecodeRuneInString(text[i:])
		next := i + size
		switch {
		case r == '。' || r == '！' || r == '？' || r == '；':
			for next < len(text) {
				c, sz := utf8.DecodeRuneInString(text[next:])
				if !strings.ContainsRune("”’」』）)\"", c) {
					break
				}
				next += sz
			}
			flush(next)
		case r == '.' || r == '!' || r == '?':
			j := next
			for j < len(text) {
				c, sz := utf8.DecodeRuneInString(text[j:])
				if !strings.ContainsRune("\"')]”’", c) {
					break
				}
				j += sz
			}
			if j == len(text) {
				flush(j)
			} else if c, _ := utf8.DecodeRuneInString(text[j:]); unicode.IsSpace(c) && !(r == '.' && (abbreviation(text[start:i]) || initial(text[start:i], text[j:]) || wrappedURL(text[start:i], text[j:]))) {
				flush(j)
				next = j
			}
		case r == '•' || r == '▪' || r == '◦' || r == '●':
			flush(i)
			start = next
		case r == '\n' && strings.HasPrefix(text[next:], "\n") && !continues(text[start:i], text[next+1:]):
			flush(i)
		}
		i = next
	}
	flush(len(text))
	return out
}

// continues reports whether a blank line sits inside a sentence: the text
// after it starts with a lower-case letter, or the text before it ends
// mid-phrase (a comma, or a lower-case letter not followed by a capital).
func continues(before, after string) bool {
	before = strings.TrimRight(before, " \t\n")
	after = strings.TrimLeft(after, " \t\n")
	if before == "" || after == "" {
		return false
	}
	last, _ := utf8.DecodeLastRuneInString(before)
	first, _ := utf8.DecodeRuneInString(after)
	if IsCJK(last) && IsCJK(first) {
		return true // a page or column break inside a CJK sentence; CJK full stops end sentences
	}
	return unicode.IsLower(first) || last == ',' || (unicode.IsLower(last) && !unicode.IsUpper(first))
}

// abbreviation reports whether before ends with an abbreviation that a
// period follows inside a sentence ("(e.g. Excel)", "cf. Section 3",
// "Fig. 2", "Mr. Field"): a sentence ending there would leave a quote cut
// at "(e.g.".
func abbreviation(before string) bool {
	i := len(before)
	for i > 0 && (before[i-1] == '.' || 'a' <= before[i-1] && before[i-1] <= 'z' || 'A' <= before[i-1] && before[i-1] <= 'Z') {
		i--
	}
	switch before[i:] {
	case "e.g", "i.e", "E.g", "I.e", "cf", "Cf", "vs", "viz", "approx", "resp", "Fig", "Figs", "fig", "Eq", "Eqs", "eq",
		"Mr", "Mrs", "Ms", "Dr", "Prof", "al":
		return true
	}
	return false
}

// initial reports whether a period ends a name's initial ("written by
// Philip A. Nelson", "J. R. Tolkien"): before ends with one capital letter,
// and another initial follows, or the letter comes after a capitalised
// word or an initial and after starts with a capitalised word that is no
// stopword. "… in Appendix A. The next" still
// ends a sentence; the quote no longer stops at "Philip A.".
func initial(before, after string) bool {
	n := len(before)
	if n < 3 || before[n-1] < 'A' || before[n-1] > 'Z' || before[n-2] != ' ' {
		return false
	}
	next := strings.TrimLeft(after, " ")
	if len(next) >= 3 && 'A' <= next[0] && next[0] <= 'Z' && next[1] == '.' && next[2] == ' ' {
		return true // another initial follows: "J. R. Tolkien"
	}
	prev := strings.TrimRight(before[:n-2], " ")
	word := prev[strings.LastIndexByte(prev, ' ')+1:]
	if word == "" || word[0] < 'A' || word[0] > 'Z' {
		return false
	}
	if len(word) == 2 && word[1] != '.' || len(word) > 2 && !isLowerASCII(word[1:]) {
		return false
	}
	end := 0
	for end < len(next) && ('a' <= next[end] && next[end] <= 'z' || 'A' <= next[end] && next[end] <= 'Z') {
		end++
	}
	if end < 2 || next[0] < 'A' || next[0] > 'Z' || !isLowerASCII(next[1:end]) {
		return false
	}
	return !IsStopword(strings.ToLower(next[:end]))
}

func isLowerASCII(s string) bool {
	for i := 0; i < len(s); i++ {
		if s[i] < 'a' || s[i] > 'z' {
			return false
		}
	}
	return s != ""
}

// wrappedURL reports whether a period followed by a space falls inside a
// web address that the PDF wrapped at it ("(https://CRAN. R-project.org/
// package=boot)", "https://CRAN.R-project. org)"): before ends with an
// address (a scheme's "://" or "www."), and after, past one run of spaces
// holding at most one line break, goes on with a piece of an address — a
// host or path part holding a dot, slash or equals sign, or a lower-case
// domain label ("org)"). A sentence that ends on an address and the next
// one, which starts with a word ("… at https://example.org. The next"),
// stay apart; the quote no longer stops at "(https://CRAN.".
func wrappedURL(before, after string) bool {
	tok := before
	if k := strings.LastIndexFunc(before, func(r rune) bool { return unicode.IsSpace(r) || strings.ContainsRune("(<\"“", r) }); k >= 0 {
		_, size := utf8.DecodeRuneInString(before[k:])
		tok = before[k+size:]
	}
	if !strings.Contains(tok, "://") && !strings.HasPrefix(tok, "www.") {
		return false
	}
	rest := strings.TrimLeft(after, " \t\n")
	if gap := after[:len(after)-len(rest)]; strings.Count(gap, "\n") > 1 {
		return false
	}
	next := rest
	if k := strings.IndexAny(rest, " \t\n"); k >= 0 {
		next = rest[:k]
	}
	next = strings.TrimRight(next, ")>]\"'”’,;:.")
	if next == "" {
		return false
	}
	lower := true
	for _, c := range next {
		switch {
		case 'a' <= c && c <= 'z', '0' <= c && c <= '9':
		case 'A' <= c && c <= 'Z':
			lower = false
		case strings.ContainsRune("-._~/?#@!$&+=%", c):
		default:
			return false
		}
	}
	return lower || strings.ContainsAny(next, "./=")
}
