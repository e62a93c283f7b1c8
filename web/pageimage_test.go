package web

import (
	"bytes"
	"context"
	"encoding/json"
	"image/png"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/ingest"
)

// poppler returns the real renderer; a missing pdftoppm fails in CI and
// skips on a developer machine.
func poppler(t testing.TB) *ingest.Poppler {
	t.Helper()
	p, err := ingest.FindPoppler()
	if err != nil {
		if os.Getenv("CI") != "" {
			t.Fatalf("%v; CI must install poppler-utils", err)
		}
		t.Skip(err.Error())
	}
	return p
}

// countingRenderer counts renders, to tell a cache hit from a render.
type countingRenderer struct {
	r PageRenderer
	n atomic.Int64
}

func (c *countingRenderer) RenderPage(ctx context.Context, path string, page, width int) ([]byte, error) {
	c.n.Add(1)
	return c.r.RenderPage(ctx, path, page, width)
}

func TestPageImage(t *testing.T) {
	rend := &countingRenderer{r: poppler(t)}
	e := newEnv(t, envOpts{renderer: rend})
	tests := []struct {
		name, who, path string
		status          int
		width           int // of the PNG, when 200
	}{
		{"default width", "reader", "/v1/books/rintro/pages/20.png", 200, 1000},
		{"phone width rounds up to the cache step", "reader", "/v1/books/rintro/pages/20.png?width=390", 200, 400},
		{"capped", "reader", "/v1/books/rintro/pages/20.png?width=99999", 200, 2000},
		{"other tenant", "globex", "/v1/books/rintro/pages/20.png", 404, 0},
		{"no token", "", "/v1/books/rintro/pages/20.png", 401, 0},
		{"closed group", "reader", "/v1/books/moby/pages/1.png", 404, 0},
		{"text book has no page images", "whaler", "/v1/books/moby/pages/1.png", 400, 0},
		{"page zero", "reader", "/v1/books/rintro/pages/0.png", 400, 0},
		{"past the end", "reader", "/v1/books/rintro/pages/9999.png", 404, 0},
		{"bad width", "reader", "/v1/books/rintro/pages/2.png?width=-3", 400, 0},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			res, data := e.do(t, tt.who, "GET", tt.path, nil)
			require.Equal(t, tt.status, res.StatusCode, "%s", data)
			if tt.status != 200 {
				return
			}
			require.Equal(t, "image/png", res.Header.Get("Content-Type"))
			cfg, err := png.DecodeConfig(bytes.NewReader(data))
			require.NoError(t, err)
			require.Equal(t, tt.width, cfg.Width)
			require.InDelta(t, 792.0/612, float64(cfg.Height)/float64(cfg.Width), 0.01, "US Letter proportions")
		})
	}
	before := rend.n.Load()
	res, _ := e.do(t, "reader", "GET", "/v1/books/rintro/pages/20.png?width=950", nil)
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, before, rend.n.Load(), "a second request is served from the disk cache")

	// The page JSON tells the reader whether images exist.
	_, data := e.do(t, "reader", "GET", "/v1/books/rintro/pages/20", nil)
	var pg page
	require.NoError(t, json.Unmarshal(data, &pg))
	require.True(t, pg.Image)
}

// TestPageImageChapterDeny: a page that prints a section withheld from the
// caller is not found as an image, as its text is withheld; other pages
// of the book are served.
func TestPageImageChapterDeny(t *testing.T) {
	lib := books(t)
	var denied citebook.Parent
	for _, p := range lib.parents["rintro"] {
		if p.PageStart >= 20 && len(p.HeadingPath) > 0 {
			denied = p
			break
		}
	}
	require.NotEmpty(t, denied.ID)
	e := newEnv(t, envOpts{renderer: poppler(t), grants: []acl.Grant{{Tenant: "acme", Subject: "ahab", SubjectKind: acl.SubjectUser,
		BookID: "rintro", Path: denied.HeadingPath, Effect: acl.Deny}}})
	page := "/v1/books/rintro/pages/" + strconv.Itoa(denied.PageStart) + ".png?width=200"
	res, data := e.do(t, "whaler", "GET", page, nil)
	require.Equal(t, 404, res.StatusCode, "%s", data)
	res, _ = e.do(t, "reader", "GET", page, nil)
	require.Equal(t, 200, res.StatusCode, "readers without the deny see it")
	res, _ = e.do(t, "whaler", "GET", "/v1/books/rintro/pages/1.png?width=200", nil)
	require.Equal(t, 200, res.StatusCode, "other pages stay readable")
}

