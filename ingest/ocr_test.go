package ingest

import (
	"context"
	"errors"
	"os"
	"slices"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/pdf"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/pdftotext"
)

// tesseract returns the real OCR engine; missing tools fail in CI and skip
// on a developer machine.
func tesseract(t testing.TB) *Tesseract {
	t.Helper()
	p, err := FindPoppler()
	if err == nil {
		var tess *Tesseract
		if tess, err = FindTesseract(context.Background(), p, "eng"); err == nil {
			return tess
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("%v; CI must install tesseract-ocr, tesseract-ocr-eng and poppler-utils", err)
	}
	t.Skip(err.Error())
	return nil
}

func TestParseTesseractTSV(t *testing.T) {
	tsv := "level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t1000\t2000\t-1\t\n" +
		"4\t1\t1\t1\t1\t0\t100\t200\t300\t40\t-1\t\n" +
		"5\t1\t1\t1\t1\t1\t100\t200\t100\t40\t95.1\tHello\n" +
		"5\t1\t1\t1\t1\t2\t250\t205\t150\t35\t91\tworld\n" +
		"5\t1\t1\t1\t2\t1\t100\t260\t50\t40\t-1\t \n" +
		"5\t1\t2\t1\t1\t1\tx\t1\t1\t1\t90\tbroken\n"
	words, err := parseTesseractTSV([]byte(tsv))
	require.NoError(t, err)
	require.Equal(t, []pdf.OCRWord{
		{Text: "Hello", X0: 0.1, Y0: 0.1, X1: 0.2, Y1: 0.12, Line: lineKey(1, 1, 1)},
		{Text: "world", X0: 0.25, Y0: 0.1025, X1: 0.4, Y1: 0.12, Line: lineKey(1, 1, 1)},
	}, words)
	_, err = parseTesseractTSV([]byte("5\t1\t1\t1\t1\t1\t100\t200\t100\t40\t95\tHello\n"))
	require.Error(t, err, "words without a page size cannot be placed")
}

func TestScannedPDFWithoutOCRSaysHowToEnableIt(t *testing.T) {
	_, err := ParseFile(context.Background(), corpus.Path(t, "books/R-intro-scan-excerpt.pdf"))
	require.ErrorContains(t, err, "no text layer")
	require.ErrorContains(t, err, "tesseract-ocr")
}

// TestOCRScannedExcerpt reads the image-only excerpt of R-intro (its pages
// 7–10, scanned at 150 dpi with skew and noise) with Tesseract and compares
// the words with pdftotext's text of the same pages of the original:
// bag-of-words F1 must reach 0.90. The pages keep their printed labels, and
// the chunks carry OCR'd word boxes.
func TestOCRScannedExcerpt(t *testing.T) {
	tess := tesseract(t)
	var progress []int
	doc, err := ParseOptions{OCR: tess, Progress: func(done, total int) { progress = append(progress, done*100+total) }}.
		ParseFile(context.Background(), corpus.Path(t, "books/R-intro-scan-excerpt.pdf"))
	require.NoError(t, err)
	require.Equal(t, 4, doc.Pages)
	require.NotNil(t, doc.OCR)
	require.Equal(t, citebook.OCRReport{Pages: 4, Read: 4}, *doc.OCR)
	require.Equal(t, []int{104, 204, 304, 404}, progress)

	ref := pdftotext.StripRunning(pdftotext.Pages(t, corpus.Path(t, "books/R-intro.pdf"), "-f", "7", "-l", "10"))
	p, r, f1 := pdftotext.BagF1(pdftotext.WordBag(FullText(doc)), pdftotext.WordBag(ref))
	t.Logf("OCR vs pdftotext of R-intro pp. 7-10: precision %.3f recall %.3f F1 %.3f", p, r, f1)
	require.GreaterOrEqual(t, f1, 0.90)

	tok, err := NewTokenizer()
	require.NoError(t, err)
	_, chunks := Split(doc, "scan", tok, DefaultChunkOptions())
	require.NotEmpty(t, chunks)
	for _, c := range chunks {
		require.NotEmpty(t, c.Geometry, "chunk %q has word boxes", c.Text[:min(40, len(c.Text))])
		for _, w := range c.Geometry {
			require.True(t, w.OCR)
			require.True(t, w.X0 < w.X1 && w.Y0 < w.Y1 && w.X1 <= 1 && w.Y1 <= 1, "%+v", w)
			require.Contains(t, []int{1, 2, 3, 4}, w.Page)
		}
	}
	var printed []string
	for _, c := range chunks {
		printed = append(printed, c.PrintedStart)
	}
	t.Logf("printed pages of chunks: %s", strings.Join(slices.Compact(printed), " "))
}

// scriptedOCR reads two lines of words off every page but the failing one.
type scriptedOCR struct{ fail int }

func (s scriptedOCR) PageWords(_ context.Context, _ string, n int) ([]pdf.OCRWord, error) {
	if n == s.fail {
		return nil, errors.New("tesseract crashed")
	}
	var ws []pdf.OCRWord
	// Words differ from page to page, or the lines would pass for running
	// heads and feet.
	name := []string{"", "one", "two", "three", "four"}[n]
	for l, line := range []string{"Scanned page " + name + " says hello", "and " + name + " continues on the next line."} {
		x := 0.1
		for _, w := range strings.Fields(line) {
			y := 0.2 + 0.03*float64(l)
			ws = append(ws, pdf.OCRWord{Text: w, X0: x, Y0: y, X1: x + 0.015*float64(len(w)), Y1: y + 0.02, Line: l})
			x += 0.015*float64(len(w)) + 0.01
		}
	}
	return ws, nil
}

// TestOCRPageFailuresAreRecorded: a page OCR cannot read is reported with
// its reason and the rest of the book is still read.
func TestOCRPageFailuresAreRecorded(t *testing.T) {
	var progress []int
	doc, err := ParseOptions{OCR: scriptedOCR{fail: 2}, Progress: func(done, total int) { progress = append(progress, done) }}.
		ParseFile(context.Background(), corpus.Path(t, "books/R-intro-scan-excerpt.pdf"))
	require.NoError(t, err)
	require.Equal(t, 4, doc.OCR.Pages)
	require.Equal(t, 3, doc.OCR.Read)
	require.Equal(t, []citebook.PageFailure{{Page: 2, Error: "tesseract crashed"}}, doc.OCR.Failed)
	require.Equal(t, []int{1, 2, 3, 4}, progress)
	text := FullText(doc)
	require.Contains(t, text, "Scanned page three says hello and three continues on the next line.")
	require.NotContains(t, text, "two")

	calls := &countingOCR{}
	_, err = ParseOptions{OCR: calls}.ParseFile(context.Background(), corpus.Path(t, "books/R-intro.pdf"))
	require.NoError(t, err)
	require.Zero(t, calls.n.Load(), "a PDF with a text layer (and blank pages) is not sent to OCR")
}

type countingOCR struct{ n atomic.Int64 }

func (c *countingOCR) PageWords(context.Context, string, int) ([]pdf.OCRWord, error) {
	c.n.Add(1)
	return nil, nil
}
