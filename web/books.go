package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"mime/multipart"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/labstack/echo/v4"

	"github.com/citebook/citebook"
)

// access is what one request may read: the principal and its resolved filter.
type access struct {
	p citebook.Principal
	f citebook.Filter
}

func (s *Server) access(c echo.Context) (access, error) {
	p := principalOf(c)
	f, err := s.cfg.ACL.Filter(c.Request().Context(), p)
	if err != nil {
		return access{}, err
	}
	return access{p: p, f: f}, nil
}

// version returns the version of book b the principal is served, or false
// when the book is not visible at all. Admins of the tenant see every book of
// it (to manage builds), readers only what the filter grants.
func (a access) version(b citebook.Book) (int, bool) {
	if b.Tenant != a.p.Tenant || a.f.Tenant != a.p.Tenant {
		return 0, false
	}
	for _, s := range a.f.Books {
		if s.BookID == b.ID {
			return s.Version, true
		}
	}
	if a.p.Admin {
		return b.Active, true
	}
	return 0, false
}

func (a access) denied(parentID string) bool {
	return slices.Contains(a.f.DenyParents, parentID)
}

// notFound is the answer for books and chunks that do not exist and for
// those of other tenants or groups alike, so IDs cannot be probed.
func notFound(kind, id string) error {
	return citebook.Errorf(citebook.ENOTFOUND, "no %s %q", kind, id)
}

// hideMissing gives a store's not_found the wording of notFound, so a
// missing ID and a hidden one read the same; other errors pass unchanged.
func hideMissing(err error, kind, id string) error {
	if citebook.ErrorCode(err) == citebook.ENOTFOUND {
		return notFound(kind, id)
	}
	return err
}

// visibleBook loads a book and checks the principal may see it.
func (s *Server) visibleBook(c echo.Context, a access, id string) (citebook.Book, int, error) {
	b, err := s.cfg.Library.Book(c.Request().Context(), id)
	if err != nil {
		return citebook.Book{}, 0, hideMissing(err, "book", id)
	}
	v, ok := a.version(*b)
	if !ok {
		return citebook.Book{}, 0, notFound("book", id)
	}
	return *b, v, nil
}

// requestedBook resolves the route's :id book for the caller. Every book
// route starts here, so a book of another tenant or group and a missing one
// answer with the same not_found.
func (s *Server) requestedBook(c echo.Context) (access, citebook.Book, int, error) {
	a, err := s.access(c)
	if err != nil {
		return access{}, citebook.Book{}, 0, err
	}
	b, v, err := s.visibleBook(c, a, c.Param("id"))
	return a, b, v, err
}

func (s *Server) listBooks(c echo.Context) error {
	a, err := s.access(c)
	if err != nil {
		return err
	}
	books, err := s.cfg.Library.Books(c.Request().Context(), a.p.Tenant)
	if err != nil {
		return err
	}
	out := []citebook.Book{}
	for _, b := range books {
		if _, ok := a.version(b); ok {
			out = append(out, b)
		}
	}
	return c.JSON(http.StatusOK, map[string]any{"books": out})
}

// tocEntry is one line of a book's table of contents, with the reader page
// that shows it.
type tocEntry struct {
	ParentID     string   `json:"parent_id"`
	Ordinal      int      `json:"ordinal"`
	HeadingPath  []string `json:"heading_path"`
	PageStart    int      `json:"page_start,omitempty"`
	PageEnd      int      `json:"page_end,omitempty"`
	PrintedStart string   `json:"printed_page_start,omitempty"`
	ReaderPage   int      `json:"reader_page"`
}

func (s *Server) getBook(c echo.Context) error {
	a, b, v, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	toc := []tocEntry{}
	pages := 0
	if v > 0 {
		parents, err := s.cfg.Library.Parents(c.Request().Context(), b.ID, v)
		if err != nil {
			return err
		}
		units := readerUnits(b, parents)
		pages = units.count
		for i, p := range parents {
			if a.denied(p.ID) {
				continue
			}
			toc = append(toc, tocEntry{
				ParentID: p.ID, Ordinal: p.Ordinal, HeadingPath: p.HeadingPath,
				PageStart: p.PageStart, PageEnd: p.PageEnd, PrintedStart: p.PrintedStart,
				ReaderPage: units.ofParent[i],
			})
		}
	}
	return c.JSON(http.StatusOK, map[string]any{
		"book": b, "version": v, "reader_pages": pages, "reader_unit": unitKind(b), "toc": toc,
	})
}

func (s *Server) deleteBook(c echo.Context) error {
	_, b, _, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	if err := s.cfg.Indexer.Delete(c.Request().Context(), b.ID); err != nil {
		return err
	}
	if b.Source != "" && strings.HasPrefix(b.Source, s.uploadDir()+string(filepath.Separator)) {
		if err := os.Remove(b.Source); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("removing uploaded file", "book", b.ID, "path", b.Source, "err", err)
		}
	}
	return c.NoContent(http.StatusNoContent)
}

func (s *Server) uploadDir() string { return filepath.Join(s.cfg.DataDir, "books") }

