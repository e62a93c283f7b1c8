package pdf

import (
	"math"
	"regexp"
	"sort"
	"strconv"
	"strings"
	"unicode"
	"unicode/utf8"
)

// pdfEdge is the top-most or bottom-most text of a page: every line on that
// baseline, where running heads, feet and folios live.
type pdfEdge struct {
	idx  []int
	y    float64
	text string
	key  string
}

var (
	digitsRe = regexp.MustCompile(`\d+`)
	romanTok = regexp.MustCompile(`(?i)\b[ivxlcdm]{1,7}\b`)
)

// runningKey masks what changes from page to page in a running head (the
// folio, chapter numbers) so repeats can be counted.
func runningKey(text string) string {
	k := strings.ToLower(strings.Join(strings.Fields(text), " "))
	k = digitsRe.ReplaceAllString(k, "#")
	return romanTok.ReplaceAllStringFunc(k, func(s string) string {
		if fromRoman(s) > 0 {
			return "#"
		}
		return s
	})
}

func pageEdge(lines []pdfLine, top bool) (pdfEdge, bool) {
	if len(lines) == 0 {
		return pdfEdge{}, false
	}
	ext := lines[0].y
	for _, l := range lines {
		if top && l.y > ext || !top && l.y < ext {
			ext = l.y
		}
	}
	var e pdfEdge
	e.y = ext
	for i, l := range lines {
		if math.Abs(l.y-ext) <= 1.5 {
			e.idx = append(e.idx, i)
		}
	}
	sort.Slice(e.idx, func(a, b int) bool { return lines[e.idx[a]].x0 < lines[e.idx[b]].x0 })
	parts := make([]string, len(e.idx))
	for i, k := range e.idx {
		parts[i] = lines[k].text
	}
	e.text = strings.Join(parts, " ")
	e.key = runningKey(e.text)
	return e, true
}

// bandKey buckets a baseline height so repeats are counted only where a
// running head sits in the same place on every page.
func bandKey(y float64) string { return "@" + strconv.Itoa(int(math.Round(y/4))) }

// stripRunning removes running headers, footers and folios from every page
// and returns the folio found on each page ("" when none), which printed page
// labels are derived from when the PDF declares none. A page edge is running
// matter when it is only a page number, when the same text (numbers masked)
// recurs on at least three pages, or when it carries a page number at the
// height where the other pages' running heads sit. The only text of a page
// is kept unless it is a bare page number.
func stripRunning(pageLines [][]pdfLine) []string {
	folios := make([]string, len(pageLines))
	for _, top := range []bool{true, false} {
		edges := make([]pdfEdge, len(pageLines))
		has := make([]bool, len(pageLines))
		keys := map[string]int{}
		band := map[int]int{}
		for i, lines := range pageLines {
			edges[i], has[i] = pageEdge(lines, top)
			if has[i] {
				keys[edges[i].key+bandKey(edges[i].y)]++
				band[int(math.Round(edges[i].y/2))]++
			}
		}
		bandY, bandN := 0, 0
		for y, c := range band {
			// Ties go to the band of smaller y, not to map order: the same PDF
			// must give the same pages every time it is indexed.
			if c > bandN || c == bandN && y < bandY {
				bandY, bandN = y, c
			}
		}
		for i, e := range edges {
			if !has[i] {
				continue
			}
			f := folio(e.text)
			lone := f != "" && (folioPlain.MatchString(strings.TrimSpace(e.text)) || folioOf.MatchString(strings.TrimSpace(e.text)))
			repeated := keys[e.key+bandKey(e.y)] >= 3 && len(e.text) <= 150 && strings.ContainsFunc(e.key, unicode.IsLetter)
			inBand := f != "" && len(e.text) <= 80 && bandN >= 3 && bandN*10 >= len(pageLines)*3 &&
				math.Abs(e.y-float64(bandY)*2) <= 2.5
			if !(lone || repeated || inBand) {
				continue
			}
			// A page whose only text is this edge holds body text, not a
			// running head (one line of text per page): only a bare page
			// number is dropped there.
			if len(e.idx) == len(pageLines[i]) && !(lone && folioPlain.MatchString(strings.TrimSpace(e.text))) {
				continue
			}
			if folios[i] == "" {
				folios[i] = f
			}
			drop := map[int]bool{}
			for _, k := range e.idx {
				drop[k] = true
			}
			kept := pageLines[i][:0]
			for k, l := range pageLines[i] {
				if !drop[k] {
					kept = append(kept, l)
				}
			}
			pageLines[i] = kept
		}
	}
	return folios
}

