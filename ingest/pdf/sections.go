package pdf

import (
	"math"
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

// normTitle reduces a heading to lower-case letters and digits, so outline
// titles match headings set in capitals, with other dashes or spacing.
func normTitle(s string) string {
	var sb strings.Builder
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			sb.WriteRune(r)
		}
	}
	return sb.String()
}

var chapterLabel = regexp.MustCompile(`(?i)^(chapter|part|appendix|section|lecture|book)\s+[0-9ivxlcdm]+\.?$|^第.{1,6}[章部篇节]$`)

// block renders a document paragraph as a cleaned Block whose page spans
// point at the offsets where each page's part begins.
func (u *pdfUnit) block(doc *parsing.Document) parsing.Block {
	var sb strings.Builder
	var spans []citebook.PageSpan
	for _, p := range u.parts {
		t := parsing.Clean(p.text())
		if t == "" {
			continue
		}
		if sb.Len() > 0 {
			prev := sb.String()
			trimmed, sep := lineJoin(prev, t, p.mono)
			if len(trimmed) < len(prev) {
				sb.Reset()
				sb.WriteString(trimmed)
			}
			sb.WriteString(sep)
		}
		if len(spans) == 0 || spans[len(spans)-1].Page != p.page {
			spans = append(spans, citebook.PageSpan{Offset: sb.Len(), Page: p.page, Printed: doc.Label(p.page)})
		}
		sb.WriteString(t)
	}
	text := sb.String()
	b := parsing.Block{Text: text, Pages: spans, Geometry: alignGeometry(text, u.unitWords())}
	if p := u.parts[0]; len(u.parts) == 1 {
		if n := p.headerRows(); n > 0 {
			// Cleaning may change a line; a header that is no longer the
			// text's prefix is left unmarked rather than marked wrong.
			if head := parsing.Clean(strings.Join(p.lines[:n], "\n")); head != "" && strings.HasPrefix(text, head) {
				b.Header = len(head)
			}
		}
	}
	return b
}

// sectionsFromOutline cuts the paragraph stream at each bookmark: on the
// bookmark's page the heading line is looked up so a section can start
// mid-page; when it cannot be found the section starts with the page.
// Matched heading paragraphs (and a "Chapter N" line set just above) are
// dropped from the text since they are the section's heading path.
func sectionsFromOutline(units []*pdfUnit, items []pdfOutlineItem, doc *parsing.Document) []parsing.Section {
	type cut struct {
		at   int
		path []string
	}
	drop := map[int]bool{}
	var cuts []cut
	cursor := 0
	for _, it := range items {
		if it.Page == 0 {
			continue
		}
		nt := normTitle(it.Title)
		first := -1
		match := -1
		for k := cursor; k < len(units); k++ {
			p := units[k].parts[0].page
			if p < it.Page {
				continue
			}
			if p > it.Page {
				break
			}
			if first < 0 {
				first = k
			}
			if match < 0 && len(units[k].parts) == 1 && nt != "" {
				nu := normTitle(units[k].parts[0].text())
				if nu == nt || len(nt) >= 3 && len(nu) <= len(nt)+12 && (strings.HasSuffix(nu, nt) || strings.HasPrefix(nu, nt)) {
					match = k
				}
			}
		}
		at := first
		if match >= 0 {
			at = match
			drop[match] = true
			if match-1 >= cursor && units[match-1].parts[0].page == it.Page &&
				chapterLabel.MatchString(strings.TrimSpace(units[match-1].parts[0].text())) {
				at = match - 1
				drop[match-1] = true
			}
		}
		if at < 0 {
			// Nothing starts on the bookmark's page: begin at the next paragraph.
			at = cursor
			for at < len(units) && units[at].parts[0].page < it.Page {
				at++
			}
		}
		cuts = append(cuts, cut{at: at, path: it.path})
		cursor = at
	}
	var sections []parsing.Section
	emit := func(path []string, from, to int) {
		var blocks []parsing.Block
		for k := from; k < to; k++ {
			if drop[k] {
				continue
			}
			if b := units[k].block(doc); b.Text != "" {
				blocks = append(blocks, b)
			}
		}
		if len(blocks) > 0 {
			sections = append(sections, parsing.Section{HeadingPath: append([]string(nil), path...), Blocks: blocks})
		}
	}
	front := len(units)
	if len(cuts) > 0 {
		front = cuts[0].at
	}
	emit([]string{doc.Untitled()}, 0, front)
	for i, c := range cuts {
		end := len(units)
		if i+1 < len(cuts) {
			end = cuts[i+1].at
		}
		emit(c.path, c.at, end)
	}
	return sections
}