// uploadBook stores the file under the data dir and queues its first build.
// The book ID derives from the tenant and the content, so uploading the same
// file twice is a conflict rather than a duplicate book.
func (s *Server) uploadBook(c echo.Context) error {
	p := principalOf(c)
	fh, err := c.FormFile("file")
	if err != nil {
		return uploadError(err)
	}
	ext := strings.ToLower(filepath.Ext(fh.Filename))
	if !slices.Contains([]string{".pdf", ".epub", ".md", ".markdown", ".txt"}, ext) {
		return citebook.Errorf(citebook.EINVALID, "unsupported file type %q (pdf, epub, md, txt)", ext)
	}
	title := strings.TrimSpace(c.FormValue("title"))
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(fh.Filename), filepath.Ext(fh.Filename))
	}
	var groups []string
	for _, g := range strings.Split(c.FormValue("groups"), ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	ctx := c.Request().Context()
	if err := s.sniffUpload(ctx, fh); err != nil {
		return err
	}
	path, id, err := s.storeUpload(p.Tenant, ext, fh)
	if err != nil {
		return err
	}
	if _, err := s.cfg.Library.Book(ctx, id); err == nil {
		return citebook.Errorf(citebook.ECONFLICT, "this file is already book %q; POST /v1/books/%s/jobs re-indexes it", id, id)
	} else if citebook.ErrorCode(err) != citebook.ENOTFOUND {
		return err
	}
	job, err := s.cfg.Indexer.Submit(ctx, IndexRequest{BookID: id, Title: title, Tenant: p.Tenant, Groups: groups, Path: path})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+job.ID)
	return c.JSON(http.StatusAccepted, map[string]any{"book_id": id, "title": title, "job": job})
}

// uploadSniffer is the cheap check of an upload a Previewer may offer: a
// file that is plainly not a readable book is refused before it is stored
// or queued.
type uploadSniffer interface {
	Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error
}

func (s *Server) sniffUpload(ctx context.Context, fh *multipart.FileHeader) error {
	sn, ok := s.cfg.Previewer.(uploadSniffer)
	if !ok {
		return nil
	}
	f, err := fh.Open()
	if err != nil {
		return uploadError(err)
	}
	defer f.Close()
	return sn.Sniff(ctx, fh.Filename, f, fh.Size)
}

func uploadError(err error) error {
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return citebook.Wrap(err, citebook.ETOOLARGE, "the file is larger than %d bytes", mb.Limit)
	case errors.Is(err, http.ErrMissingFile):
		return citebook.Errorf(citebook.EINVALID, "send the book as multipart form field \"file\"")
	default:
		return citebook.Wrap(err, citebook.EINVALID, "reading the upload")
	}
}

// storeUpload copies the upload to DataDir/books/<id><ext> through a
// temporary file, hashing it on the way.
func (s *Server) storeUpload(tenant, ext string, fh *multipart.FileHeader) (string, string, error) {
	src, err := fh.Open()
	if err != nil {
		return "", "", uploadError(err)
	}
	defer src.Close()
	dir := s.uploadDir()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return "", "", citebook.Wrap(err, citebook.EINTERNAL, "creating upload folder")
	}
	tmp, err := os.CreateTemp(dir, ".upload-*")
	if err != nil {
		return "", "", citebook.Wrap(err, citebook.EINTERNAL, "storing upload")
	}
	defer os.Remove(tmp.Name())
	h := sha256.New()
	h.Write([]byte(tenant + "\x00"))
	if _, err := io.Copy(io.MultiWriter(tmp, h), src); err != nil {
		tmp.Close()
		return "", "", uploadError(err)
	}
	if err := tmp.Close(); err != nil {
		return "", "", citebook.Wrap(err, citebook.EINTERNAL, "storing upload")
	}
	id := "bk_" + hex.EncodeToString(h.Sum(nil))[:16]
	path := filepath.Join(dir, id+ext)
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", "", citebook.Wrap(err, citebook.EINTERNAL, "storing upload")
	}
	return path, id, nil
}

func (s *Server) reindex(c echo.Context) error {
	_, b, _, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	if b.Source == "" {
		return citebook.Errorf(citebook.ECONFLICT, "book %q has no stored source file to index", b.ID)
	}
	job, err := s.cfg.Indexer.Submit(c.Request().Context(), IndexRequest{
		BookID: b.ID, Title: b.Title, Tenant: b.Tenant, Groups: b.Groups, Path: b.Source,
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+job.ID)
	return c.JSON(http.StatusAccepted, job)
}

func (s *Server) bookJobs(c echo.Context) error {
	_, b, _, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	jobs, err := s.cfg.Indexer.Jobs(c.Request().Context(), b.ID)
	if err != nil {
		return err
	}
	if jobs == nil {
		jobs = []Job{}
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": jobs})
}

func (s *Server) getJob(c echo.Context) error {
	id := c.Param("id")
	job, err := s.cfg.Indexer.Job(c.Request().Context(), id)
	if err != nil {
		return hideMissing(err, "job", id)
	}
	if job.Tenant != principalOf(c).Tenant {
		return notFound("job", id)
	}
	return c.JSON(http.StatusOK, job)
}

// previewFile chunks an upload without storing it; the temporary copy gives
// parsers the random access PDF and EPUB need.
func (s *Server) preview(c echo.Context) error {
	fh, err := c.FormFile("file")
	if err != nil {
		return uploadError(err)
	}
	src, err := fh.Open()
	if err != nil {
		return uploadError(err)
	}
	defer src.Close()
	ra, ok := src.(io.ReaderAt)
	if !ok {
		return citebook.Errorf(citebook.EINTERNAL, "upload is not seekable")
	}
	pv, err := s.cfg.Previewer.Preview(c.Request().Context(), fh.Filename, ra, fh.Size)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pv)
}
