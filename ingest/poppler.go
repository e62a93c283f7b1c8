package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os/exec"
	"strconv"
	"strings"

	"github.com/citebook/citebook"
)

// Poppler renders PDF pages with poppler's pdftoppm (Debian poppler-utils).
// An external program rather than Go code: no maintained pure-Go PDF
// renderer draws fonts, images and vector art faithfully, and pdftoppm is
// the renderer pdftotext's reference text comes from. It is optional: a
// server without it shows the reader's text view instead of page images.
type Poppler struct {
	bin string
}

// FindPoppler looks pdftoppm up on PATH; the error says how to install it.
func FindPoppler() (*Poppler, error) {
	bin, err := exec.LookPath("pdftoppm")
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE,
			"pdftoppm not found; install poppler-utils (apt-get install poppler-utils) to see page images")
	}
	return &Poppler{bin: bin}, nil
}

// maxRenderBytes caps one rendered page, so a page declared miles wide
// cannot fill memory or disk.
const maxRenderBytes = 32 << 20

// RenderPage draws physical page n (1-based) of the PDF at path as a PNG
// width pixels wide, keeping the page's proportions.
func (p *Poppler) RenderPage(ctx context.Context, path string, n, width int) ([]byte, error) {
	return p.render(ctx, path, n, "-scale-to-x", strconv.Itoa(width), "-scale-to-y", "-1")
}

// RenderPageDPI draws page n in grey at dpi dots per inch, the input OCR
// wants (about 300 dpi).
func (p *Poppler) RenderPageDPI(ctx context.Context, path string, n, dpi int) ([]byte, error) {
	return p.render(ctx, path, n, "-r", strconv.Itoa(dpi), "-gray")
}

func (p *Poppler) render(ctx context.Context, path string, n int, args ...string) ([]byte, error) {
	if n < 1 {
		return nil, citebook.Errorf(citebook.EINVALID, "page must be a positive number")
	}
	pg := strconv.Itoa(n)
	args = append([]string{"-png", "-f", pg, "-l", pg, "-singlefile"}, args...)
	cmd := exec.CommandContext(ctx, p.bin, append(args, "--", path)...)
	var out, stderr bytes.Buffer
	stdout := &limitedBuffer{buf: &out, max: maxRenderBytes}
	cmd.Stdout = stdout
	cmd.Stderr = &limitedBuffer{buf: &stderr, max: 4096}
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			return nil, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "rendering page %d timed out", n)
		}
		if stdout.over {
			return nil, citebook.Errorf(citebook.ETOOLARGE, "page %d renders larger than %d MiB", n, maxRenderBytes>>20)
		}
		return nil, citebook.Wrap(fmt.Errorf("%w: %s", err, strings.TrimSpace(stderr.String())),
			citebook.EUNAVAILABLE, "cannot render page %d", n)
	}
	if out.Len() == 0 {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "page %d not in the file", n)
	}
	return out.Bytes(), nil
}

var errTooLarge = errors.New("output too large")

// limitedBuffer fails the write that would pass max bytes, which stops the
// child at its next write.
type limitedBuffer struct {
	buf  *bytes.Buffer
	max  int
	over bool
}

func (l *limitedBuffer) Write(b []byte) (int, error) {
	if l.buf.Len()+len(b) > l.max {
		l.over = true
		return 0, errTooLarge
	}
	return l.buf.Write(b)
}
