package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"errors"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/pdf"
)

// supported is the list users see when a format is refused.
const supported = "PDF, EPUB, Markdown (.md, .markdown) and plain text (.txt)"

// ParseOptions are a parse's limits and its optional collaborators.
type ParseOptions struct {
	// Limits bound the parse. With OCR, a zero Timeout means
	// DefaultOCRTimeout: Tesseract takes seconds a page.
	Limits Limits
	// OCR reads image-only PDF pages; nil refuses PDFs without a text
	// layer, as before.
	OCR pdf.OCR
	// Progress is told after each OCR'd page how many of the image-only
	// pages are done; OCR takes seconds a page.
	Progress func(done, total int)
	// path is the file being parsed, for OCR tools that read files.
	path string
}

// DefaultOCRTimeout bounds a parse that reads pages by OCR, unless
// Limits.Timeout says otherwise: a few hundred scanned pages at a few
// seconds each.
const DefaultOCRTimeout = time.Hour

// limits are the options' Limits with defaults, the OCR timeout included.
func (o ParseOptions) limits() Limits {
	l := o.Limits
	if o.OCR != nil && l.Timeout <= 0 {
		l.Timeout = DefaultOCRTimeout
	}
	return l.WithDefaults()
}

// ParseFile parses the book at path within DefaultLimits.
func ParseFile(ctx context.Context, path string) (*Document, error) {
	return ParseOptions{}.ParseFile(ctx, path)
}

// Parse detects the format of a book and parses it within o.Limits, with
// the options' collaborators (OCR). Magic bytes win over the name (a PDF
// called .txt is still a PDF); the extension decides between text formats.
// name is only used for its extension and in messages. The parse stops at
// the limits' Timeout or when ctx ends.
func (o ParseOptions) Parse(ctx context.Context, name string, r io.ReaderAt, size int64) (*Document, error) {
	l := o.limits()
	ctx, cancel := l.WithDeadline(ctx)
	defer cancel()
	doc, err := o.parse(ctx, l, name, r, size)
	if err != nil && ctx.Err() != nil {
		// Whatever broke last, the deadline or the cancellation is the cause.
		return nil, l.DeadlineError(ctx)
	}
	return doc, err
}

func (o ParseOptions) parse(ctx context.Context, l Limits, name string, r io.ReaderAt, size int64) (*Document, error) {
	format, err := checkFormat(l, name, r, size)
	if err != nil {
		return nil, err
	}
	switch format {
	case citebook.FormatPDF:
		doc, err := pdf.Parse(ctx, r, size, pdf.Options{Limits: l, OCR: o.OCR, Progress: o.Progress, Path: o.path})
		if err != nil {
			return nil, err
		}
		doc.Language = detectLanguage(sampleText(doc), "")
		return doc, nil
	case citebook.FormatEPUB:
		return parseEPUB(ctx, r, size, l)
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read file")
	}
	data = decodeBOM(data)
	if format == citebook.FormatMarkdown {
		return ParseMarkdown(ctx, data)
	}
	return ParseText(ctx, data)
}

// ParseFile parses the book at path with these options.
func (o ParseOptions) ParseFile(ctx context.Context, path string) (*Document, error) {
	o.path = path
	f, err := os.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, citebook.Errorf(citebook.ENOTFOUND, "file not found: %s", path)
	} else if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot open %s", path)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "cannot read %s", path)
	}
	if st.IsDir() {
		return nil, citebook.Errorf(citebook.EINVALID, "%s is a directory, not a book", path)
	}
	return o.Parse(ctx, filepath.Base(path), f, st.Size())
}

// checkFormat refuses an empty or too large file and detects the format of
// the rest from its head, name and (for zips) directory: what Parse and
// Sniff both start with.
func checkFormat(l Limits, name string, r io.ReaderAt, size int64) (citebook.Format, error) {
	if size == 0 {
		return "", citebook.Errorf(citebook.EINVALID, "empty file")
	}
	if size > l.MaxFileSize {
		return "", citebook.Errorf(citebook.ETOOLARGE, "file is larger than %d MiB", l.MaxFileSize>>20)
	}
	head := make([]byte, min(size, 1024))
	if _, err := r.ReadAt(head, 0); err != nil && !errors.Is(err, io.EOF) {
		return "", citebook.Wrap(err, citebook.EINVALID, "cannot read file")
	}
	return detectFormat(name, head, r, size)
}

func detectFormat(name string, head []byte, r io.ReaderAt, size int64) (citebook.Format, error) {
	ext := strings.ToLower(filepath.Ext(name))
	switch {
	case bytes.HasPrefix(bytes.TrimLeft(head, "\xef\xbb\xbf \t\r\n"), []byte("%PDF-")),
		ext == ".pdf" && bytes.Contains(head, []byte("%PDF-")):
		return citebook.FormatPDF, nil
	case bytes.HasPrefix(head, []byte("PK\x03\x04")) || bytes.HasPrefix(head, []byte("PK\x05\x06")):
		if ext == ".epub" || isEPUBZip(r, size) {
			return citebook.FormatEPUB, nil
		}
		return "", citebook.Errorf(citebook.EINVALID, "unsupported format: a zip archive that is not an EPUB; citebook reads %s", supported)
	}
	switch ext {
	case ".pdf":
		return "", citebook.Errorf(citebook.EINVALID, "%s is named .pdf but is not a PDF file", name)
	case ".epub":
		return "", citebook.Errorf(citebook.EINVALID, "%s is named .epub but is not a zip archive", name)
	case ".md", ".markdown", ".mdown", ".mkd", ".txt", ".text", "":
		if !hasUTF16BOM(head) && !textual(head) {
			return "", citebook.Errorf(citebook.EINVALID, "%s is a binary file, not text; citebook reads %s", name, supported)
		}
		if ext == ".txt" || ext == ".text" || ext == "" {
			return citebook.FormatText, nil
		}
		return citebook.FormatMarkdown, nil
	}
	return "", citebook.Errorf(citebook.EINVALID, "unsupported format %q; citebook reads %s", ext, supported)
}

// isEPUBZip reports a zip whose mimetype entry or container file marks an
// EPUB, wherever the packager put them.
func isEPUBZip(r io.ReaderAt, size int64) bool {
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return false
	}
	for _, f := range zr.File {
		name := strings.ToLower(f.Name)
		if strings.HasSuffix(name, "meta-inf/container.xml") {
			return true
		}
		if (name == "mimetype" || strings.HasSuffix(name, "/mimetype")) && f.UncompressedSize64 < 64 {
			rc, err := f.Open()
			if err != nil {
				continue
			}
			b, _ := io.ReadAll(io.LimitReader(rc, 64))
			rc.Close()
			if strings.TrimSpace(string(b)) == "application/epub+zip" {
				return true
			}
		}
	}
	return false
}

// textual reports whether the start of a file looks like text rather than
// binary data.
func textual(head []byte) bool {
	if bytes.IndexByte(head, 0) >= 0 {
		return false
	}
	// A multi-byte character may be cut at the end of the sample.
	for i := 0; i < 3 && len(head) > 0 && !utf8.Valid(head); i++ {
		head = head[:len(head)-1]
	}
	return utf8.Valid(head) || looksText(head)
}
