package pdf

import (
	"math"
	"regexp"
	"slices"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/ledongthuc/pdf"
	"golang.org/x/text/unicode/norm"
)

// pdfFrag is a run of glyphs drawn one after another on one baseline without
// a wide gap: the smallest unit the layout analysis moves around, because a
// run never crosses a column gutter.
type pdfFrag struct {
	x0, x1, y float64
	size      float64
	text      string
	chars     int
	bold      int // glyphs set in a bold face
	mono      int // glyphs set in a monospaced face
	words     []pdfWord
}

// pdfLine is one printed line of one column, in reading order.
type pdfLine struct {
	x0, x1, y float64
	size      float64
	text      string
	chars     int
	bold      bool
	mono      bool
	col       int     // 0 single column or left, 1 right column
	colLeft   float64 // left edge of the line's column on this page
	colRight  float64
	band      int // index of the horizontal band (two-column pages)
	cells     int // runs separated by a gap wider than a glyph and a half: table cells
	words     []pdfWord
}

// glyphFont summarises what the layout needs to know about a font name.
type glyphFont struct{ bold, mono bool }

func classifyFont(name string, cache map[string]glyphFont) glyphFont {
	if f, ok := cache[name]; ok {
		return f
	}
	l := strings.ToLower(name)
	f := glyphFont{
		bold: strings.Contains(l, "bold") || strings.Contains(l, "black") || strings.Contains(l, "heavy") ||
			strings.HasPrefix(l, "cmbx") || strings.HasPrefix(l, "sfbx") || strings.Contains(l, "-bx") || strings.Contains(l, "semibold"),
		mono: strings.Contains(l, "mono") || strings.Contains(l, "courier") || strings.Contains(l, "typewriter") ||
			strings.HasPrefix(l, "cmtt") || strings.HasPrefix(l, "sftt") || strings.Contains(l, "consol") || strings.Contains(l, "inconsolata"),
	}
	cache[name] = f
	return f
}

// isCJK reports whether r belongs to a script written without spaces between
// words, so neither word gaps nor line breaks may add one.
func isCJK(r rune) bool {
	if r < 0x2E80 {
		return false
	}
	return unicode.In(r, unicode.Han, unicode.Hiragana, unicode.Katakana, unicode.Hangul) ||
		(r >= 0x3000 && r <= 0x303F) || (r >= 0xFF00 && r <= 0xFFEF)
}

// ligatures spells out the Latin presentation forms some fonts map their
// ligature glyphs to, so "overﬂow" is searchable as "overflow".
var ligatures = map[rune]string{
	'\uFB00': "ff", '\uFB01': "fi", '\uFB02': "fl", '\uFB03': "ffi", '\uFB04': "ffl", '\uFB05': "st", '\uFB06': "st",
}

// buildFrags groups glyphs in drawing order into runs. Word spaces come from
// space glyphs and from horizontal gaps wider than a fraction of the font
// size, since many PDFs position words instead of drawing spaces.
func buildFrags(glyphs []pdf.Text, fonts map[string]glyphFont) []pdfFrag {
	var frags []pdfFrag
	var sb strings.Builder
	var cur pdfFrag
	var lastX, lastEnd, lastY, lastSize float64
	var lastRune rune
	open := false
	pendingSpace := false
	sizes := map[float64]int{}

	var word pdfWord
	newWord := true
	flush := func() {
		if open && cur.chars > 0 {
			if word.text != "" {
				cur.words = append(cur.words, word)
			}
			cur.text = sb.String()
			best, n := 0.0, -1
			for s, c := range sizes {
				if c > n || c == n && s > best {
					best, n = s, c
				}
			}
			cur.size = best
			frags = append(frags, cur)
		}
		sb.Reset()
		clear(sizes)
		open = false
		pendingSpace = false
		word, newWord = pdfWord{}, true
	}

	for _, g := range glyphs {
		size := math.Abs(g.FontSize)
		if g.S == "" || g.S == "\n" || size < 1 {
			continue
		}
		if strings.TrimSpace(g.S) == "" {
			pendingSpace = open
			continue
		}
		w := glyphWidth(g)
		r, _ := utf8.DecodeRuneInString(g.S)
		if open && r == lastRune && math.Abs(g.X-lastX) < 0.15*size && math.Abs(g.Y-lastY) < 0.15*size {
			// The same glyph struck again a hair away: faked bold.
			continue
		}
		if open {
			ref := math.Max(size, lastSize)
			dy := math.Abs(g.Y - lastY)
			gap := g.X - lastEnd
			if dy > 0.5*ref || gap < -0.6*ref || gap > 1.0*ref || g.X < lastX-0.3*ref {
				flush()
			} else {
				cjk := isCJK(r) || isCJK(lastRune)
				if (pendingSpace && !cjk) || (!cjk && gap > 0.12*ref) || (cjk && gap > 0.8*ref) {
					sb.WriteByte(' ')
					newWord = true
				}
				if cjk {
					newWord = true // every Han or Kana glyph is a word of its own
				}
				pendingSpace = false
			}
		}
		if !open {
			cur = pdfFrag{x0: g.X, y: g.Y}
			open = true
		}
		f := classifyFont(g.Font, fonts)
		if f.bold {
			cur.bold++
		}
		if f.mono {
			cur.mono++
		}
		if newWord {
			if word.text != "" {
				cur.words = append(cur.words, word)
			}
			word = pdfWord{}
			newWord = false
		}
		word.add(g.X, g.X+w, g.Y-pdfDescent*size, g.Y+pdfAscent*size)
		if lig, ok := ligatures[r]; ok && len(g.S) == utf8.RuneLen(r) {
			sb.WriteString(lig)
			word.text += lig
		} else {
			sb.WriteString(g.S)
			word.text += g.S
		}
		cur.chars++
		sizes[math.Round(size*10)/10]++
		if cur.chars == 1 || size > cur.size+0.1 {
			// The baseline of the largest glyphs, not of a superscript.
			cur.y, cur.size = g.Y, size
		}
		if e := g.X + w; e > cur.x1 {
			cur.x1 = e
		}
		lastX, lastEnd, lastY, lastSize, lastRune = g.X, g.X+w, g.Y, size, r
	}
	flush()
	return frags
}