var numberedHeading = regexp.MustCompile(`^(\d{1,2}(?:\.\d{1,2}){0,4})\.?\s+(\S.*)$`)

// sectionsFromHeadings builds sections for PDFs without bookmarks from
// headings in the text: numbered lines ("2.2 Format of the device tree
// blob") set larger or bolder than the body nest by their numbering; other
// short, larger or bold lines start top-level sections.
//
// The headings that open a page (a financial statement's "3M Company and
// Subsidiaries / Consolidated Statement of Cash Flows / Years ended December
// 31") are the page's title: unnumbered headings further down the page nest
// under it (on later pages they stand alone again), so every chunk of the statement
// carries its name. Headings that follow one another with no text between
// nest too, rather than the second replacing the first.
func sectionsFromHeadings(units []*pdfUnit, body float64, doc *parsing.Document) []parsing.Section {
	var sections []parsing.Section
	path := []string{doc.Untitled()}
	var title []string // the current page title
	titlePage := 0     // the page it opens
	numbered := false
	nTitle := normTitle(doc.Title)
	cur := -1
	seenBody := false // unnumbered headings only count once body text began
	lastPage := 0     // the page the previous unit ended on
	titleRun := false // the previous unit was part of a title or caption
	runTitle := false // that run is the page's title, not a subtitle
	for k, u := range units {
		pageTop := u.parts[0].page != lastPage
		if u.parts[0].page != titlePage {
			title = nil
		}
		lastPage = u.parts[len(u.parts)-1].page
		inRun := titleRun
		titleRun = false
		if len(u.parts) == 1 {
			p := u.parts[0]
			t := strings.Join(strings.Fields(p.text()), " ")
			if normTitle(t) == nTitle && nTitle != "" && len(sections) == 0 && p.size > body*1.1 {
				continue
			}
			if seenBody && !p.table {
				caption := captionRun(units, k)
				if pageTop || inRun || caption {
					if lines := titleLines(p, body, caption); lines != nil {
						switch {
						case inRun:
							lines = append(slices.Clone(path), lines...)
						case !pageTop && !styled(p, body):
							// A plain caption further down the page is
							// the page's subtitle, not a new title.
							runTitle = false
							lines = append(slices.Clone(title), lines...)
						default:
							runTitle = true
						}
						path = lines[:min(len(lines), len(title)+maxTitleLines)]
						if runTitle {
							path = path[:min(len(path), maxTitleLines)]
							title = slices.Clone(path)
							titlePage = u.parts[0].page
						}
						numbered = false
						cur = -1
						titleRun = true
						continue
					}
				}
			}
			if lvl, ok := headingLevel(p, t, body); ok && (lvl > 0 || seenBody) {
				switch {
				case lvl > 0 && numbered:
					if lvl-1 < len(path) {
						path = path[:lvl-1]
					}
					path = append(path, t)
				case lvl == 0 && cur < 0 && len(path) > len(title) && len(path) < maxTitleLines+2:
					// Right after another heading: a subheading.
					path = append(path, t)
				default:
					path = append(slices.Clone(title), t)
				}
				numbered = lvl > 0
				cur = -1
				continue
			}
		}
		b := u.block(doc)
		if b.Text == "" {
			continue
		}
		if p := u.parts[0]; p.nlines >= 3 && math.Abs(p.size-body) < 0.5 {
			seenBody = true
		}
		if cur < 0 {
			sections = append(sections, parsing.Section{HeadingPath: append([]string(nil), path...)})
			cur = len(sections) - 1
		}
		sections[cur].Blocks = append(sections[cur].Blocks, b)
	}
	return sections
}

// maxTitleLines bounds a page title, so a page of bold lines does not turn
// into one long heading path.
const maxTitleLines = 4

