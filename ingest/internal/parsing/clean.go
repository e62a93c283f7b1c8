package parsing

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/unicode/norm"
)

// Clean normalizes extracted text so the same book always yields the same
// bytes: chunk IDs hash the text, citations quote it and offsets index into
// it, so stray BOMs, CRLFs, odd spaces and line-break hyphenation from the
// source must not leak through. It is idempotent.
func Clean(s string) string {
	if s == "" {
		return ""
	}
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = norm.NFC.String(s)

	var b strings.Builder
	b.Grow(len(s))
	space := false // a space is pending inside the current line
	for _, r := range s {
		switch {
		case r == '\n':
			space = false
			b.WriteByte('\n')
			continue
		case r == utf8.RuneError, r == '\uFEFF', r == '\u200B', r == '\u00AD', r == '\u2060':
			// BOM, zero-width space, soft hyphen, word joiner: invisible in print.
			continue
		case r == '\t' || unicode.IsSpace(r) || unicode.Is(unicode.Zs, r):
			space = true
			continue
		case unicode.IsControl(r) || unicode.Is(unicode.Cf, r) && r != '\u200D' && r != '\u200C':
			continue
		}
		if space {
			if b.Len() > 0 && !endsLine(b.String()) {
				b.WriteByte(' ')
			}
			space = false
		}
		b.WriteRune(r)
	}
	lines := strings.Split(b.String(), "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	lines = joinHyphenated(lines)

	out := make([]string, 0, len(lines))
	blank := 0
	for _, l := range lines {
		if l == "" {
			blank++
			if blank > 1 {
				continue
			}
		} else {
			blank = 0
		}
		out = append(out, l)
	}
	for len(out) > 0 && out[0] == "" {
		out = out[1:]
	}
	for len(out) > 0 && out[len(out)-1] == "" {
		out = out[:len(out)-1]
	}
	return strings.Join(out, "\n")
}

// CleanPreformatted normalizes code and other preformatted text, where
// indentation and line breaks carry meaning: only newlines, invisible and
// control characters, trailing spaces and Unicode composition are touched.
func CleanPreformatted(s string) string {
	s = strings.ReplaceAll(s, "\r\n", "\n")
	s = strings.ReplaceAll(s, "\r", "\n")
	s = norm.NFC.String(s)
	s = strings.Map(func(r rune) rune {
		switch {
		case r == '\n', r == '\t':
			return r
		case unicode.Is(unicode.Zs, r):
			return ' '
		case r == utf8.RuneError, r == '\uFEFF', unicode.IsControl(r):
			return -1
		}
		return r
	}, s)
	lines := strings.Split(s, "\n")
	for i, l := range lines {
		lines[i] = strings.TrimRight(l, " ")
	}
	for len(lines) > 0 && lines[0] == "" {
		lines = lines[1:]
	}
	for len(lines) > 0 && lines[len(lines)-1] == "" {
		lines = lines[:len(lines)-1]
	}
	return strings.Join(lines, "\n")
}

// endsLine reports whether the builder's text ends at the start of a line,
// where a pending space would only be indentation.
func endsLine(s string) bool { return s[len(s)-1] == '\n' }

// joinHyphenated rejoins a word a typesetter broke across lines ("exam-" /
// "ple") when the next line continues in lower case; a hyphen before an
// upper-case or non-letter line is kept as written. The rest of the next line
// stays on its own line so line structure survives.
func joinHyphenated(in []string) []string {
	lines := append([]string(nil), in...)
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		l := lines[i]
		for i+1 < len(lines) && hyphenBreak(l, lines[i+1]) {
			word, rest, _ := strings.Cut(lines[i+1], " ")
			l = l[:len(l)-1] + word
			if rest != "" {
				lines[i+1] = rest
				break
			}
			i++
		}
		out = append(out, l)
	}
	return out
}

// hyphenBreak reports whether line ends in a letter followed by a hyphen and
// next starts with a lower-case letter.
func hyphenBreak(line, next string) bool {
	if len(line) < 2 || line[len(line)-1] != '-' || next == "" {
		return false
	}
	prev, _ := utf8.DecodeLastRuneInString(line[:len(line)-1])
	first, _ := utf8.DecodeRuneInString(next)
	return unicode.IsLetter(prev) && unicode.IsLower(first)
}