// layoutPage turns a page's glyphs into lines in reading order. Two-column
// pages are detected from an empty vertical strip near the middle of the
// page; full-width runs (titles, abstracts, captions, folios) split the page
// into horizontal bands that are each read left column first.
func layoutPage(glyphs []pdf.Text, fonts map[string]glyphFont) []pdfLine {
	return layoutFrags(buildFrags(composeAccents(glyphs), fonts))
}

// composeAccents joins an accent that TeX (\\accent with OT1 or Type 1
// fonts) strikes as a glyph of its own over or under a letter to that
// letter: R-intro's "Fran¸cois" is "François", and a name spelt with a
// spacing cedilla or diaeresis matched no reader's spelling of it. An
// accent is joined only to a letter drawn just before or after it that its
// middle is printed over, so one printed beside text ("the ¨ key", "`x`"
// in code) stays as it is. The letter keeps its place and width.
func composeAccents(glyphs []pdf.Text) []pdf.Text {
	if !slices.ContainsFunc(glyphs, func(g pdf.Text) bool { _, ok := spacingAccents[g.S]; return ok }) {
		return glyphs
	}
	out := make([]pdf.Text, 0, len(glyphs))
	for i := 0; i < len(glyphs); i++ {
		g := glyphs[i]
		mark, ok := spacingAccents[g.S]
		switch {
		case !ok:
			out = append(out, g)
		case i+1 < len(glyphs) && accentOver(g, glyphs[i+1]):
			c := glyphs[i+1]
			c.S = norm.NFC.String(c.S + mark)
			out = append(out, c)
			i++
		case i > 0 && out[len(out)-1] == glyphs[i-1] && accentOver(g, glyphs[i-1]):
			out[len(out)-1].S = norm.NFC.String(glyphs[i-1].S + mark)
		default:
			out = append(out, g)
		}
	}
	return out
}

// accentOver reports whether accent a is printed over or under letter l:
// the middle of a within l's width, on l's line.
func accentOver(a, l pdf.Text) bool {
	r, n := utf8.DecodeRuneInString(l.S)
	if n != len(l.S) || !unicode.IsLetter(r) || isCJK(r) {
		return false
	}
	size := math.Abs(l.FontSize)
	mid := a.X + glyphWidth(a)/2
	return mid >= l.X-0.1*size && mid <= l.X+glyphWidth(l)+0.1*size && math.Abs(a.Y-l.Y) < size
}

// glyphWidth is a glyph's advance, or an average glyph's (0.45 of its
// size) when the font gives none or an implausible one.
func glyphWidth(g pdf.Text) float64 {
	size := math.Abs(g.FontSize)
	if g.W <= 0 || g.W > 3*size {
		return 0.45 * size
	}
	return g.W
}

// spacingAccents maps the spacing forms of accents to the combining marks
// they stand for.
var spacingAccents = map[string]string{
	"\u00B4": "\u0301", "`": "\u0300", "\u00A8": "\u0308", "\u02C6": "\u0302", "\u02DC": "\u0303",
	"\u00B8": "\u0327", "\u02C7": "\u030C", "\u02D8": "\u0306", "\u02D9": "\u0307", "\u00AF": "\u0304",
	"\u02DA": "\u030A", "\u02DD": "\u030B", "\u02DB": "\u0328",
}

