package web

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/internal/corpus"
)

// uploadHeld uploads a corpus book while the builder is held, so its first
// build is running (parsing) and no book row exists yet.
func uploadHeld(t *testing.T, e *env) (bookID string, job citebook.Job, path string) {
	t.Helper()
	e.builder.mu.Lock()
	e.builder.gate = make(chan struct{})
	e.builder.mu.Unlock()
	content, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	body, ctype := multipartBody(t, map[string]string{"title": "Held"}, "held.txt", append(content, '\n', 'x'))
	res, data := e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	var up struct {
		BookID string       `json:"book_id"`
		Job    citebook.Job `json:"job"`
	}
	require.NoError(t, json.Unmarshal(data, &up))
	in := <-e.builds // the build started and is held
	return up.BookID, up.Job, in.Path
}

// TestDeleteBookWhileFirstBuildRuns is issue 10 item 2: DELETE answered 404
// while a book's first build was still parsing (the book row exists only
// after parsing) and nothing but a restart stopped the build. Now it
// cancels the build, and the upload is removed (item 7).
func TestDeleteBookWhileFirstBuildRuns(t *testing.T) {
	e := newEnv(t, envOpts{})
	id, job, path := uploadHeld(t, e)

	res, data := e.do(t, "globex", "DELETE", "/v1/books/"+id, nil)
	require.Equal(t, 404, res.StatusCode, "another tenant cannot see or cancel it: %s", data)
	res, data = e.do(t, "admin", "DELETE", "/v1/books/"+id, nil)
	require.Equal(t, 204, res.StatusCode, "%s", data)

	j := waitJob(t, e.http.URL, e.tokens["admin"], job.Handle)
	require.Equal(t, citebook.JobCancelled, j.Status)
	require.Eventually(t, func() bool { _, err := os.Stat(path); return errors.Is(err, os.ErrNotExist) },
		5*time.Second, 10*time.Millisecond, "the cancelled upload's file is removed")
	res, _ = e.do(t, "admin", "DELETE", "/v1/books/"+id, nil)
	require.Equal(t, 404, res.StatusCode, "nothing left to delete")
}

// TestCancelJob cancels a running build through POST /v1/jobs/{id}/cancel.
func TestCancelJob(t *testing.T) {
	e := newEnv(t, envOpts{})
	_, job, path := uploadHeld(t, e)

	res, _ := e.do(t, "reader", "POST", "/v1/jobs/"+job.Handle+"/cancel", nil)
	require.Equal(t, 403, res.StatusCode)
	res, _ = e.do(t, "globex", "POST", "/v1/jobs/"+job.Handle+"/cancel", nil)
	require.Equal(t, 404, res.StatusCode, "another tenant's job")
	res, data := e.do(t, "admin", "POST", "/v1/jobs/"+job.Handle+"/cancel", nil)
	require.Equal(t, 202, res.StatusCode, "%s", data)

	j := waitJob(t, e.http.URL, e.tokens["admin"], job.Handle)
	require.Equal(t, citebook.JobCancelled, j.Status)
	res, data = e.do(t, "admin", "POST", "/v1/jobs/"+job.Handle+"/cancel", nil)
	require.Equal(t, 409, res.StatusCode, "%s", data)
	require.Eventually(t, func() bool { _, err := os.Stat(path); return errors.Is(err, os.ErrNotExist) },
		5*time.Second, 10*time.Millisecond)
	res, _ = e.do(t, "admin", "POST", "/v1/jobs/job_0000000000000000/cancel", nil)
	require.Equal(t, 404, res.StatusCode)
}

