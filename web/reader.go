package web

import (
	"net/http"
	"strconv"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// The reader shows a book one unit at a time: a physical page for PDFs, a
// chapter (a run of parents under the same top heading) for reflowable books.
func unitKind(b citebook.Book) string {
	if b.Pages > 0 {
		return "page"
	}
	return "chapter"
}

type units struct {
	count    int
	ofParent []int // reader unit of each parent's start
}

func readerUnits(b citebook.Book, parents []citebook.Parent) units {
	u := units{ofParent: make([]int, len(parents))}
	if b.Pages > 0 {
		u.count = b.Pages
		for i, p := range parents {
			u.ofParent[i] = max(p.PageStart, 1)
		}
		return u
	}
	prev := "\x00"
	for i, p := range parents {
		top := ""
		if len(p.HeadingPath) > 0 {
			top = p.HeadingPath[0]
		}
		if i == 0 || top != prev {
			u.count++
			prev = top
		}
		u.ofParent[i] = u.count
	}
	return u
}

// pageBlock is the part of one parent that is on the page.
type pageBlock struct {
	ParentID    string   `json:"parent_id"`
	HeadingPath []string `json:"heading_path"`
	Text        string   `json:"text"`
}

// pageChunk locates a chunk inside a block's text (byte offsets, clipped to
// the page) so the reader can mark what a citation points at.
type pageChunk struct {
	ID    string `json:"id"`
	Block int    `json:"block"`
	Start int    `json:"start"`
	End   int    `json:"end"`
}

// page is what the reader renders.
type page struct {
	BookID  string      `json:"book_id"`
	Title   string      `json:"title"`
	Kind    string      `json:"kind"`
	Page    int         `json:"page"`
	Pages   int         `json:"pages"`
	Printed string      `json:"printed_page,omitempty"`
	Image   bool        `json:"image"` // the page can be shown as an image ({page}.png)
	Blocks  []pageBlock `json:"blocks"`
	Chunks  []pageChunk `json:"chunks"`
}

// spanOnPage returns the byte range of text (with page starts spans) printed
// on physical page n, or ok=false when none of it is.
func spanOnPage(spans []citebook.PageSpan, textLen, first, last, n int) (int, int, bool) {
	if n < first || n > last {
		return 0, 0, false
	}
	if len(spans) == 0 {
		return 0, textLen, true
	}
	start, end, found := -1, textLen, false
	for _, s := range spans {
		switch {
		case s.Page == n && !found:
			start, found = s.Offset, true
		case s.Page > n && found:
			end = s.Offset
			return start, end, start < end
		case s.Page > n:
			return 0, 0, false
		}
	}
	if !found {
		return 0, 0, false
	}
	return start, end, start < end
}

func (s *Server) getPage(c echo.Context) error {
	if strings.HasSuffix(c.Param("page"), ".png") {
		return s.getPageImage(c) // echo cannot route a suffix after a parameter
	}
	a, b, v, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	n, err := strconv.Atoi(c.Param("page"))
	if err != nil || n < 1 {
		return citebook.Errorf(citebook.EINVALID, "page must be a positive number")
	}
	if v == 0 {
		return citebook.Errorf(citebook.ECONFLICT, "book %q has no completed index yet", b.ID)
	}
	ctx := c.Request().Context()
	parents, err := s.cfg.Library.Parents(ctx, b.ID, v)
	if err != nil {
		return err
	}
	u := readerUnits(b, parents)
	if n > u.count {
		return citebook.Errorf(citebook.ENOTFOUND, "book %q has %d %ss", b.ID, u.count, unitKind(b))
	}
	out := page{BookID: b.ID, Title: b.Title, Kind: unitKind(b), Page: n, Pages: u.count, Blocks: []pageBlock{}, Chunks: []pageChunk{},
		Image: s.pages != nil && b.Format == citebook.FormatPDF && b.Pages > 0}
	type placed struct {
		block        int
		parent       citebook.Parent
		lo, hi, base int // slice of the parent text; base is its book offset
	}
	byParent := map[string]placed{}
	for i, p := range parents {
		if a.denied(p.ID) {
			continue
		}
		lo, hi, ok := 0, len(p.Text), u.ofParent[i] == n
		if b.Pages > 0 {
			lo, hi, ok = spanOnPage(p.Pages, len(p.Text), p.PageStart, max(p.PageEnd, p.PageStart), n)
		}
		if !ok {
			continue
		}
		if out.Printed == "" && b.Pages > 0 {
			for _, sp := range p.Pages {
				if sp.Page == n {
					out.Printed = sp.Printed
				}
			}
		}
		byParent[p.ID] = placed{block: len(out.Blocks), parent: p, lo: lo, hi: hi, base: p.CharStart}
		out.Blocks = append(out.Blocks, pageBlock{ParentID: p.ID, HeadingPath: p.HeadingPath, Text: p.Text[lo:hi]})
	}
	chunks, err := s.cfg.Library.ChunksAt(ctx, b.ID, v)
	if err != nil {
		return err
	}
	for _, ch := range chunks {
		pl, ok := byParent[ch.ParentID]
		if !ok {
			continue
		}
		// Chunk offsets are book offsets; move them into the block's slice.
		start := ch.CharStart - pl.base - pl.lo
		end := ch.CharEnd - pl.base - pl.lo
		blockLen := pl.hi - pl.lo
		if end <= 0 || start >= blockLen {
			continue
		}
		out.Chunks = append(out.Chunks, pageChunk{ID: ch.ID, Block: pl.block, Start: max(start, 0), End: min(end, blockLen)})
	}
	return c.JSON(http.StatusOK, out)
}

// getChunk returns a chunk the principal may read, with the reader page that
// shows its start.
func (s *Server) getChunk(c echo.Context) error {
	a, err := s.access(c)
	if err != nil {
		return err
	}
	id := c.Param("id")
	ctx := c.Request().Context()
	found, err := s.cfg.Library.ChunksByID(ctx, []string{id})
	if err != nil {
		return err
	}
	if len(found) == 0 {
		return notFound("chunk", id)
	}
	ch := found[0]
	if !a.f.Match(&ch) {
		return notFound("chunk", id)
	}
	b, v, err := s.visibleBook(c, a, ch.BookID)
	if err != nil {
		return notFound("chunk", id)
	}
	readerPage := ch.PageStart
	if b.Pages == 0 {
		parents, err := s.cfg.Library.Parents(ctx, b.ID, v)
		if err != nil {
			return err
		}
		u := readerUnits(b, parents)
		for i, p := range parents {
			if p.ID == ch.ParentID {
				readerPage = u.ofParent[i]
			}
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"chunk": ch, "book_title": b.Title, "reader_page": readerPage})
}
