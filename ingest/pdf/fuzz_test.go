package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"fmt"
	"os"
	"runtime"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/hostile"
)

// FuzzParsePDF feeds Parse corpus PDFs (small ones whole, large ones as
// prefixes, which exercise truncation) and mutations of them: whatever the
// input, the parser must return a document or a coded error, never panic.
func FuzzParsePDF(f *testing.F) {
	for _, s := range [][]byte{
		nil,
		[]byte("%PDF-1.4\n%%EOF\n"),
		[]byte("%PDF-1.7\n1 0 obj<</Type/Catalog/Pages 2 0 R>>endobj\n2 0 obj<</Type/Pages/Kids[3 0 R]/Count 1>>endobj\n" +
			"3 0 obj<</Type/Page/Parent 2 0 R/Contents 4 0 R>>endobj\n4 0 obj<</Length 20>>stream\nBT /F1 12 Tf (Hi) Tj ET\nendstream endobj\n" +
			"trailer<</Root 1 0 R>>\nstartxref\n0\n%%EOF\n"),
		[]byte("%PDF-1.4\nxref\n0 1\n0000000000 65535 f \ntrailer<</Size 1/Root 1 0 R>>\nstartxref\n9\n%%EOF\n"),
	} {
		f.Add(s)
	}
	if os.Getenv("CITEBOOK_CORPUS") != "" {
		for _, book := range []string{"dtc-paper.pdf", "hash_usenix.pdf", "R-intro.pdf", "WaldenFull.pdf", "R-intro-scan-excerpt.pdf"} {
			data, err := os.ReadFile(corpus.Path(f, "books/"+book))
			if err != nil {
				f.Fatal(err)
			}
			if len(data) <= 300<<10 {
				f.Add(data)
			}
			f.Add(data[:min(len(data), 64<<10)])
		}
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if code := citebook.ErrorCode(err); code != citebook.EINVALID && code != citebook.EUNAVAILABLE && code != citebook.ETOOLARGE {
				t.Fatalf("error with code %q: %v", code, err)
			}
			return
		}
		for _, s := range doc.Sections {
			for _, b := range s.Blocks {
				if len(b.Pages) == 0 || b.Pages[0].Offset != 0 {
					t.Fatalf("block without a page span at offset 0: %+v", b.Pages)
				}
				if b.Header < 0 || b.Header > len(b.Text) {
					t.Fatalf("table header of %d bytes in a block of %d", b.Header, len(b.Text))
				}
				for _, sp := range b.Pages {
					if sp.Offset > len(b.Text) || sp.Page < 1 || sp.Page > doc.Pages {
						t.Fatalf("bad page span %+v (text %d bytes, %d pages)", sp, len(b.Text), doc.Pages)
					}
				}
			}
		}
	})
}

// FuzzPDFStreamDecode puts fuzzed bytes, raw or as a zlib stream, into a
// page's content stream under small limits. Invariant: decoding never
// holds more than the per-stream budget (checked on the heap) and the
// result is a document or a coded error — a limit passed is too_large.
func FuzzPDFStreamDecode(f *testing.F) {
	f.Add([]byte("BT /F1 12 Tf 72 700 Td (Hello) Tj ET"), false, uint16(40))
	f.Add([]byte("BT /F1 12 Tf 72 700 Td (Hello) Tj ET"), true, uint16(3))
	f.Add(make([]byte, 4096), true, uint16(1000))                         // zeros: a little bomb
	f.Add([]byte("q 1 0 0 1 0 0 cm /X0 Do Q 0 0 m S"), true, uint16(500)) // forms and ops
	f.Fuzz(func(t *testing.T, data []byte, compress bool, repeat uint16) {
		const streamCap = 1 << 20
		n := int(repeat)%2048 + 1
		if len(data) > 0 && len(data)*n > 4<<20 { // keep the harness itself cheap
			n = max(1, (4<<20)/len(data))
		}
		plain := bytes.Repeat(data, n)
		start := time.Now()
		body, filter := plain, ""
		if compress {
			var z bytes.Buffer
			zw := zlib.NewWriter(&z)
			zw.Write(plain)
			zw.Close()
			body, filter = z.Bytes(), " /Filter /FlateDecode"
		}
		pdfData := hostile.PDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> /XObject << /X0 4 0 R >> >> /Contents 4 0 R >>",
			"<< /Length " + strconv.Itoa(len(body)) + filter + " /Subtype /Form >>\nstream\n" + string(body) + "\nendstream",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		}, "")
		lim := parsing.Limits{MaxStreamBytes: streamCap, MaxDecodedBytes: 4 * streamCap, MaxOperators: 200_000, Timeout: 20 * time.Second}
		var before runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := parseWithin(context.Background(), lim, bytes.NewReader(pdfData), int64(len(pdfData)))
		var after runtime.MemStats
		runtime.ReadMemStats(&after)
		if grew := int64(after.TotalAlloc - before.TotalAlloc); grew > 64*streamCap+int64(64*len(plain)) {
			t.Fatalf("parse allocated %d MiB for a %d-byte stream", grew>>20, len(plain))
		}
		if d := time.Since(start); d > 10*time.Second {
			t.Fatalf("parse of a %d-byte stream took %v", len(plain), d)
		}
		if len(plain) > streamCap && citebook.ErrorCode(err) != citebook.ETOOLARGE {
			t.Fatalf("stream of %d bytes over the %d cap: err %v", len(plain), streamCap, err)
		}
		if err != nil {
			switch citebook.ErrorCode(err) {
			case citebook.EINVALID, citebook.ETOOLARGE:
			default:
				t.Fatalf("error with code %q: %v", citebook.ErrorCode(err), err)
			}
		}
	})
}

// FuzzDecryptAES256 mutates AES-256 files made by qpdf. Invariants of the
// decrypting copy: it never panics, never moves a byte offset (the copy
// has the input's length) and only ever returns it for a file that
// verifies against the empty password; the precheck of the same bytes
// never panics either.
func FuzzDecryptAES256(f *testing.F) {
	for _, name := range []string{"aes256.pdf", "aes256-objstm.pdf", "aes256-pw.pdf"} {
		data, err := os.ReadFile("testdata/" + name)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data)
	}
	f.Fuzz(func(t *testing.T, data []byte) {
		out, err := func() (out []byte, err error) {
			defer func() {
				if r := recover(); r != nil {
					err = fmt.Errorf("panic: %v", r)
				}
			}()
			return decryptAES256(bytes.NewReader(data), int64(len(data)))
		}()
		if err != nil && strings.HasPrefix(err.Error(), "panic: ") {
			t.Fatalf("decrypt: %v", err)
		}
		if err == nil && len(out) != len(data) {
			t.Fatalf("copy of %d bytes for a %d-byte file", len(out), len(data))
		}
		b := newDocBudget(context.Background(), parsing.Limits{MaxStreamBytes: 1 << 20})
		checkPDFStructure(bytes.NewReader(data), int64(len(data)), b)
	})
}
