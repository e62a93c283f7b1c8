//go:build unix

package main

import (
	"bufio"
	"context"
	"encoding/json"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/web"
	"github.com/citebook/citebook/web/auth"
)

// BenchmarkServeSearch is one /v1/search through the server serve builds
// (webConfig) over a real library, in process: the HTTP layer, the cached
// token check, ACL, the change-log sync, retrieval, fusion, threshold and
// the JSON response, so -cpuprofile and -memprofile show where a search's
// CPU and allocations go without a load generator sharing the cores. It
// reports server CPU per search (this process's user+system time).
//
// CITEBOOK_BENCH_DATA names a built library (a copy: a token is created in
// it unless DATA/.token holds one, as bench/load.sh's libraries do) and
// CITEBOOK_BENCH_QUESTIONS a file of questions, one a line (bench/load.sh's
// books-N/questions.txt); without them R-intro is indexed into a temporary
// library and asked about R.
func BenchmarkServeSearch(b *testing.B) {
	ctx := context.Background()
	questions := []string{
		"How are missing values represented?", "How do I change the length of an object?",
		"What are the intrinsic attributes of an object?", "How do I read data from a file?",
		"What does the apply function do?", "How do I fit a linear model?",
	}
	data := os.Getenv("CITEBOOK_BENCH_DATA")
	if data == "" {
		data = b.TempDir()
		if out, code := runBench(b, []string{"index", corpus.Path(b, "books/R-intro.pdf"), "--book", "rintro", "--tenant", "default", "--data", data}); code != 0 {
			b.Fatalf("index: %s", out)
		}
	}
	if path := os.Getenv("CITEBOOK_BENCH_QUESTIONS"); path != "" {
		questions = readLines(b, path)
	}
	c := library.Defaults()
	c.Data = data
	c.Serve.Rate = 0 // as bench/load.sh serves (--rate 0)
	a, pipeline, err := library.OpenAnswering(ctx, c, slog.New(slog.DiscardHandler))
	if err != nil {
		b.Fatal(err)
	}
	defer a.Close()
	tokens := auth.NewStore(a.Meta.SQL())
	secret := ""
	if raw, err := os.ReadFile(filepath.Join(data, ".token")); err == nil {
		secret = strings.TrimSpace(string(raw))
	} else if secret, _, err = tokens.Create(ctx, citebook.Principal{Tenant: "default", User: "bench"}); err != nil {
		b.Fatal(err)
	}
	tok, err := ingest.NewTokenizer()
	if err != nil {
		b.Fatal(err)
	}
	runner := a.Runner(index.RunnerOptions{QueueOnly: true})
	defer runner.Close(ctx)
	srv, err := web.New(webConfig(a, pipeline, &c, runner, tokens, tok, prometheus.NewRegistry()))
	if err != nil {
		b.Fatal(err)
	}
	h := srv.Handler()
	bodies := make([]string, len(questions))
	for i, q := range questions {
		raw, _ := json.Marshal(map[string]string{"question": q})
		bodies[i] = string(raw)
	}
	search := func(i int) {
		req := httptest.NewRequest(http.MethodPost, "/v1/search", strings.NewReader(bodies[i%len(bodies)]))
		req.Header.Set("Authorization", "Bearer "+secret)
		req.Header.Set("Content-Type", "application/json")
		rec := httptest.NewRecorder()
		h.ServeHTTP(rec, req)
		if rec.Code != http.StatusOK {
			b.Fatalf("status %d: %s", rec.Code, rec.Body)
		}
	}
	for i := range bodies { // warm the caches the first questions fill
		search(i)
	}
	b.ReportAllocs()
	cpu0 := processCPU()
	b.ResetTimer()
	for i := 0; b.Loop(); i++ {
		search(i)
	}
	b.ReportMetric(float64(processCPU()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
}

// processCPU is this process's user+system CPU time so far.
func processCPU() time.Duration {
	var ru syscall.Rusage
	syscall.Getrusage(syscall.RUSAGE_SELF, &ru)
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// readLines reads a file's non-empty lines.
func readLines(b *testing.B, path string) []string {
	f, err := os.Open(path)
	if err != nil {
		b.Fatal(err)
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := strings.TrimSpace(sc.Text()); l != "" {
			out = append(out, l)
		}
	}
	if len(out) == 0 {
		b.Fatalf("%s: no questions", path)
	}
	return out
}
