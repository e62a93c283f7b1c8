// Package popplerbox reads word positions from poppler's `pdftotext -bbox`
// for tests: the reference that citation boxes and the reader's highlights
// are checked against.
package popplerbox

import (
	"encoding/xml"
	"math"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/pdftotext"
)

// Word is a word of `pdftotext -bbox`, in points, origin top left.
type Word struct {
	XMin float64 `xml:"xMin,attr"`
	YMin float64 `xml:"yMin,attr"`
	XMax float64 `xml:"xMax,attr"`
	YMax float64 `xml:"yMax,attr"`
	Text string  `xml:",chardata"`
}

// Page is one page of `pdftotext -bbox`: its size in points and words.
type Page struct {
	Width  float64 `xml:"width,attr"`
	Height float64 `xml:"height,attr"`
	Words  []Word  `xml:"word"`
}

// Pages runs pdftotext -bbox on pages [first, last] of file; a missing
// pdftotext fails in CI and skips elsewhere.
func Pages(t testing.TB, file string, first, last int) []Page {
	t.Helper()
	out, err := exec.Command(pdftotext.Path(t), "-bbox", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), file, "-").Output()
	require.NoError(t, err)
	var doc struct {
		Pages []Page `xml:"body>doc>page"`
	}
	// pdftotext prints a glyph it cannot map as a control character, which
	// XML does not allow; such a word just will not match a quote.
	clean := strings.Map(func(r rune) rune {
		if r < 0x20 && r != '\n' && r != '\t' && r != '\r' {
			return -1
		}
		return r
	}, string(out))
	d := xml.NewDecoder(strings.NewReader(clean))
	d.Strict = false
	d.Entity = xml.HTMLEntity
	require.NoError(t, d.Decode(&doc))
	return doc.Pages
}

func alnum(s string) []rune {
	var out []rune
	for _, r := range strings.ToLower(s) {
		if unicode.IsLetter(r) || unicode.IsDigit(r) {
			out = append(out, r)
		}
	}
	return out
}

// Lines finds quote among the words of pages (the first being physical
// page firstPage) and returns the boxes of the printed lines it covers, in
// page fractions, or nil when poppler reads the passage differently or it
// occurs twice.
func Lines(pages []Page, firstPage int, quote string) []citebook.Box {
	type ref struct {
		page int
		box  citebook.Box
	}
	var stream []rune
	var owner []ref
	for pi, p := range pages {
		for _, w := range p.Words {
			b := citebook.Box{Page: firstPage + pi, X0: w.XMin / p.Width, Y0: w.YMin / p.Height,
				X1: w.XMax / p.Width, Y1: w.YMax / p.Height}
			for _, r := range alnum(w.Text) {
				stream = append(stream, r)
				owner = append(owner, ref{firstPage + pi, b})
			}
		}
	}
	needle := alnum(quote)
	at := -1
	for i := 0; i+len(needle) <= len(stream); i++ {
		if string(stream[i:i+len(needle)]) == string(needle) {
			if at >= 0 {
				return nil // ambiguous: the same words occur twice on these pages
			}
			at = i
		}
	}
	if at < 0 {
		return nil
	}
	// A word joins the line whose vertical extent it mostly shares, so a
	// superscript stays on its line.
	var lines []citebook.Box
	var last citebook.Box
next:
	for i, o := range owner[at : at+len(needle)] {
		b := o.box
		if i > 0 && b == last {
			continue
		}
		last = b
		for k := range lines {
			l := &lines[k]
			overlap := math.Min(l.Y1, b.Y1) - math.Max(l.Y0, b.Y0)
			if l.Page == b.Page && overlap > 0.5*math.Min(l.Y1-l.Y0, b.Y1-b.Y0) {
				l.X0, l.X1 = math.Min(l.X0, b.X0), math.Max(l.X1, b.X1)
				l.Y0, l.Y1 = math.Min(l.Y0, b.Y0), math.Max(l.Y1, b.Y1)
				continue next
			}
		}
		lines = append(lines, b)
	}
	return lines
}

// IoU is the intersection over union of two boxes; 0 on different pages.
func IoU(a, b citebook.Box) float64 {
	if a.Page != b.Page {
		return 0
	}
	ix := math.Max(0, math.Min(a.X1, b.X1)-math.Max(a.X0, b.X0))
	iy := math.Max(0, math.Min(a.Y1, b.Y1)-math.Max(a.Y0, b.Y0))
	in := ix * iy
	area := func(b citebook.Box) float64 { return (b.X1 - b.X0) * (b.Y1 - b.Y0) }
	return in / (area(a) + area(b) - in)
}
