package ingest

import (
	"context"
	"os"
	"os/exec"
	"testing"
	"time"

	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/pdftotext"
)

// BenchmarkIngest measures what a user waits for when a PDF is added: parse,
// structure and chunk (ParseFile through Split), with the tokenizer loaded
// once as a server does. Every iteration also runs poppler's pdftotext on
// the same file, untimed by the benchmark clock but timed on its own, so
// machine load weighs on both alike. It reports:
//
//	pages/s            ingest throughput, wall time
//	pdftotext-pages/s  poppler on the same file in the same iterations
//	x-pdftotext        ingest throughput / pdftotext throughput (target ≥ 0.5)
//	parse-ms, split-ms wall time per book of each stage
//
// The targets are at least 100 pages/s and 0.5 x-pdftotext.
func BenchmarkIngest(b *testing.B) {
	tok := testTokenizer(b)
	for _, book := range []string{"R-intro.pdf", "debian-reference.en.pdf"} {
		b.Run(book, func(b *testing.B) {
			path := corpus.Path(b, "books/"+book)
			tool := pdftotext.Path(b)
			st, err := os.Stat(path)
			if err != nil {
				b.Fatal(err)
			}
			b.SetBytes(st.Size())
			ctx := context.Background()
			var parse, split, ref time.Duration
			pages := 0
			for b.Loop() {
				start := time.Now()
				doc, err := ParseFile(ctx, path)
				if err != nil {
					b.Fatal(err)
				}
				parsed := time.Now()
				if _, chunks := Split(doc, book, tok, DefaultChunkOptions()); len(chunks) == 0 {
					b.Fatal("no chunks")
				}
				split += time.Since(parsed)
				parse += parsed.Sub(start)
				pages += doc.Pages

				b.StopTimer()
				start = time.Now()
				if out, err := exec.Command(tool, path, os.DevNull).CombinedOutput(); err != nil {
					b.Fatalf("pdftotext: %v: %s", err, out)
				}
				ref += time.Since(start)
				b.StartTimer()
			}
			ours := (parse + split).Seconds()
			n := float64(b.N)
			b.ReportMetric(float64(pages)/ours, "pages/s")
			b.ReportMetric(float64(pages)/ref.Seconds(), "pdftotext-pages/s")
			b.ReportMetric(ref.Seconds()/ours, "x-pdftotext")
			b.ReportMetric(parse.Seconds()*1000/n, "parse-ms")
			b.ReportMetric(split.Seconds()*1000/n, "split-ms")
		})
	}
}
