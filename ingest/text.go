package ingest

import (
	"bytes"
	"context"
	"regexp"
	"strings"
	"unicode"
	"unicode/utf8"

	"golang.org/x/text/encoding/charmap"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

// chapterLine matches the heading lines plain-text books use for their
// chapters ("CHAPTER 1. Loomings.", "Chapter XII", "BOOK II", "Epilogue").
var chapterLine = regexp.MustCompile(`^(?:(?:CHAPTER|Chapter|BOOK|Book|PART|Part)\s+(?:[0-9]+|[IVXLCDM]+)\b.*|(?:EPILOGUE|Epilogue|PROLOGUE|Prologue)\.?)$`)

// ParseText reads a plain-text book. Project Gutenberg licence headers and
// footers are dropped (they are not the book), chapter heading lines open
// chapters, short all-capital headings before the first chapter (ETYMOLOGY,
// EXTRACTS) open front-matter sections, and paragraphs are split on blank
// lines with their lines joined.
func ParseText(ctx context.Context, data []byte) (doc *Document, err error) {
	defer parsing.Guard(citebook.FormatText, &err)
	if len(data) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "empty file")
	}
	data = decodeBOM(data)             // UTF-16 files with a byte-order mark
	if bytes.IndexByte(data, 0) >= 0 { // text never holds NUL; UTF-16 without a BOM and binaries do
		return nil, citebook.Errorf(citebook.EINVALID, "binary file, not text (it contains NUL bytes)")
	}
	if !utf8.Valid(data) {
		// Older plain-text books are often Latin-1 / Windows-1252.
		if !looksText(data) {
			return nil, citebook.Errorf(citebook.EINVALID, "binary file, not text")
		}
		if dec, err := charmap.Windows1252.NewDecoder().Bytes(data); err == nil {
			data = dec
		}
	}
	text := strings.ToValidUTF8(string(data), "\uFFFD")
	text = strings.TrimPrefix(text, "\uFEFF")
	text = strings.ReplaceAll(text, "\r\n", "\n")
	text = strings.ReplaceAll(text, "\r", "\n")
	lines := strings.Split(text, "\n")

	b := newBuilder(citebook.FormatText)
	lines, title, lang := stripGutenberg(lines)
	if title == "" {
		title = firstLineTitle(lines)
	}
	b.doc.Title = title

	seenChapter := false
	blank := 2 // blank lines before the current paragraph; the start counts as a break
	var para []string
	flush := func() {
		if len(para) == 0 {
			return
		}
		joined := parsing.Clean(joinLines(para))
		switch {
		case len(para) <= 3 && len(joined) <= 200 && chapterLine.MatchString(para[0]):
			seenChapter = true
			b.heading([]string{joined})
			b.doc.Outline = append(b.doc.Outline, OutlineEntry{Title: joined})
		case len(para) == 1 && !seenChapter && blank >= 2 && frontHeading(joined):
			b.heading([]string{joined})
			b.doc.Outline = append(b.doc.Outline, OutlineEntry{Title: joined})
		}
		b.addClean(joined)
		para, blank = para[:0], 0
	}
	for i, raw := range lines {
		if i%4096 == 0 {
			if err := parsing.CheckCtx(ctx); err != nil {
				return nil, err
			}
		}
		line := strings.TrimSpace(raw)
		if line == "" {
			flush()
			blank++
			continue
		}
		para = append(para, line)
	}
	flush()
	return b.finish(lang)
}

// joinLines joins the lines of a paragraph with spaces, except after a
// hyphen or dash ("royal-" / "mast", "precisely--" / "having"): plain-text
// books are not hyphenated for layout, so a line-end hyphen is part of the
// text and the words around it belong together.
func joinLines(lines []string) string {
	var sb strings.Builder
	for i, l := range lines {
		if i > 0 {
			prev := lines[i-1]
			if !(strings.HasSuffix(prev, "-") && len(prev) > 1 && prev[len(prev)-2] != ' ') {
				sb.WriteByte(' ')
			}
		}
		sb.WriteString(l)
	}
	return sb.String()
}

// firstLineTitle takes the first paragraph as the title when it is a single
// short line, as plain-text books usually open.
func firstLineTitle(lines []string) string {
	for i, l := range lines {
		l = strings.TrimSpace(l)
		if l == "" {
			continue
		}
		if (i+1 == len(lines) || strings.TrimSpace(lines[i+1]) == "") && utf8.RuneCountInString(l) <= 80 {
			return cleanTitle(l)
		}
		return ""
	}
	return ""
}

// looksText accepts bytes that are mostly printable even when not valid
// UTF-8 (Latin-1 files); binary data is refused.
func looksText(data []byte) bool {
	n := min(len(data), 8192)
	bad := 0
	for _, c := range data[:n] {
		if c == 0 || (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f') {
			bad++
		}
	}
	return bad*100 < n
}

// frontHeading reports a short line whose first word is in capitals
// ("ETYMOLOGY.", "EXTRACTS (Supplied by …)."), how plain-text front matter
// marks its parts.
func frontHeading(line string) bool {
	if utf8.RuneCountInString(line) > 60 {
		return false
	}
	word, _, _ := strings.Cut(line, " ")
	word = strings.TrimRight(word, ".,:;")
	if utf8.RuneCountInString(word) < 3 {
		return false
	}
	for _, r := range word {
		if !unicode.IsUpper(r) {
			return false
		}
	}
	return true
}

// stripGutenberg removes a Project Gutenberg licence header (through the
// "*** START OF" line) and footer (from "*** END OF"), returning the title
// and language the header declares.
func stripGutenberg(lines []string) (body []string, title, lang string) {
	start, end := -1, len(lines)
	for i, l := range lines {
		l = strings.TrimSpace(l)
		switch {
		case start < 0 && isGutenbergMark(l, "START"):
			start = i
		case start >= 0 && isGutenbergMark(l, "END"):
			end = i
		}
		if end < len(lines) {
			break
		}
	}
	if start < 0 {
		return lines, "", ""
	}
	for _, l := range lines[:start] {
		l = strings.TrimSpace(l)
		if v, ok := strings.CutPrefix(l, "Title:"); ok && title == "" {
			title = cleanTitle(v)
		} else if v, ok := strings.CutPrefix(l, "Language:"); ok && lang == "" {
			lang = languageTag(strings.TrimSpace(v))
		}
	}
	return lines[start+1 : end], title, lang
}

// isGutenbergMark matches "*** START OF THIS PROJECT GUTENBERG EBOOK …" and
// its END counterpart in their historical spellings.
func isGutenbergMark(line, word string) bool {
	if !strings.HasPrefix(line, "***") {
		return false
	}
	rest := strings.ToUpper(strings.TrimLeft(line, "* "))
	return strings.HasPrefix(rest, word+" OF") && strings.Contains(rest, "GUTENBERG")
}

// languageTag maps a language name from a Gutenberg header to its tag.
func languageTag(name string) string {
	switch strings.ToLower(name) {
	case "english":
		return "en"
	case "chinese":
		return "zh"
	case "french":
		return "fr"
	case "german":
		return "de"
	case "spanish":
		return "es"
	case "italian":
		return "it"
	case "japanese":
		return "ja"
	}
	return ""
}
