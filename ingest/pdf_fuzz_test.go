package ingest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

// FuzzParsePDF feeds ParsePDF corpus PDFs (small ones whole, large ones as
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
		doc, err := ParsePDF(context.Background(), bytes.NewReader(data), int64(len(data)))
		if err != nil {
			if code := citebook.ErrorCode(err); code != citebook.EINVALID && code != citebook.EUNAVAILABLE {
				t.Fatalf("error with code %q: %v", code, err)
			}
			return
		}
		for _, s := range doc.Sections {
			for _, b := range s.Blocks {
				if len(b.Pages) == 0 || b.Pages[0].Offset != 0 {
					t.Fatalf("block without a page span at offset 0: %+v", b.Pages)
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