// TestSweepUploads is issue 10 item 7: uploads cut off by a crash (spooled
// temp files, files of books never recorded) are removed at start, and the
// files of recorded books stay — and, with several servers on one data
// dir, the files of uploads waiting in the job queue and a temp file
// another server is still writing.
func TestSweepUploads(t *testing.T) {
	e := newEnv(t, envOpts{})
	books := filepath.Join(e.dataDir, "books")
	tmp := filepath.Join(e.dataDir, "tmp")
	require.NoError(t, os.MkdirAll(books, 0o755))
	require.NoError(t, os.MkdirAll(tmp, 0o755))
	kept := filepath.Join(books, "bk_kept.txt")
	orphan := filepath.Join(books, "bk_orphan.pdf")
	queued := filepath.Join(books, "bk_queued.pdf")
	spool := filepath.Join(tmp, "upload-123.pdf")
	fresh := filepath.Join(tmp, "upload-456.pdf") // another server's upload in progress
	for _, p := range []string{kept, orphan, queued, spool, fresh} {
		require.NoError(t, os.WriteFile(p, []byte("x"), 0o644))
	}
	old := time.Now().Add(-time.Hour)
	require.NoError(t, os.Chtimes(spool, old, old))
	// An upload waiting in the shared queue for a worker: no book yet.
	require.NoError(t, e.meta.Enqueue(context.Background(), index.QueueEntry{
		Job:   citebook.Job{Handle: "job_waiting", BookID: "bk_queued", Tenant: "acme"},
		Input: citebook.BookInput{BookID: "bk_queued", Tenant: "acme", Path: queued, Owned: true},
		Only:  "w_elsewhere"}, 0))
	e.lib.mu.Lock()
	b := e.lib.books["moby"]
	b.Source = kept
	e.lib.books["moby"] = b
	e.lib.mu.Unlock()

	n, err := e.srv.SweepUploads(context.Background())
	require.NoError(t, err)
	require.Equal(t, 2, n)
	for _, p := range []string{kept, queued, fresh} {
		_, err = os.Stat(p)
		require.NoError(t, err, p)
	}
	for _, p := range []string{orphan, spool} {
		_, err = os.Stat(p)
		require.True(t, errors.Is(err, os.ErrNotExist), p)
	}
}

// TestUploadLeavesNoTempFiles: an upload streams into the data dir's temp
// folder, never the OS temp dir, and a refused upload leaves nothing.
func TestUploadLeavesNoTempFiles(t *testing.T) {
	e := newEnv(t, envOpts{maxUpload: 64 << 10})
	osTmp := t.TempDir()
	t.Setenv("TMPDIR", osTmp)
	big := make([]byte, 48<<10) // above nothing but our own limit: still spooled by us
	for i := range big {
		big[i] = 'a' + byte(i%26)
	}
	body, ctype := multipartBody(t, nil, "big.txt", big)
	res, data := e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	<-e.builds
	body, ctype = multipartBody(t, nil, "huge.txt", make([]byte, 80<<10))
	res, _ = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 413, res.StatusCode)
	left, err := os.ReadDir(filepath.Join(e.dataDir, "tmp"))
	require.NoError(t, err)
	require.Empty(t, left, "no spooled upload left behind")
	left, err = os.ReadDir(osTmp)
	require.NoError(t, err)
	require.Empty(t, left, "nothing in the OS temp dir")
}

// TestDeleteBookWhileReindexing: deleting a served book whose re-index is
// running cancels the build and deletes the book (it used to answer 409
// until the build ended).
func TestDeleteBookWhileReindexing(t *testing.T) {
	e := newEnv(t, envOpts{})
	content, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	body, ctype := multipartBody(t, nil, "moby.txt", content)
	res, data := e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	var up struct {
		BookID string       `json:"book_id"`
		Job    citebook.Job `json:"job"`
	}
	require.NoError(t, json.Unmarshal(data, &up))
	in := <-e.builds
	require.Equal(t, citebook.JobCompleted, waitJob(t, e.http.URL, e.tokens["admin"], up.Job.Handle).Status)

	e.builder.mu.Lock()
	e.builder.gate = make(chan struct{})
	e.builder.mu.Unlock()
	res, data = e.do(t, "admin", "POST", "/v1/books/"+up.BookID+"/jobs", nil)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	var again citebook.Job
	require.NoError(t, json.Unmarshal(data, &again))
	<-e.builds // running and held

	res, data = e.do(t, "admin", "DELETE", "/v1/books/"+up.BookID, nil)
	require.Equal(t, 204, res.StatusCode, "%s", data)
	require.Equal(t, citebook.JobCancelled, waitJob(t, e.http.URL, e.tokens["admin"], again.Handle).Status)
	res, _ = e.do(t, "admin", "GET", "/v1/books/"+up.BookID, nil)
	require.Equal(t, 404, res.StatusCode)
	_, err = os.Stat(in.Path)
	require.True(t, errors.Is(err, os.ErrNotExist), "the upload is removed with its book")
}
