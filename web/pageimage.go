package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"io/fs"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// PageRenderer draws a physical page of a PDF file as a PNG image width
// pixels wide (ingest.Poppler). It is optional: without one the reader shows
// the text view of a page.
type PageRenderer interface {
	RenderPage(ctx context.Context, path string, page, width int) ([]byte, error)
}

// Page image limits: widths are rounded up to a step so a cache holds few
// variants of a page, and capped so one request cannot ask for a poster.
const (
	pageWidthDefault = 1000
	pageWidthMin     = 200
	pageWidthMax     = 2000
	pageWidthStep    = 100
	pageRenderTime   = 20 * time.Second
	pageRenders      = 2 // concurrent renders per server; each is a child process
)

// pageWidth parses ?width=W into a cached step within the limits.
func pageWidth(q string) (int, error) {
	if q == "" {
		return pageWidthDefault, nil
	}
	w, err := strconv.Atoi(q)
	if err != nil || w <= 0 {
		return 0, citebook.Errorf(citebook.EINVALID, "width must be a positive number of pixels")
	}
	w = min(max(w, pageWidthMin), pageWidthMax)
	return (w + pageWidthStep - 1) / pageWidthStep * pageWidthStep, nil
}

// pageImages renders pages through the renderer at most pageRenders at a
// time and keeps every result on disk under dir.
type pageImages struct {
	r   PageRenderer
	dir string
	sem chan struct{}

	mu   sync.Mutex
	max  int64 // cap on the cache's bytes
	used int64 // bytes in the cache, -1 until first counted
}

func newPageImages(r PageRenderer, dataDir string, max int64) *pageImages {
	if r == nil {
		return nil
	}
	return &pageImages{r: r, dir: filepath.Join(dataDir, "cache", "pages"), sem: make(chan struct{}, pageRenders),
		max: max, used: -1}
}

// account adds n written bytes and, past the cap, removes the oldest
// images until the cache is at three quarters of it. The cache is counted
// once, at the first write; other processes' writes are found at the next
// trim.
func (pi *pageImages) account(n int64) {
	pi.mu.Lock()
	defer pi.mu.Unlock()
	if pi.used >= 0 {
		pi.used += n
		if pi.used <= pi.max {
			return
		}
	}
	type entry struct {
		path string
		size int64
		mod  time.Time
	}
	var files []entry
	var total int64
	filepath.WalkDir(pi.dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() || !strings.HasSuffix(path, ".png") {
			return nil
		}
		if info, err := d.Info(); err == nil {
			files = append(files, entry{path, info.Size(), info.ModTime()})
			total += info.Size()
		}
		return nil
	})
	if total > pi.max {
		sort.Slice(files, func(i, j int) bool { return files[i].mod.Before(files[j].mod) })
		for _, f := range files {
			if total <= pi.max*3/4 {
				break
			}
			if os.Remove(f.path) == nil {
				total -= f.size
			}
		}
	}
	pi.used = total
}

// image returns the PNG of page n of the book's source, from the cache when
// the same file (path, size and modification time) was rendered before.
func (pi *pageImages) image(ctx context.Context, b citebook.Book, n, width int) ([]byte, error) {
	st, err := os.Stat(b.Source)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.ENOTFOUND, "the file of book %q is gone", b.ID)
	}
	sum := sha256.Sum256(fmt.Appendf(nil, "%s\x00%d\x00%d", b.Source, st.Size(), st.ModTime().UnixNano()))
	book := sha256.Sum256([]byte(b.ID))
	file := filepath.Join(pi.dir, hex.EncodeToString(book[:8]),
		fmt.Sprintf("%s-p%d-w%d.png", hex.EncodeToString(sum[:8]), n, width))
	if data, err := os.ReadFile(file); err == nil {
		return data, nil
	}
	select {
	case pi.sem <- struct{}{}:
		defer func() { <-pi.sem }()
	case <-ctx.Done():
		return nil, citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "page rendering cancelled")
	}
	ctx, cancel := context.WithTimeout(ctx, pageRenderTime)
	defer cancel()
	data, err := pi.r.RenderPage(ctx, b.Source, n, width)
	if err != nil {
		return nil, err
	}
	// Written aside and renamed, so a concurrent reader never sees half a
	// file; a cache that cannot be written only costs the next request time.
	if err := os.MkdirAll(filepath.Dir(file), 0o755); err == nil {
		tmp, err := os.CreateTemp(filepath.Dir(file), ".page-*")
		if err == nil {
			_, werr := tmp.Write(data)
			cerr := tmp.Close()
			if errors.Join(werr, cerr) == nil {
				err = os.Rename(tmp.Name(), file)
			}
			if werr != nil || cerr != nil || err != nil {
				os.Remove(tmp.Name())
			} else {
				pi.account(int64(len(data)))
			}
		}
	}
	return data, nil
}

// getPageImage serves GET /v1/books/{id}/pages/{n}.png: the printed page as
// an image. It is guarded like the page's text: a book the caller cannot see
// is not found, and so is a page that carries a section withheld from them.
func (s *Server) getPageImage(c echo.Context) error {
	a, b, v, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(strings.TrimSuffix(c.Param("page"), ".png"))
	if err != nil || n < 1 {
		return citebook.Errorf(citebook.EINVALID, "page must be a positive number")
	}
	width, err := pageWidth(c.QueryParam("width"))
	if err != nil {
		return err
	}
	if b.Format != citebook.FormatPDF || b.Pages == 0 {
		return citebook.Errorf(citebook.EINVALID, "book %q has no printed pages; read it as text", b.ID)
	}
	if n > b.Pages {
		return citebook.Errorf(citebook.ENOTFOUND, "book %q has %d pages", b.ID, b.Pages)
	}
	if v == 0 {
		return citebook.Errorf(citebook.ECONFLICT, "book %q has no completed index yet", b.ID)
	}
	if s.pages == nil {
		return citebook.Errorf(citebook.EUNAVAILABLE, "page images need poppler's pdftoppm on the server (apt-get install poppler-utils)")
	}
	ctx := c.Request().Context()
	if len(a.f.DenyParents) > 0 {
		parents, err := s.cfg.Library.Parents(ctx, b.ID, v)
		if err != nil {
			return err
		}
		for _, p := range parents {
			if a.denied(p.ID) && n >= p.PageStart && n <= max(p.PageEnd, p.PageStart) {
				return citebook.Errorf(citebook.ENOTFOUND, "no page %d in book %q", n, b.ID)
			}
		}
	}
	data, err := s.pages.image(ctx, b, n, width)
	if err != nil {
		return err
	}
	c.Response().Header().Set("Cache-Control", "private, max-age=3600")
	return c.Blob(http.StatusOK, "image/png", data)
}
