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
			} else if c, _ := utf8.DecodeRuneInString(text[j:]); unicode.IsSpace(c) && !(r == '.' && abbreviation(text[start:i])) {
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