// titleLines returns the lines of a paragraph set as a title, or nil: a few
// short lines that are words and end no sentence, set bold or larger than the
// body — or in any type when they are a table's caption.
func titleLines(p *pdfPara, body float64, caption bool) []string {
	if p.table || p.mono || p.nlines > maxTitleLines || numberedHeading.MatchString(p.lines[0]) {
		// Numbered headings nest by their numbers instead.
		return nil
	}
	if !caption && !styled(p, body) {
		return nil
	}
	var out []string
	for _, l := range p.lines {
		t := strings.Join(strings.Fields(l), " ")
		if !titleLine(t) {
			return nil
		}
		out = append(out, t)
	}
	return out
}

// styled reports whether a paragraph is set apart from the body: bold, or
// larger.
func styled(p *pdfPara, body float64) bool {
	return p.bold && p.size >= body*0.8 || p.size >= body*1.15
}

// titleLine reports whether one line could belong to a title: short, words,
// opening with a capital, digit or bracket, and ending no sentence (a closing
// abbreviation such as "INC." aside).
func titleLine(t string) bool {
	if len(t) > 100 || !wordy(t) || strings.HasSuffix(t, ":") {
		return false
	}
	if endsSentence(t) && !strings.HasSuffix(t, "?") {
		f := strings.Fields(t)
		if !strings.HasSuffix(t, ".") || len(strings.Trim(f[len(f)-1], ".,")) > 4 {
			return false
		}
	}
	r, _ := utf8.DecodeRuneInString(t)
	return unicode.IsUpper(r) || unicode.IsDigit(r) || isCJK(r) || r == '('
}

// captionRun reports whether units[k] opens a run of short paragraphs, a few
// lines and at least three words in all, that a table follows directly on the
// same page: the table's caption, not the stacked words of a column header.
func captionRun(units []*pdfUnit, k int) bool {
	page := units[k].parts[0].page
	lines, words := 0, 0
	for j := k; j < len(units); j++ {
		u := units[j]
		if len(u.parts) != 1 || u.parts[0].page != page {
			return false
		}
		p := u.parts[0]
		if p.table {
			return j > k && words >= 3
		}
		lines += p.nlines
		words += len(strings.Fields(p.text()))
		if lines > maxTitleLines || p.mono || len(p.text()) > 200 {
			return false
		}
	}
	return false
}

// headingTail lists words a heading does not end with; a bold line ending in
// one is the start of a sentence, not a title.
var headingTail = map[string]bool{"a": true, "an": true, "and": true, "are": true, "as": true, "at": true, "by": true,
	"for": true, "from": true, "in": true, "is": true, "of": true, "on": true, "or": true, "the": true, "to": true, "with": true}

// wordy reports whether t holds a real word (three letters in a row, or any
// CJK character), which figure labels such as "B0 B5" lack.
func wordy(t string) bool {
	run := 0
	for _, r := range t {
		switch {
		case isCJK(r):
			return true
		case unicode.IsLetter(r):
			run++
			if run >= 3 {
				return true
			}
		default:
			run = 0
		}
	}
	return false
}

// headingLevel recognises a heading paragraph: the numbering depth for
// numbered headings, 0 for an unnumbered one.
func headingLevel(p *pdfPara, t string, body float64) (int, bool) {
	if len(t) > 100 || p.nlines > 2 || t == "" || p.mono || p.table || p.size < body*0.95 || !wordy(t) {
		return 0, false
	}
	if strings.HasSuffix(t, ":") || endsSentence(t) && !strings.HasSuffix(t, "?") {
		return 0, false
	}
	words := strings.Fields(t)
	if headingTail[strings.ToLower(words[len(words)-1])] {
		return 0, false
	}
	if m := numberedHeading.FindStringSubmatch(t); m != nil && (p.size > body*1.05 || p.bold) {
		r := []rune(m[2])[0]
		if unicode.IsUpper(r) || isCJK(r) || unicode.IsLetter(r) && p.size > body*1.1 {
			return strings.Count(m[1], ".") + 1, true
		}
	}
	first := []rune(t)[0]
	if !(unicode.IsUpper(first) || isCJK(first)) {
		return 0, false
	}
	if p.size >= body*1.15 || p.bold && p.nlines == 1 && len(t) <= 60 {
		return 0, true
	}
	return 0, false
}
