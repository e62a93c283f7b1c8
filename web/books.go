package web

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"time"

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

// shown is b as the principal may see it: the server's path of the file
// (Source) is for admins only.
func (a access) shown(b citebook.Book) citebook.Book {
	if !a.p.Admin {
		b.Source = ""
	}
	return b
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
			out = append(out, a.shown(b))
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
		"book": a.shown(b), "version": v, "reader_pages": pages, "reader_unit": unitKind(b), "toc": toc,
	})
}

// deleteBook removes a book, cancelling its index jobs first. A book whose
// first build is still queued or parsing has no record yet; deleting it
// cancels that build, and the runner removes the uploaded file.
func (s *Server) deleteBook(c echo.Context) error {
	// A build that does not stop at once (a parser between cancellation
	// points) must not hold the request forever: after this the client is
	// told to try again.
	ctx, cancel := context.WithTimeout(c.Request().Context(), cancelWait)
	defer cancel()
	_, b, _, err := s.requestedBook(c)
	if citebook.ErrorCode(err) == citebook.ENOTFOUND {
		n, cerr := s.cfg.Indexer.CancelBook(ctx, principalOf(c).Tenant, c.Param("id"))
		if cerr != nil {
			return cerr
		}
		if n == 0 {
			return err
		}
		return c.NoContent(http.StatusNoContent)
	} else if err != nil {
		return err
	}
	if err := s.cfg.Indexer.Delete(ctx, b.Tenant, b.ID); err != nil {
		return err
	}
	if b.Source != "" && strings.HasPrefix(b.Source, s.uploadDir()+string(filepath.Separator)) {
		if err := os.Remove(b.Source); err != nil && !errors.Is(err, os.ErrNotExist) {
			s.log.Warn("removing uploaded file", "book", b.ID, "path", b.Source, "err", err)
		}
	}
	return c.NoContent(http.StatusNoContent)
}

// cancelWait bounds how long DELETE waits for a book's builds to stop.
const cancelWait = 30 * time.Second

func (s *Server) uploadDir() string { return filepath.Join(s.cfg.DataDir, "books") }

// tempDir holds uploads while they arrive. It is the server's own (never
// the OS temp dir), so SweepUploads can empty it after a crash.
func (s *Server) tempDir() string { return filepath.Join(s.cfg.DataDir, "tmp") }

// bookTypes are the file types an upload may have.
var bookTypes = []string{".pdf", ".epub", ".md", ".markdown", ".txt"}

// uploadBook stores the file under the data dir and queues its first build.
// The book ID derives from the tenant and the content, so uploading the same
// file twice is a conflict rather than a duplicate book.
func (s *Server) uploadBook(c echo.Context) error {
	p := principalOf(c)
	ctx := c.Request().Context()
	up, err := s.receive(c, p.Tenant)
	if err != nil {
		return err
	}
	defer up.discard()
	title := strings.TrimSpace(up.fields["title"])
	if title == "" {
		title = strings.TrimSuffix(filepath.Base(up.name), filepath.Ext(up.name))
	}
	var groups []string
	for _, g := range strings.Split(up.fields["groups"], ",") {
		if g = strings.TrimSpace(g); g != "" {
			groups = append(groups, g)
		}
	}
	if err := s.sniffUpload(ctx, up); err != nil {
		return err
	}
	id := "bk_" + hex.EncodeToString(up.sum)[:16]
	if _, err := s.cfg.Library.Book(ctx, id); err == nil {
		return citebook.Errorf(citebook.ECONFLICT, "this file is already book %q; POST /v1/books/%s/jobs re-indexes it", id, id)
	} else if citebook.ErrorCode(err) != citebook.ENOTFOUND {
		return err
	}
	jobs, err := s.cfg.Indexer.Jobs(ctx, id)
	if err != nil {
		return err
	}
	for _, j := range jobs {
		if !j.Status.Ended() {
			return citebook.Errorf(citebook.ECONFLICT, "this file is already being indexed as book %q (job %s)", id, j.Handle)
		}
	}
	if err := os.MkdirAll(s.uploadDir(), 0o755); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "creating upload folder")
	}
	path := filepath.Join(s.uploadDir(), id+up.ext)
	if err := os.Rename(up.path, path); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "storing upload")
	}
	job, err := s.cfg.Indexer.Submit(ctx, citebook.BookInput{BookID: id, Title: title, Tenant: p.Tenant, Groups: groups, Path: path, Owned: true})
	if err != nil {
		os.Remove(path)
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+job.Handle)
	return c.JSON(http.StatusAccepted, map[string]any{"book_id": id, "title": title, "job": job})
}

