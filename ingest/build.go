package ingest

import (
	"slices"
	"strings"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

// builder accumulates a Document in reading order. Parsers announce headings
// as they meet them and hand over raw paragraph text; the builder cleans it
// and opens a new Section at every heading, even one whose path repeats.
type builder struct {
	doc   *Document
	path  []string
	fresh bool // a heading was announced and no block has landed under it yet

	// Reflowable books with a page list (EPUB page-list) still have print
	// pages: page is the one the next text starts on, and marks are the
	// pages whose starts sit, as pageMark runes, inside the pending text.
	page  int
	marks []int
}

// pageMark stands in the raw text of a paragraph where a print page begins;
// it is a private-use character that Clean leaves alone.
const pageMark = '\uE000'

// pageBreak records that print page p begins at the current point of the
// text handed to the next add, or at the next block when none is pending.
func (b *builder) pageBreak(p int, pending bool) {
	if pending {
		b.marks = append(b.marks, p)
		return
	}
	b.page = p
}

func newBuilder(format citebook.Format) *builder {
	return &builder{doc: &Document{Format: format}, fresh: true}
}

// heading makes path the heading path of the blocks that follow.
func (b *builder) heading(path []string) {
	b.path = slices.Clone(path)
	b.fresh = true
}

// add cleans text and appends it as a block; empty text is dropped.
func (b *builder) add(text string) { b.addClean(parsing.Clean(text)) }

// addPre appends preformatted text (code), keeping its indentation.
func (b *builder) addPre(text string) { b.addClean(parsing.CleanPreformatted(text)) }

// cleanTitle normalizes a heading or title to a single line.
func cleanTitle(s string) string { return parsing.Clean(strings.Join(strings.Fields(s), " ")) }

func (b *builder) addClean(text string) {
	var spans []citebook.PageSpan
	if b.doc.Pages > 0 {
		text, spans = b.takeMarks(text)
	}
	if strings.TrimSpace(text) == "" {
		return
	}
	if b.fresh || len(b.doc.Sections) == 0 {
		path := b.path
		if len(path) == 0 {
			path = []string{b.doc.Untitled()}
		}
		b.doc.Sections = append(b.doc.Sections, Section{HeadingPath: slices.Clone(path)})
		b.fresh = false
	}
	s := &b.doc.Sections[len(b.doc.Sections)-1]
	s.Blocks = append(s.Blocks, Block{Text: text, Pages: spans})
}

// takeMarks removes page marks from a cleaned paragraph and returns the
// page starts inside it, the first at offset 0 when the page is known.
func (b *builder) takeMarks(text string) (string, []citebook.PageSpan) {
	var spans []citebook.PageSpan
	add := func(off int) {
		if n := len(spans); n > 0 && spans[n-1].Offset == off {
			spans = spans[:n-1]
		}
		if b.page > 0 {
			spans = append(spans, citebook.PageSpan{Offset: off, Page: b.page, Printed: b.doc.Label(b.page)})
		}
	}
	add(0)
	if !strings.ContainsRune(text, pageMark) {
		b.marks = nil
		return text, spans
	}
	var sb strings.Builder
	skipSpace := false
	for _, r := range text {
		if r == pageMark {
			if len(b.marks) > 0 {
				b.page, b.marks = b.marks[0], b.marks[1:]
			}
			// "word <mark> word" must not leave two spaces behind.
			skipSpace = sb.Len() == 0 || strings.HasSuffix(sb.String(), " ")
			add(sb.Len())
			continue
		}
		if skipSpace && r == ' ' {
			skipSpace = false
			continue
		}
		skipSpace = false
		sb.WriteRune(r)
	}
	b.marks = nil
	out := strings.TrimRight(sb.String(), " ")
	// A page that starts after the last character starts at the next block.
	for len(spans) > 0 && spans[len(spans)-1].Offset >= len(out) && len(out) > 0 {
		spans = spans[:len(spans)-1]
	}
	return out, spans
}

// finish fills the language from the content, falling back to the declared
// one, and reports an empty document as invalid input.
func (b *builder) finish(declared string) (*Document, error) {
	doc := b.doc
	doc.Language = detectLanguage(sampleText(doc), declared)
	if len(doc.Sections) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "%s file has no text", doc.Format)
	}
	return doc, nil
}

// sampleText returns up to ~64 KiB of the document's text for language
// detection.
func sampleText(doc *Document) string {
	var sb strings.Builder
	for _, s := range doc.Sections {
		for _, bl := range s.Blocks {
			if sb.Len() > 64<<10 {
				return sb.String()
			}
			sb.WriteString(bl.Text)
			sb.WriteByte('\n')
		}
	}
	return sb.String()
}

// detectLanguage guesses the language from the script of the letters, since
// declared metadata is often wrong (an EPUB that says "en" but is Chinese).
// Only scripts that change how text is split and searched are told apart;
// otherwise the declared tag, normalised, wins.
func detectLanguage(text, declared string) string {
	var letters, han, kana, hangul int
	for _, r := range text {
		switch {
		case unicode.Is(unicode.Han, r):
			han++
		case unicode.In(r, unicode.Hiragana, unicode.Katakana):
			kana++
		case unicode.Is(unicode.Hangul, r):
			hangul++
		case !unicode.IsLetter(r):
			continue
		}
		letters++
	}
	if letters == 0 {
		return normalizeLang(declared)
	}
	switch {
	case kana*10 > letters:
		return "ja"
	case hangul*5 > letters:
		return "ko"
	case han*5 > letters:
		return "zh"
	}
	lang := normalizeLang(declared)
	if lang == "" || lang == "zh" || lang == "ja" || lang == "ko" {
		return "en"
	}
	return lang
}

// normalizeLang reduces a declared tag ("zh_CN", "en-US") to its primary
// language subtag in lower case.
func normalizeLang(tag string) string {
	tag = strings.ToLower(strings.TrimSpace(tag))
	if i := strings.IndexAny(tag, "-_"); i >= 0 {
		tag = tag[:i]
	}
	if len(tag) < 2 || len(tag) > 3 {
		return ""
	}
	for _, r := range tag {
		if r < 'a' || r > 'z' {
			return ""
		}
	}
	return tag
}