// layoutFrags puts a page's runs into lines in reading order; OCR'd pages
// come here with a run per word.
func layoutFrags(frags []pdfFrag) []pdfLine {
	if len(frags) == 0 {
		return nil
	}
	gutter, twoCol := findGutter(frags)
	sort.SliceStable(frags, func(i, j int) bool { return frags[i].y > frags[j].y })

	var lines []pdfLine
	if !twoCol {
		lines = groupLines(frags, 0, 0)
		setColumnBounds(lines)
		return lines
	}
	// Walk top to bottom; a fragment crossing the gutter closes the band.
	var left, right []pdfFrag
	band := 0
	var out []pdfLine
	closeBand := func() {
		l := groupLines(left, 0, band)
		r := groupLines(right, 1, band)
		out = append(out, l...)
		out = append(out, r...)
		left, right = left[:0], right[:0]
		band++
	}
	for _, f := range frags {
		switch {
		case f.x1 <= gutter+1:
			left = append(left, f)
		case f.x0 >= gutter-1:
			right = append(right, f)
		default:
			closeBand()
			out = append(out, groupLines([]pdfFrag{f}, 0, band)...)
			band++
		}
	}
	closeBand()
	setColumnBounds(out)
	return out
}

// findGutter looks for the x position between 40% and 60% of the text's
// width that the fewest runs cross, and calls the page two-column when both
// sides hold plenty of text set side by side.
func findGutter(frags []pdfFrag) (float64, bool) {
	minX, maxX := math.Inf(1), math.Inf(-1)
	total := 0
	for _, f := range frags {
		minX = math.Min(minX, f.x0)
		maxX = math.Max(maxX, f.x1)
		total += f.chars
	}
	width := maxX - minX
	if width < 100 || len(frags) < 10 {
		return 0, false
	}
	bestX, bestCross := 0.0, math.MaxInt
	runStart, runEnd := 0.0, 0.0
	for x := minX + 0.4*width; x <= minX+0.6*width; x += 2 {
		cross := 0
		for _, f := range frags {
			if f.x0 < x-1 && f.x1 > x+1 {
				cross += f.chars
			}
		}
		switch {
		case cross < bestCross:
			bestX, bestCross, runStart, runEnd = x, cross, x, x
		case cross == bestCross && x-runEnd <= 2.01:
			runEnd = x
			bestX = (runStart + runEnd) / 2
		}
	}
	if bestCross*10 > total*4 {
		return 0, false
	}
	var leftChars, rightChars, paired, leftN int
	var rightYs []float64
	for _, f := range frags {
		if f.x0 >= bestX-1 && f.x1 > bestX+1 {
			rightChars += f.chars
			rightYs = append(rightYs, f.y)
		}
	}
	sort.Float64s(rightYs)
	for _, f := range frags {
		if f.x1 <= bestX+1 {
			leftChars += f.chars
			leftN++
			// A run on the right within a line's height of this one?
			if i := sort.SearchFloat64s(rightYs, f.y-f.size); i < len(rightYs) && rightYs[i] < f.y+f.size {
				paired++
			}
		}
	}
	if leftChars*6 < total || rightChars*6 < total || paired < 5 || paired*3 < leftN {
		return 0, false
	}
	// Text columns are set to a measure: many lines of at least one column
	// end at its right edge. Table columns are ragged and read better row by
	// row.
	// Text columns are also words: a right-aligned column of figures (a
	// financial statement's amounts beside their labels) is a table.
	isLeft := func(f pdfFrag) bool { return f.x1 <= bestX+1 }
	isRight := func(f pdfFrag) bool { return f.x0 >= bestX-1 }
	if !(justified(frags, isLeft) >= 0.4 && figureShare(frags, isLeft) < 0.5) &&
		!(justified(frags, isRight) >= 0.4 && figureShare(frags, isRight) < 0.5) {
		return 0, false
	}
	return bestX, true
}

// justified returns the share of the baselines of the selected runs whose
// line ends within a glyph or so of the selection's right edge.
func justified(frags []pdfFrag, in func(pdfFrag) bool) float64 {
	ends := map[int]float64{}
	edge, size := 0.0, 0.0
	for _, f := range frags {
		if in(f) {
			k := int(math.Round(f.y))
			ends[k] = math.Max(ends[k], f.x1)
			edge = math.Max(edge, f.x1)
			size = math.Max(size, f.size)
		}
	}
	full := 0
	for _, e := range ends {
		if e >= edge-1.5*size {
			full++
		}
	}
	if len(ends) == 0 {
		return 0
	}
	return float64(full) / float64(len(ends))
}

