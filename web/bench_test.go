package web

import (
	"context"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/qa"
	"github.com/citebook/citebook/web/auth"
)

// fixedSearcher returns the same hits at once, so the benchmark measures
// the HTTP layer (auth, rate limit, metrics, JSON) and not retrieval.
type fixedSearcher struct{ res []qa.SearchResult }

func (f fixedSearcher) Search(context.Context, citebook.Principal, qa.Request) ([]qa.SearchResult, error) {
	return f.res, nil
}

// BenchmarkSearchHTTP is the cost the web layer adds to one /v1/search
// with a real token lookup in SQLite and 10 hits in the response; the
// load goal of 1000 search req/s on 2 cores leaves 2 ms of CPU per request
// for everything, so this should stay well under 1 ms.
func BenchmarkSearchHTTP(b *testing.B) {
	e := newEnv(b, envOpts{})
	hits := make([]citebook.Hit, 10)
	for i := range hits {
		hits[i] = citebook.Hit{Chunk: e.lib.chunks["rintro"][i], Score: 0.5}
	}
	e.srv.cfg.Searcher = fixedSearcher{res: []qa.SearchResult{{Query: "q", Hits: hits}}}
	h := e.srv.Handler()
	body := `{"question":"What are the intrinsic attributes of an object?"}`
	b.ReportAllocs()
	b.ResetTimer()
	b.RunParallel(func(pb *testing.PB) {
		for pb.Next() {
			postSearch(b, h, e.tokens["reader"], body)
		}
	})
}

// postSearch sends one /v1/search with the token and fails the benchmark on
// any status but 200.
func postSearch(b *testing.B, h http.Handler, token, body string) {
	req, _ := http.NewRequest(http.MethodPost, "/v1/search", strings.NewReader(body))
	req.Header.Set("Authorization", "Bearer "+token)
	req.Header.Set("Content-Type", "application/json")
	w := &discard{h: http.Header{}}
	h.ServeHTTP(w, req)
	if w.status != http.StatusOK {
		b.Fatalf("status %d", w.status)
	}
}

type discard struct {
	h      http.Header
	status int
}

func (d *discard) Header() http.Header { return d.h }
func (d *discard) Write(p []byte) (int, error) {
	if d.status == 0 {
		d.status = http.StatusOK
	}
	return io.Discard.Write(p)
}
func (d *discard) WriteHeader(s int) { d.status = s }

// BenchmarkSearchResponse is the whole HTTP path of one /v1/search as serve
// runs it (cached token check, metrics, body decoding) answering five real
// R-intro hits, the default k, with the response written by goccy/go-json
// (jsonSerializer) and, in the same run, by echo's default encoding/json
// serializer it replaced; it logs CPU per request and the ratio.
func BenchmarkSearchResponse(b *testing.B) {
	e := newEnv(b, envOpts{})
	e.srv.cfg.Tokens = auth.NewCached(auth.NewStore(e.meta.SQL()))
	chunks := e.lib.chunks["rintro"]
	hits := make([]citebook.Hit, 5)
	for i := range hits {
		hits[i] = citebook.Hit{Chunk: chunks[len(chunks)/3+i], Score: 0.031 - float64(i)/1000}
	}
	e.srv.cfg.Searcher = fixedSearcher{res: []qa.SearchResult{{Query: "q", Hits: hits}}}
	h := e.srv.Handler()
	body := `{"question":"What are the intrinsic attributes of an object?"}`
	run := func(b *testing.B, s echo.JSONSerializer) float64 {
		e.srv.echo.JSONSerializer = s
		b.ReportAllocs()
		cpu0 := cpuTime()
		b.ResetTimer()
		for b.Loop() {
			postSearch(b, h, e.tokens["reader"], body)
		}
		us := float64(cpuTime()-cpu0) / float64(time.Microsecond) / float64(b.N)
		b.ReportMetric(us, "cpu-µs/op")
		return us
	}
	var old, cur float64
	b.Run("encoding-json", func(b *testing.B) { old = run(b, echo.DefaultJSONSerializer{}) })
	b.Run("goccy-go-json", func(b *testing.B) { cur = run(b, jsonSerializer{}) })
	if old > 0 && cur > 0 {
		b.Logf("CPU per /v1/search response: %.1f µs with encoding/json, %.1f µs with goccy/go-json: %.2f× less", old, cur, old/cur)
	}
}
