package citation_test

import (
	"context"
	"encoding/xml"
	"math"
	"math/rand/v2"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/stretchr/testify/require"
)

func TestBoxesGroupByLineAndPage(t *testing.T) {
	words := []citebook.WordBox{
		{Start: 0, End: 3, Line: 0, Box: citebook.Box{Page: 4, X0: .1, Y0: .80, X1: .15, Y1: .82}},
		{Start: 4, End: 9, Line: 0, Box: citebook.Box{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83}},
		{Start: 10, End: 14, Line: 1, Box: citebook.Box{Page: 5, X0: .1, Y0: .10, X1: .2, Y1: .12}, OCR: true},
		{Start: 15, End: 20, Line: 1, Box: citebook.Box{Page: 5, X0: .21, Y0: .10, X1: .3, Y1: .12}, OCR: true},
	}
	tests := []struct {
		name       string
		start, end int
		want       []citebook.Box
		ocr        bool
	}{
		{"one word", 4, 9, []citebook.Box{{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83}}, false},
		{"one line", 0, 9, []citebook.Box{{Page: 4, X0: .1, Y0: .80, X1: .25, Y1: .83}}, false},
		{"over the page break", 5, 12, []citebook.Box{{Page: 4, X0: .16, Y0: .80, X1: .25, Y1: .83},
			{Page: 5, X0: .1, Y0: .10, X1: .2, Y1: .12}}, true},
		{"nothing", 30, 40, []citebook.Box{}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, ocr := citation.Boxes(words, tt.start, tt.end)
			require.Equal(t, tt.want, got)
			require.Equal(t, tt.ocr, ocr)
		})
	}
}

// bboxWord is a word of `pdftotext -bbox`, in points, origin top left.
type bboxWord struct {
	XMin float64 `xml:"xMin,attr"`
	YMin float64 `xml:"yMin,attr"`
	XMax float64 `xml:"xMax,attr"`
	YMax float64 `xml:"yMax,attr"`
	Text string  `xml:",chardata"`
}

type bboxPage struct {
	Width  float64    `xml:"width,attr"`
	Height float64    `xml:"height,attr"`
	Words  []bboxWord `xml:"word"`
}

// bboxPages runs pdftotext -bbox on pages [first, last] of file.
func bboxPages(t *testing.T, file string, first, last int) []bboxPage {
	t.Helper()
	bin, err := exec.LookPath("pdftotext")
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatal("pdftotext not installed (poppler-utils); CI must provide it")
		}
		t.Skip("pdftotext not installed")
	}
	out, err := exec.Command(bin, "-bbox", "-f", strconv.Itoa(first), "-l", strconv.Itoa(last), file, "-").Output()
	require.NoError(t, err)
	var doc struct {
		Pages []bboxPage `xml:"body>doc>page"`
	}
	d := xml.NewDecoder(strings.NewReader(string(out)))
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

// referenceLines finds quote among the reference words of the pages and
// returns the boxes of the lines it covers (page fractions), or nil when
// poppler reads the passage differently.
func referenceLines(pages []bboxPage, firstPage int, quote string) []citebook.Box {
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

func iou(a, b citebook.Box) float64 {
	if a.Page != b.Page {
		return 0
	}
	ix := math.Max(0, math.Min(a.X1, b.X1)-math.Max(a.X0, b.X0))
	iy := math.Max(0, math.Min(a.Y1, b.Y1)-math.Max(a.Y0, b.Y0))
	in := ix * iy
	area := func(b citebook.Box) float64 { return (b.X1 - b.X0) * (b.Y1 - b.Y0) }
	return in / (area(a) + area(b) - in)
}

// TestQuoteBoxesMatchPoppler draws 20 random quotes of two real books as
// citations and checks that every printed line the quote covers, as poppler
// places its words, is matched by one of the citation's boxes with an IoU of
// at least 0.5.
func TestQuoteBoxesMatchPoppler(t *testing.T) {
	for _, book := range []string{"books/R-intro.pdf", "books/debian-reference.en.pdf"} {
		t.Run(book, func(t *testing.T) {
			file := corpus.Path(t, book)
			doc, err := ingest.ParseFile(context.Background(), file)
			require.NoError(t, err)
			tok, err := ingest.NewTokenizer()
			require.NoError(t, err)
			_, chunks := ingest.Split(doc, "b", tok, ingest.DefaultChunkOptions())
			rng := rand.New(rand.NewPCG(14, 1))
			checked, skipped, lines, worst := 0, 0, 0, 1.0
			for tries := 0; checked < 20 && tries < 400; tries++ {
				c := chunks[rng.IntN(len(chunks))]
				fields := strings.Fields(c.Text)
				if len(fields) < 30 {
					continue
				}
				n := 6 + rng.IntN(20)
				from := rng.IntN(len(fields) - n)
				quote := strings.Join(fields[from:from+n], " ")
				cit, reason := citation.Locate(c, quote)
				if reason != "" {
					continue
				}
				cit.Boxes, _ = citation.Boxes(c.Geometry, cit.CharStart, cit.CharEnd)
				require.NotEmpty(t, cit.Boxes, "no boxes for %q", quote)
				first, last := cit.Boxes[0].Page, cit.Boxes[len(cit.Boxes)-1].Page
				want := referenceLines(bboxPages(t, file, first, last), first, cit.Quote)
				if want == nil {
					skipped++ // poppler reads these words differently; not a geometry question
					continue
				}
				checked++
				for _, w := range want {
					best := 0.0
					for _, b := range cit.Boxes {
						best = math.Max(best, iou(w, b))
					}
					lines++
					worst = math.Min(worst, best)
					require.GreaterOrEqual(t, best, 0.5, "quote %q line %+v: boxes %+v", cit.Quote, w, cit.Boxes)
				}
				// And no box is drawn where poppler prints none of the words.
				for _, b := range cit.Boxes {
					best := 0.0
					for _, w := range want {
						best = math.Max(best, iou(w, b))
					}
					require.GreaterOrEqual(t, best, 0.5, "quote %q box %+v: lines %+v", cit.Quote, b, want)
				}
			}
			require.Equal(t, 20, checked, "too few quotes poppler could place")
			require.Less(t, skipped, checked, "poppler could not place most quotes")
			t.Logf("%s: %d quotes (%d others poppler reads differently), %d lines, worst IoU %.2f", book, checked, skipped, lines, worst)
		})
	}
}