// figureShare returns the share of the selected runs' characters that are in
// runs of figures ("1,577", "(370)", "$", "—"): amounts, not words or dot
// leaders.
func figureShare(frags []pdfFrag, in func(pdfFrag) bool) float64 {
	figures, all := 0, 0
	for _, f := range frags {
		if !in(f) {
			continue
		}
		all += f.chars
		digit, other := false, false
		for _, r := range f.text {
			switch {
			case r >= '0' && r <= '9':
				digit = true
			case strings.ContainsRune(" $€£¥%(),.-—–", r):
			default:
				other = true
			}
		}
		if !other && (digit || strings.ContainsAny(f.text, "$€£¥—–")) {
			figures += f.chars
		}
	}
	if all == 0 {
		return 0
	}
	return float64(figures) / float64(all)
}

// leaders matches the dot leaders of a table of contents.
var leaders = regexp.MustCompile(`(?:\s*\.){4,}\s*`)

// groupLines merges runs that share a baseline into lines, top to bottom.
func groupLines(frags []pdfFrag, col, band int) []pdfLine {
	if len(frags) == 0 {
		return nil
	}
	fs := append([]pdfFrag(nil), frags...)
	sort.SliceStable(fs, func(i, j int) bool { return fs[i].y > fs[j].y })
	var lines []pdfLine
	for i := 0; i < len(fs); {
		j := i + 1
		tol := 0.5 * fs[i].size
		for j < len(fs) && fs[i].y-fs[j].y < math.Max(tol, 0.5*fs[j].size) {
			j++
		}
		group := fs[i:j]
		sort.SliceStable(group, func(a, b int) bool { return group[a].x0 < group[b].x0 })
		var sb strings.Builder
		ln := pdfLine{x0: group[0].x0, col: col, band: band}
		bold, mono := 0, 0
		bestChars := -1
		ln.cells = 1
		for k, f := range group {
			if k > 0 {
				if f.x0-group[k-1].x1 > 1.5*math.Max(f.size, group[k-1].size) {
					ln.cells++
				}
				prev, _ := utf8.DecodeLastRuneInString(sb.String())
				next, _ := utf8.DecodeRuneInString(f.text)
				if !(isCJK(prev) && isCJK(next) && f.x0-group[k-1].x1 < f.size) {
					sb.WriteByte(' ')
				}
			}
			sb.WriteString(f.text)
			ln.words = append(ln.words, f.words...)
			ln.x1 = math.Max(ln.x1, f.x1)
			ln.chars += f.chars
			bold += f.bold
			mono += f.mono
			if f.chars > bestChars {
				bestChars = f.chars
				ln.size = f.size
				ln.y = f.y
			}
		}
		ln.text = sb.String()
		if strings.Contains(ln.text, ". . . .") || strings.Contains(ln.text, "....") {
			ln.text = leaders.ReplaceAllString(ln.text, " … ")
		}
		ln.bold = bold*2 > ln.chars
		ln.mono = mono*20 >= ln.chars*19 // code, not prose with inline code
		lines = append(lines, ln)
		i = j
	}
	return lines
}

// setColumnBounds records each column's left and right text edges so
// paragraph detection can tell indented and short lines.
func setColumnBounds(lines []pdfLine) {
	lefts := map[int][]float64{}
	rights := map[int][]float64{}
	for _, l := range lines {
		if l.chars < 8 {
			continue
		}
		lefts[l.col] = append(lefts[l.col], l.x0)
		rights[l.col] = append(rights[l.col], l.x1)
	}
	bound := map[int][2]float64{}
	for c, xs := range lefts {
		sort.Float64s(xs)
		rs := rights[c]
		sort.Float64s(rs)
		// The most common left edge is the margin; the 90th percentile of
		// right edges is the justified edge.
		bound[c] = [2]float64{modeEdge(xs), rs[len(rs)*9/10]}
	}
	for i := range lines {
		b, ok := bound[lines[i].col]
		if !ok {
			b = [2]float64{lines[i].x0, lines[i].x1}
		}
		lines[i].colLeft, lines[i].colRight = b[0], b[1]
	}
}

// modeEdge returns the most frequent value of sorted xs, within 2pt.
func modeEdge(xs []float64) float64 {
	best, bestN := xs[0], 0
	j := 0
	for i := range xs {
		for xs[i]-xs[j] > 2 {
			j++
		}
		if n := i - j + 1; n > bestN {
			best, bestN = xs[j], n
		}
	}
	return best
}
