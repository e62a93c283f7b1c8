package ingest

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/pdf"
)

// Tesseract reads page images with the tesseract OCR engine (Debian
// tesseract-ocr plus language data such as tesseract-ocr-eng), pages drawn
// by poppler's pdftoppm. External programs: no maintained pure-Go OCR exists,
// and Tesseract's word boxes (TSV output) are what citation boxes need.
type Tesseract struct {
	bin       string
	render    *Poppler
	languages string
	dpi       int
}

// ocrDPI is the resolution pages are drawn at for OCR: Tesseract is tuned
// for text about 20–30 pixels high, which 300 dpi gives book type.
const ocrDPI = 300

// FindTesseract looks tesseract up on PATH and checks it has the language
// data asked for ("eng", "eng+chi_sim"); pages are drawn by render.
func FindTesseract(ctx context.Context, render *Poppler, languages string) (*Tesseract, error) {
	if render == nil {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "OCR needs pdftoppm; install poppler-utils")
	}
	bin, err := exec.LookPath("tesseract")
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "tesseract not found; install tesseract-ocr and tesseract-ocr-eng to read scanned PDFs")
	}
	out, err := exec.CommandContext(ctx, bin, "--list-langs").CombinedOutput()
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "tesseract --list-langs failed")
	}
	have := map[string]bool{}
	for _, l := range strings.Split(string(out), "\n") {
		have[strings.TrimSpace(l)] = true
	}
	for _, l := range strings.Split(languages, "+") {
		if !have[l] {
			return nil, citebook.Errorf(citebook.EUNAVAILABLE, "tesseract has no %q language data; install tesseract-ocr-%s",
				l, strings.ReplaceAll(l, "_", "-"))
		}
	}
	return &Tesseract{bin: bin, render: render, languages: languages, dpi: ocrDPI}, nil
}

// PageWords draws page n and reads its words with their boxes.
func (t *Tesseract) PageWords(ctx context.Context, path string, n int) ([]pdf.OCRWord, error) {
	img, err := t.render.RenderPageGray(ctx, path, n, t.dpi)
	if err != nil {
		return nil, err
	}
	cmd := exec.CommandContext(ctx, t.bin, "stdin", "stdout", "-l", t.languages, "--dpi", strconv.Itoa(t.dpi), "tsv")
	cmd.Stdin = bytes.NewReader(img)
	var out, stderr bytes.Buffer
	cmd.Stdout = &limitedBuffer{buf: &out, max: 16 << 20}
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	if err := cmd.Run(); err != nil {
		return nil, citebook.Wrap(fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String())), citebook.EUNAVAILABLE,
			"OCR of page %d failed", n)
	}
	return parseTesseractTSV(out.Bytes())
}

// parseTesseractTSV reads Tesseract's TSV: a level-1 row gives the image
// size, level-5 rows are words (left, top, width, height in pixels). Words
// Tesseract has no confidence in (-1) or that are blank are skipped.
func parseTesseractTSV(b []byte) ([]pdf.OCRWord, error) {
	var words []pdf.OCRWord
	var iw, ih float64
	sc := bufio.NewScanner(bytes.NewReader(b))
	sc.Buffer(make([]byte, 64<<10), 1<<20)
	for first := true; sc.Scan(); first = false {
		f := strings.Split(sc.Text(), "\t")
		if first && len(f) > 0 && f[0] == "level" {
			continue
		}
		if len(f) < 12 {
			continue
		}
		n := make([]float64, 11)
		ok := true
		for i := range n {
			v, err := strconv.ParseFloat(f[i], 64)
			if err != nil {
				ok = false
				break
			}
			n[i] = v
		}
		if !ok {
			continue
		}
		switch n[0] {
		case 1:
			iw, ih = n[8], n[9]
		case 5:
			text := strings.TrimSpace(strings.Join(f[11:], "\t"))
			if text == "" || n[10] < 0 || iw <= 0 || ih <= 0 {
				continue
			}
			wd := pdf.OCRWord{
				Text: text,
				X0:   n[6] / iw, Y0: n[7] / ih, X1: (n[6] + n[8]) / iw, Y1: (n[7] + n[9]) / ih,
				Line: lineKey(int(n[2])%1000, int(n[3])%1000, int(n[4])%1000),
			}
			// A box must be a box on the page; anything else is noise.
			if !(wd.X0 >= 0 && wd.X0 < wd.X1 && wd.X1 <= 1 && wd.Y0 >= 0 && wd.Y0 < wd.Y1 && wd.Y1 <= 1) {
				continue
			}
			words = append(words, wd)
		}
	}
	if err := sc.Err(); err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "unreadable OCR output")
	}
	if iw <= 0 && len(b) > 0 {
		return nil, citebook.Errorf(citebook.EUNAVAILABLE, "OCR output has no page size")
	}
	return words, nil
}

// lineKey numbers a Tesseract line from its block, paragraph and line.
func lineKey(block, par, line int) int { return (block*1000+par)*1000 + line }