// endsSentence reports whether text ends a sentence, so a paragraph that
// reaches the foot of a column or page without one must continue on the next.
func endsSentence(s string) bool {
	s = strings.TrimRight(s, " \"'”’)]")
	r, _ := utf8.DecodeLastRuneInString(s)
	return strings.ContainsRune(".!?:。！？：", r)
}

// startsItem reports whether a line opens a bulleted list item.
func startsItem(s string) bool {
	r, _ := utf8.DecodeRuneInString(s)
	return strings.ContainsRune("•◦▪‣∙", r)
}

// lineJoin decides how two lines of one paragraph are joined: a word
// hyphenated across the break is rejoined, CJK text is joined without a
// space, code keeps its line breaks. It returns prev with any break hyphen
// removed and the separator.
func lineJoin(prev, next string, mono bool) (string, string) {
	if mono {
		return prev, "\n"
	}
	last, _ := utf8.DecodeLastRuneInString(prev)
	first, _ := utf8.DecodeRuneInString(next)
	if (last == '-' || last == '\u00ad') && len(prev) > 1 {
		before, _ := utf8.DecodeLastRuneInString(prev[:len(prev)-utf8.RuneLen(last)])
		if unicode.IsLetter(before) && unicode.IsLower(first) {
			return prev[:len(prev)-utf8.RuneLen(last)], ""
		}
	}
	if isCJK(last) || isCJK(first) {
		return prev, ""
	}
	return prev, " "
}

// paragraphs splits a page's lines (reading order) into paragraphs at
// vertical gaps, first-line indents, changes of font size or face, and short
// lines that end a sentence.
func paragraphs(lines []pdfLine, page int) []*pdfPara {
	if len(lines) == 0 {
		return nil
	}
	var diffs []float64
	for i := 1; i < len(lines); i++ {
		a, b := lines[i-1], lines[i]
		if a.col == b.col && a.band == b.band && math.Abs(a.size-b.size) < 0.5 {
			if d := a.y - b.y; d > 0.5*a.size && d < 3*a.size {
				diffs = append(diffs, d)
			}
		}
	}
	pitch := 0.0
	if len(diffs) > 0 {
		sort.Float64s(diffs)
		pitch = diffs[len(diffs)/2]
	}
	indented := func(l pdfLine) bool {
		d := l.x0 - l.colLeft
		return d > 0.7*l.size && d < 8*l.size
	}

	region := tableRegions(lines, pitch)
	var out []*pdfPara
	var cur *pdfPara
	start := func(l pdfLine) {
		cur = &pdfPara{page: page, lines: []string{l.text}, words: [][]pdfWord{l.words}, cells: []int{l.cells}, size: l.size, bold: l.bold, mono: l.mono,
			nlines: 1, indented: indented(l), width: l.colRight - l.colLeft}
		out = append(out, cur)
	}
	start(lines[0])
	cur.table = region[0] >= 0
	for i := 1; i < len(lines); i++ {
		a, b := lines[i-1], lines[i]
		if region[i] >= 0 || region[i-1] >= 0 {
			// A table is one paragraph, a row per line, whatever the fonts
			// and gaps of its rows; it starts and ends a paragraph.
			if region[i] == region[i-1] {
				cur.lines = append(cur.lines, b.text)
				cur.words = append(cur.words, b.words)
				cur.cells = append(cur.cells, b.cells)
				cur.joins = append(cur.joins, "\n")
				cur.nlines++
				cur.bold = cur.bold && b.bold
			} else {
				start(b)
				cur.table = region[i] >= 0
			}
			continue
		}
		brk := false
		switch {
		case math.Abs(a.size-b.size) > 0.1*math.Max(a.size, b.size):
			brk = true
		case a.bold != b.bold || a.mono != b.mono || startsItem(b.text):
			brk = true
		case indented(b) && b.x0 > a.x0+0.7*b.size &&
			!(a.x1 >= a.colRight-a.size && !endsSentence(a.text)):
			// A line set in from the one above opens a paragraph, unless the
			// line above ran to the margin mid-sentence (hanging indents,
			// footnotes, lists).
			brk = true
		case a.x1 < a.colRight-3*a.size && endsSentence(a.text):
			brk = true
		case a.col == b.col && a.band == b.band:
			gap := a.y - b.y
			brk = gap < 0 || pitch > 0 && gap > 1.45*pitch || pitch == 0 && gap > 1.8*b.size
		case a.col == b.col:
			// A band change in one column: a full-width element came between.
			brk = a.y-b.y > 2*b.size || endsSentence(a.text)
		default:
			// Column change: the paragraph flows on unless it ended.
			brk = endsSentence(a.text)
		}
		if brk {
			start(b)
			continue
		}
		prev, sep := lineJoin(cur.lines[len(cur.lines)-1], b.text, a.mono && b.mono)
		cur.lines[len(cur.lines)-1] = prev
		cur.lines = append(cur.lines, b.text)
		cur.words = append(cur.words, b.words)
		cur.cells = append(cur.cells, b.cells)
		cur.joins = append(cur.joins, sep)
		cur.nlines++
	}
	return out
}