// sniffUpload refuses a file that is plainly not a readable book before it
// is stored or queued.
func (s *Server) sniffUpload(ctx context.Context, up *upload) error {
	f, err := up.open()
	if err != nil {
		return err
	}
	defer f.Close()
	return s.cfg.Previewer.Sniff(ctx, up.name, f, up.size)
}

func uploadError(err error) error {
	var mb *http.MaxBytesError
	switch {
	case errors.As(err, &mb):
		return citebook.Wrap(err, citebook.ETOOLARGE, "the file is larger than %d bytes", mb.Limit)
	case errors.Is(err, http.ErrMissingFile), errors.Is(err, http.ErrNotMultipart):
		return citebook.Errorf(citebook.EINVALID, "send the book as multipart form field \"file\"")
	default:
		return citebook.Wrap(err, citebook.EINVALID, "reading the upload")
	}
}

// upload is a received multipart form: the file (in the server's temp dir
// until renamed), its SHA-256 with the tenant, and the small text fields.
type upload struct {
	name, ext, path string
	size            int64
	sum             []byte
	fields          map[string]string
}

// discard removes the temporary file unless it was moved away.
// open opens the stored upload for reading; the caller closes it.
func (u *upload) open() (*os.File, error) {
	f, err := os.Open(u.path)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINTERNAL, "reading the upload")
	}
	return f, nil
}

func (u *upload) discard() {
	if u != nil && u.path != "" {
		os.Remove(u.path)
	}
}

// maxField bounds the text fields of an upload form.
const maxField = 64 << 10

// receive streams a multipart upload: the "file" part goes straight into a
// temporary file in tempDir, hashed on the way, without the multipart
// package's own spill files in the OS temp dir (which a crash would leave
// behind). The file type is checked from its name before any byte is kept.
func (s *Server) receive(c echo.Context, tenant string) (_ *upload, err error) {
	mr, err := c.Request().MultipartReader()
	if err != nil {
		return nil, uploadError(err)
	}
	up := &upload{fields: map[string]string{}}
	defer func() {
		if err != nil {
			up.discard()
		}
	}()
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		} else if err != nil {
			return nil, uploadError(err)
		}
		if part.FormName() != "file" {
			v, err := io.ReadAll(io.LimitReader(part, maxField+1))
			if err != nil {
				return nil, uploadError(err)
			}
			if len(v) > maxField {
				return nil, citebook.Errorf(citebook.EINVALID, "form field %q is longer than %d bytes", part.FormName(), maxField)
			}
			up.fields[part.FormName()] = string(v)
			continue
		}
		if up.path != "" {
			return nil, citebook.Errorf(citebook.EINVALID, "send one file per upload")
		}
		up.name = part.FileName()
		up.ext = strings.ToLower(filepath.Ext(up.name))
		if !slices.Contains(bookTypes, up.ext) {
			return nil, citebook.Errorf(citebook.EINVALID, "unsupported file type %q (pdf, epub, md, txt)", up.ext)
		}
		if err := s.spool(part, tenant, up); err != nil {
			return nil, err
		}
	}
	if up.path == "" {
		return nil, uploadError(http.ErrMissingFile)
	}
	return up, nil
}

// spool copies one file part into the temp dir.
func (s *Server) spool(src io.Reader, tenant string, up *upload) error {
	if err := os.MkdirAll(s.tempDir(), 0o755); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "creating upload folder")
	}
	tmp, err := os.CreateTemp(s.tempDir(), "upload-*"+up.ext)
	if err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "storing upload")
	}
	up.path = tmp.Name()
	h := sha256.New()
	h.Write([]byte(tenant + "\x00"))
	n, err := io.Copy(io.MultiWriter(tmp, h), src)
	if cerr := tmp.Close(); err == nil && cerr != nil {
		err = citebook.Wrap(cerr, citebook.EINTERNAL, "storing upload")
	}
	if err != nil {
		return uploadError(err)
	}
	up.size, up.sum = n, h.Sum(nil)
	return nil
}

// staleUpload is how long a file in the temp dir may go unwritten before a
// sweep takes it for the remains of an interrupted upload.
const staleUpload = 10 * time.Minute

