package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"io"

	"golang.org/x/text/encoding"
	xunicode "golang.org/x/text/encoding/unicode"
	"golang.org/x/text/transform"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/pdf"
)

// Sniff refuses, with the error Parse would end with, files that are
// plainly not books: empty, too large, neither PDF, EPUB nor text (binary),
// a PDF whose trailer or cross-reference table cannot be read or that
// needs a password, a zip that is not a readable EPUB. It reads the head,
// the PDF trailer and cross-reference data or the zip directory, never the
// content (an AES-256 PDF is decrypted in memory to check it opens), so a
// nil result does not promise the parse will succeed.
func (o ParseOptions) Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error {
	l := o.Limits.WithDefaults()
	ctx, cancel := l.WithDeadline(ctx)
	defer cancel()
	format, err := checkFormat(l, name, r, size)
	if err != nil {
		return err
	}
	switch format {
	case citebook.FormatPDF:
		err := pdf.Check(ctx, r, size, l)
		if err != nil && ctx.Err() != nil {
			return l.DeadlineError(ctx)
		}
		return err
	case citebook.FormatEPUB:
		zr, err := zip.NewReader(r, size)
		if err != nil {
			return citebook.Wrap(err, citebook.EINVALID, "not a valid EPUB: the zip archive cannot be read")
		}
		_, err = openArchive(zr, l)
		return err
	}
	return nil
}

// hasUTF16BOM reports a byte-order mark of UTF-16 in either byte order.
func hasUTF16BOM(head []byte) bool {
	return bytes.HasPrefix(head, []byte{0xff, 0xfe}) || bytes.HasPrefix(head, []byte{0xfe, 0xff})
}

// decodeBOM turns UTF-16 text with a byte-order mark into UTF-8 (and drops
// a UTF-8 BOM); anything else is returned as it is.
func decodeBOM(data []byte) []byte {
	if !hasUTF16BOM(data) && !bytes.HasPrefix(data, []byte("\xef\xbb\xbf")) {
		return data
	}
	out, _, err := transform.Bytes(xunicode.BOMOverride(encoding.Nop.NewDecoder()), data)
	if err != nil {
		return data
	}
	return out
}