// tableRegions finds the tables of a page: runs of lines in one column that
// start and end with a row of cells (a label and its figures, or a header of
// years) and in which at most three lines in a row are not (row-group labels,
// wrapped labels), with no gap wider than three lines. It returns the region
// of each line, -1 outside tables; a region needs two rows of cells.
func tableRegions(lines []pdfLine, pitch float64) []int {
	region := make([]int, len(lines))
	for i := range region {
		region[i] = -1
	}
	row := func(l pdfLine) bool { return l.cells >= 2 && !l.mono }
	near := func(a, b pdfLine) bool {
		step := math.Max(pitch, a.size*1.2)
		return a.col == b.col && a.band == b.band && a.y-b.y > 0 && a.y-b.y <= 3*step
	}
	n := 0
	for i := 0; i < len(lines); {
		if !row(lines[i]) {
			i++
			continue
		}
		end, rows := i, 1
		for j := i + 1; j < len(lines) && j-end <= 4; j++ {
			if !near(lines[j-1], lines[j]) {
				break
			}
			if row(lines[j]) {
				end = j
				rows++
			}
		}
		if rows >= 2 {
			for k := i; k <= end; k++ {
				region[k] = n
			}
			n++
		}
		i = end + 1
	}
	return region
}

// maxHeaderRows bounds a table's header: a statement of changes in equity
// stacks its column titles over five lines.
const maxHeaderRows = 6

// headerRows returns how many lines open a table as its header: the column
// years, period labels and units ("December 31, December 31, / (Dollars in
// millions) 2018 2017"), up to the last row of cells before the first line
// that holds an amount. Row-group labels between ("Assets") are not header,
// so a table whose first row already holds figures has none, and neither
// has one without figures in its first rows (a list of subsidiaries).
func (p *pdfPara) headerRows() int {
	if !p.table {
		return 0
	}
	n := 0
	for i, l := range p.lines[:min(len(p.lines), maxHeaderRows+1)] {
		if holdsAmount(l) {
			return n
		}
		if i < len(p.cells) && p.cells[i] >= 2 && i < maxHeaderRows {
			n = i + 1
		}
	}
	return 0 // no figures near the top: a list set in columns, not a statement
}

// holdsAmount reports whether a table line holds a figure, not only labels:
// a number that is not a year (1900–2099), a day after a month's name
// ("December 31"), or a footnote mark ("(1)").
func holdsAmount(line string) bool {
	f := strings.Fields(line)
	for i, w := range f {
		t := strings.Trim(w, "$€£¥()[],.;:%*")
		if t == "" || strings.IndexFunc(t, unicode.IsDigit) < 0 {
			continue
		}
		switch {
		case strings.Trim(t, "0123456789,.") != "":
			continue // a word with a digit: "F-7", "Q2", "10-K"
		case len(t) == 4 && (strings.HasPrefix(t, "19") || strings.HasPrefix(t, "20")):
			continue
		case len(t) <= 2 && i > 0 && monthName[strings.ToLower(strings.Trim(f[i-1], ".,"))]:
			continue
		case len(t) == 1 && strings.HasPrefix(w, "(") && strings.HasSuffix(w, ")"):
			continue
		}
		return true
	}
	return false
}