// SweepUploads removes what interrupted uploads left behind: files in the
// temp dir not written to for staleUpload, and files in the upload folder
// no book refers to and no pending job will build (an upload whose first
// build was cancelled, failed or was cut off by a crash before the book was
// recorded). Several servers may share the data dir, so another server's
// upload in progress (fresh in the temp dir) and the uploads waiting in
// the shared job queue (no book yet) are kept. Call it at start; it
// reports how many files it removed.
func (s *Server) SweepUploads(ctx context.Context) (int, error) {
	removed := 0
	remove := func(path string) {
		if err := os.RemoveAll(path); err != nil {
			s.log.Warn("cannot remove an orphaned upload", "path", path, "err", err)
			return
		}
		removed++
	}
	tmp, err := os.ReadDir(s.tempDir())
	if err != nil && !errors.Is(err, os.ErrNotExist) {
		return 0, citebook.Wrap(err, citebook.EUNAVAILABLE, "reading the upload temp folder")
	}
	for _, f := range tmp {
		if info, err := f.Info(); err == nil && time.Since(info.ModTime()) < staleUpload {
			continue // being written, perhaps by another server
		}
		remove(filepath.Join(s.tempDir(), f.Name()))
	}
	files, err := os.ReadDir(s.uploadDir())
	if errors.Is(err, os.ErrNotExist) {
		return removed, nil
	} else if err != nil {
		return removed, citebook.Wrap(err, citebook.EUNAVAILABLE, "reading the upload folder")
	}
	books, err := s.cfg.Library.Books(ctx, "")
	if err != nil {
		return removed, err
	}
	used := map[string]bool{}
	for _, b := range books {
		used[filepath.Clean(b.Source)] = true
	}
	for _, f := range files {
		path := filepath.Join(s.uploadDir(), f.Name())
		if !f.Type().IsRegular() || used[path] {
			continue
		}
		jobs, err := s.cfg.Indexer.Jobs(ctx, strings.TrimSuffix(f.Name(), filepath.Ext(f.Name())))
		if err != nil {
			return removed, err
		}
		if slices.ContainsFunc(jobs, func(j citebook.Job) bool { return !j.Status.Ended() }) {
			continue // queued: its build has not recorded the book yet
		}
		remove(path)
	}
	if removed > 0 {
		s.log.Info("removed orphaned uploads", "files", removed)
	}
	return removed, nil
}

func (s *Server) reindex(c echo.Context) error {
	_, b, _, err := s.requestedBook(c)
	if err != nil {
		return err
	}
	if b.Source == "" {
		return citebook.Errorf(citebook.ECONFLICT, "book %q has no stored source file to index", b.ID)
	}
	job, err := s.cfg.Indexer.Submit(c.Request().Context(), citebook.BookInput{
		BookID: b.ID, Title: b.Title, Tenant: b.Tenant, Groups: b.Groups, Path: b.Source,
		Owned: strings.HasPrefix(b.Source, s.uploadDir()+string(filepath.Separator)),
	})
	if err != nil {
		return err
	}
	c.Response().Header().Set(echo.HeaderLocation, "/v1/jobs/"+job.Handle)
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
		jobs = []citebook.Job{}
	}
	return c.JSON(http.StatusOK, map[string]any{"jobs": jobs})
}

// getJob answers for one job of the caller's tenant.
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

// cancelJob cancels a queued or running job of the caller's tenant; the
// job ends as cancelled once its build stops (poll it).
func (s *Server) cancelJob(c echo.Context) error {
	id := c.Param("id")
	ctx := c.Request().Context()
	job, err := s.cfg.Indexer.Job(ctx, id)
	if err != nil {
		return hideMissing(err, "job", id)
	}
	if job.Tenant != principalOf(c).Tenant {
		return notFound("job", id)
	}
	if job, err = s.cfg.Indexer.Cancel(ctx, id); err != nil {
		return hideMissing(err, "job", id)
	}
	return c.JSON(http.StatusAccepted, job)
}

// preview chunks an upload without storing it; the temporary copy gives
// parsers the random access PDF and EPUB need.
func (s *Server) preview(c echo.Context) error {
	up, err := s.receive(c, "")
	if err != nil {
		return err
	}
	defer up.discard()
	f, err := up.open()
	if err != nil {
		return err
	}
	defer f.Close()
	pv, err := s.cfg.Previewer.Preview(c.Request().Context(), up.name, f, up.size)
	if err != nil {
		return err
	}
	return c.JSON(http.StatusOK, pv)
}