func TestPageImageWithoutRenderer(t *testing.T) {
	e := newEnv(t, envOpts{})
	res, data := e.do(t, "reader", "GET", "/v1/books/rintro/pages/20.png", nil)
	require.Equal(t, 503, res.StatusCode, "%s", data)
	require.Contains(t, string(data), "poppler")
	_, data = e.do(t, "reader", "GET", "/v1/books/rintro/pages/20", nil)
	var pg page
	require.NoError(t, json.Unmarshal(data, &pg))
	require.False(t, pg.Image, "the reader falls back to the text view")
}

// BenchmarkPageImage measures GET /v1/books/{id}/pages/{n}.png for a
// typical page of R-intro: a render (a fresh cache each time), a cache hit,
// and bare pdftoppm as the baseline the render should stay close to. Goals:
// render ≤ 300 ms, cached ≤ 10 ms.
func BenchmarkPageImage(b *testing.B) {
	e := newEnv(b, envOpts{renderer: poppler(b)})
	h := e.srv.Handler()
	get := func(b *testing.B, path string) {
		req, _ := http.NewRequest("GET", path, nil)
		req.Header.Set("Authorization", "Bearer "+e.tokens["reader"])
		w := &discard{h: map[string][]string{}}
		h.ServeHTTP(w, req)
		if w.status != 200 {
			b.Fatalf("status %d", w.status)
		}
	}
	book := e.lib.books["rintro"]
	var render, cached, bare time.Duration
	b.Run("render", func(b *testing.B) {
		// CPU time (this process and its pdftoppm children) per render:
		// on a shared machine wall time is mostly waiting for a core.
		cpu0 := cpuTime()
		for i := 0; i < b.N; i++ {
			e.srv.pages.dir = filepath.Join(b.TempDir(), strconv.Itoa(i))
			get(b, "/v1/books/rintro/pages/20.png")
		}
		render = b.Elapsed() / time.Duration(b.N)
		b.ReportMetric(float64(cpuTime()-cpu0)/float64(time.Millisecond)/float64(b.N), "cpu-ms/op")
	})
	b.Run("cached", func(b *testing.B) {
		get(b, "/v1/books/rintro/pages/20.png")
		b.ResetTimer()
		for i := 0; i < b.N; i++ {
			get(b, "/v1/books/rintro/pages/20.png")
		}
		cached = b.Elapsed() / time.Duration(b.N)
	})
	b.Run("pdftoppm", func(b *testing.B) {
		bin, err := exec.LookPath("pdftoppm")
		require.NoError(b, err)
		for i := 0; i < b.N; i++ {
			require.NoError(b, exec.Command(bin, "-png", "-f", "20", "-l", "20", "-singlefile", "-scale-to-x", "1000",
				"-scale-to-y", "-1", book.Source, filepath.Join(b.TempDir(), "p")).Run())
		}
		bare = b.Elapsed() / time.Duration(b.N)
	})
	if bare > 0 {
		b.Logf("render %v (%.2f× bare pdftoppm %v), cached %v", render, float64(render)/float64(bare), bare, cached)
	}
}

// fakeRenderer returns size bytes for any page, to fill the cache quickly.
type fakeRenderer struct{ size int }

func (f fakeRenderer) RenderPage(context.Context, string, int, int) ([]byte, error) {
	return bytes.Repeat([]byte{1}, f.size), nil
}

// TestPageCacheCap: past the cap the oldest images go, down to three
// quarters of it, and the newest stay.
func TestPageCacheCap(t *testing.T) {
	dir := t.TempDir()
	pi := newPageImages(fakeRenderer{size: 1000}, dir, 10_000)
	src := filepath.Join(dir, "book.pdf")
	require.NoError(t, os.WriteFile(src, []byte("%PDF-1.4"), 0o644))
	b := citebook.Book{ID: "b", Source: src}
	for n := 1; n <= 25; n++ {
		_, err := pi.image(context.Background(), b, n, 1000)
		require.NoError(t, err)
		time.Sleep(2 * time.Millisecond) // distinct modification times
	}
	var total int64
	var pages []string
	filepath.WalkDir(pi.dir, func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() {
			info, _ := d.Info()
			total += info.Size()
			pages = append(pages, filepath.Base(path))
		}
		return nil
	})
	require.LessOrEqual(t, total, int64(10_000))
	require.GreaterOrEqual(t, total, int64(7_000))
	joined := strings.Join(pages, " ")
	require.Contains(t, joined, "-p25-", "the newest image stays")
	require.NotContains(t, joined, "-p1-", "the oldest image went")
}