// monthName holds the months' names and the usual abbreviations.
var monthName = func() map[string]bool {
	m := map[string]bool{}
	for _, s := range []string{"january", "february", "march", "april", "may", "june", "july", "august",
		"september", "october", "november", "december"} {
		m[s], m[s[:3]] = true, true
	}
	m["sept"] = true
	return m
}()

// headingLike reports whether a page paragraph is set as a heading, which
// never continues over a page break.
func (p *pdfPara) headingLike(body float64) bool {
	if p.table {
		return false
	}
	t := p.text()
	return p.size > body*1.1 || p.bold && p.nlines <= 2 && len(t) < 120
}

// liftFootnotes moves a page's footnotes (the paragraphs at its foot set
// in smaller type, the first opening with a mark) up before its last body
// paragraph when that paragraph runs on to the next page. A sentence
// running on is otherwise cut by them: R-intro's "but it can" + footnotes
// 4 and 5 + "be quite hard to decide" was indexed, quoted and checked as
// two broken sentences. Moved, they stay on their page, and the paragraph
// ends it, to be joined with its continuation (joinPages). The paragraph
// must not open the page: one that continues from the page before would
// be cut from that page instead.
func liftFootnotes(ps []*pdfPara, body float64) []*pdfPara {
	j := len(ps)
	for j > 0 && !ps[j-1].table && ps[j-1].size <= footnoteScale*body {
		j--
	}
	if j == len(ps) || j < 2 || !footnoteMark.MatchString(ps[j].lines[0]) {
		return ps
	}
	p := ps[j-1]
	if p.table || p.headingLike(body) || !p.mono && endsSentence(p.lines[len(p.lines)-1]) {
		return ps
	}
	out := make([]*pdfPara, 0, len(ps))
	out = append(out, ps[:j-1]...)
	out = append(out, ps[j:]...)
	return append(out, p)
}

// footnoteScale is the largest share of the body's type size a footnote is
// set in: 9 on 11 points (R-intro), 8 on 10 (lshort-zh-cn, the DTC paper),
// 9 on 10 (the USENIX hash paper).
const footnoteScale = 0.92

// footnoteMark matches the mark a footnote opens with: its number, or a
// symbol, with or without a space before the text ("4 of unlimited length",
// "1Well, mostly.", "2类Unix操作系统").
var footnoteMark = regexp.MustCompile(`^(\d{1,3}|[*†‡§¶])\s?\S`)

// joinPages turns page paragraphs into document paragraphs: the last
// paragraph of a page continues on the next page when it did not end a
// sentence and the next page does not open with an indent, a heading, a
// table's caption or a change of type.
func joinPages(paras []*pdfPara, body float64) []*pdfUnit {
	var units []*pdfUnit
	for i, p := range paras {
		if i > 0 && len(units) > 0 {
			prev := paras[i-1]
			u := units[len(units)-1]
			if prev.page+1 == p.page && u.parts[len(u.parts)-1] == prev && !prev.table && !p.table &&
				!prev.headingLike(body) && !p.headingLike(body) && !opensCaption(paras, i) &&
				math.Abs(prev.size-p.size) < 0.5 && prev.mono == p.mono && !p.indented && !startsItem(p.lines[0]) &&
				(prev.mono || !endsSentence(prev.lines[len(prev.lines)-1])) {
				u.parts = append(u.parts, p)
				continue
			}
		}
		units = append(units, &pdfUnit{parts: []*pdfPara{p}})
	}
	return units
}

// opensCaption reports whether paras[i] opens a table's caption on its page:
// a run of title lines ("CONSOLIDATED BALANCE SHEETS / At January 1, 2023
// and January 2, 2022 / (Dollars in Millions)"), at most maxTitleLines in
// all, that a table follows directly. Statement titles are often set in the
// body's type, so without this a title that opens a page was taken for the
// end of the previous page's last paragraph (a folio, a list) and no chunk
// of the statement carried its name.
func opensCaption(paras []*pdfPara, i int) bool {
	page := paras[i].page
	lines := 0
	for j := i; j < len(paras) && paras[j].page == page; j++ {
		p := paras[j]
		if p.table {
			return j > i
		}
		lines += p.nlines
		if lines > maxTitleLines || p.mono {
			return false
		}
		for _, l := range p.lines {
			if !titleLine(strings.Join(strings.Fields(l), " ")) {
				return false
			}
		}
	}
	return false
}
