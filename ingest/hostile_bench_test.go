package ingest

import (
	"bytes"
	"context"
	"runtime/metrics"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/citebook/citebook/internal/hostile"
)

// BenchmarkParseHostileConcurrent parses each hostile file of issue 10 twice
// at once in one process — as two /v1/preview calls do — and reports the
// peak Go memory (runtime/metrics, sampled every 2 ms) and the time. The
// target is a peak under 512 MB (issue 10 measured 6.4 GB before the
// limits). bench/hostile.sh measures process RSS against a baseline binary.
func BenchmarkParseHostileConcurrent(b *testing.B) {
	files := []struct {
		name string
		gen  func(*bytes.Buffer) error
	}{
		{"bomb", func(w *bytes.Buffer) error { return hostile.FlateBomb(w, 1<<30) }},
		{"shared", func(w *bytes.Buffer) error { return hostile.SharedStream(w, 20000, 16<<20) }},
		{"objstm", func(w *bytes.Buffer) error { return hostile.ObjStmBomb(w, 1<<30) }},
	}
	for _, f := range files {
		var buf bytes.Buffer
		if err := f.gen(&buf); err != nil {
			b.Fatal(err)
		}
		data := buf.Bytes()
		b.Run(f.name, func(b *testing.B) {
			var peak atomic.Uint64
			stop := make(chan struct{})
			sampled := make(chan struct{})
			go func() {
				defer close(sampled)
				s := []metrics.Sample{{Name: "/memory/classes/total:bytes"}, {Name: "/memory/classes/heap/released:bytes"}}
				for {
					metrics.Read(s)
					if v := s[0].Value.Uint64() - s[1].Value.Uint64(); v > peak.Load() {
						peak.Store(v)
					}
					select {
					case <-stop:
						return
					case <-time.After(2 * time.Millisecond):
					}
				}
			}()
			for b.Loop() {
				var wg sync.WaitGroup
				for range 2 {
					wg.Go(func() {
						Parse(context.Background(), f.name+".pdf", bytes.NewReader(data), int64(len(data)))
					})
				}
				wg.Wait()
			}
			close(stop)
			<-sampled
			b.ReportMetric(float64(peak.Load())/(1<<20), "peak-MB")
		})
	}
}
