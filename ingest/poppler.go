package ingest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"image"
	"image/png"
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

// maxRenderBytes caps the raw pixels of one rendered page (a 2000-pixel
// wide US Letter page is 15 MB), so a page declared miles long cannot fill
// memory.
const maxRenderBytes = 64 << 20

// RenderPage draws physical page n (1-based) of the PDF at path as a PNG
// width pixels wide, keeping the page's proportions. pdftoppm writes raw
// pixels and Go encodes the PNG at its fastest setting: pdftoppm's own PNG
// encoder spent 0.24 s of CPU on a 1000-pixel page that it drew in 0.03 s.
// Pages with no colour are encoded as greyscale, a third of the size.
func (p *Poppler) RenderPage(ctx context.Context, path string, n, width int) ([]byte, error) {
	raw, err := p.render(ctx, path, n, "-scale-to-x", strconv.Itoa(width), "-scale-to-y", "-1")
	if err != nil {
		return nil, err
	}
	img, err := decodePNM(raw)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EUNAVAILABLE, "pdftoppm drew page %d unreadably", n)
	}
	var buf bytes.Buffer
	enc := png.Encoder{CompressionLevel: png.BestSpeed}
	if err := enc.Encode(&buf, img); err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "cannot encode page %d", n)
	}
	return buf.Bytes(), nil
}

// RenderPageGray draws page n in grey at dpi dots per inch as a PGM image,
// the input OCR wants (about 300 dpi).
func (p *Poppler) RenderPageGray(ctx context.Context, path string, n, dpi int) ([]byte, error) {
	return p.render(ctx, path, n, "-r", strconv.Itoa(dpi), "-gray")
}

// decodePNM reads the binary PPM (P6) or PGM (P5) pdftoppm writes, 8 bits
// per sample. A colour page whose pixels are all grey becomes an image.Gray.
func decodePNM(b []byte) (image.Image, error) {
	var magic string
	var w, h, maxv int
	r := bytes.NewReader(b)
	if _, err := fmt.Fscan(r, &magic, &w, &h, &maxv); err != nil {
		return nil, err
	}
	if _, err := r.ReadByte(); err != nil { // the single whitespace before the pixels
		return nil, err
	}
	pix := b[len(b)-r.Len():]
	if maxv != 255 || w <= 0 || h <= 0 || w > 1<<16 || h > 1<<16 {
		return nil, errors.New("unsupported PNM image")
	}
	switch magic {
	case "P5":
		if len(pix) < w*h {
			return nil, errors.New("short PGM image")
		}
		return &image.Gray{Pix: pix[:w*h], Stride: w, Rect: image.Rect(0, 0, w, h)}, nil
	case "P6":
		if len(pix) < 3*w*h {
			return nil, errors.New("short PPM image")
		}
		grey := true
		for i := 0; i < 3*w*h && grey; i += 3 {
			grey = pix[i] == pix[i+1] && pix[i] == pix[i+2]
		}
		if grey {
			g := image.NewGray(image.Rect(0, 0, w, h))
			for i := range g.Pix {
				g.Pix[i] = pix[3*i]
			}
			return g, nil
		}
		img := image.NewNRGBA(image.Rect(0, 0, w, h))
		for i, j := 0, 0; i < 3*w*h; i, j = i+3, j+4 {
			img.Pix[j], img.Pix[j+1], img.Pix[j+2], img.Pix[j+3] = pix[i], pix[i+1], pix[i+2], 255
		}
		return img, nil
	}
	return nil, fmt.Errorf("not a binary PNM image (%q)", magic)
}

func (p *Poppler) render(ctx context.Context, path string, n int, args ...string) ([]byte, error) {
	if n < 1 {
		return nil, citebook.Errorf(citebook.EINVALID, "page must be a positive number")
	}
	pg := strconv.Itoa(n)
	args = append([]string{"-f", pg, "-l", pg, "-singlefile"}, args...)
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
