package web

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"mime/multipart"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/qa"
)

func errorCode(t *testing.T, body []byte) string {
	t.Helper()
	var e errorBody
	require.NoError(t, json.Unmarshal(body, &e), "error body %s", body)
	require.NotEmpty(t, e.Error.Message)
	return e.Error.Code
}

func TestHTTPStatusMapping(t *testing.T) {
	for code, status := range map[string]int{
		citebook.EINVALID: 400, citebook.EUNAUTHORIZED: 401, citebook.EFORBIDDEN: 403, citebook.ENOTFOUND: 404,
		citebook.ECONFLICT: 409, citebook.ETOOLARGE: 413, citebook.ERATELIMIT: 429, citebook.EUNAVAILABLE: 503,
		citebook.EINTERNAL: 500, "something-else": 500,
	} {
		require.Equal(t, status, HTTPStatus(code), code)
	}
}

// TestFromEcho checks that echo's own answers (unknown route, wrong method,
// body limit) come out with the code HTTPStatus maps back to their status.
func TestFromEcho(t *testing.T) {
	for status, code := range map[int]string{
		404: citebook.ENOTFOUND, 405: citebook.EINVALID, 413: citebook.ETOOLARGE, 401: citebook.EUNAUTHORIZED,
		400: citebook.EINVALID, 403: citebook.EFORBIDDEN, 429: citebook.ERATELIMIT, 500: citebook.EINTERNAL,
	} {
		err := fromEcho(echo.NewHTTPError(status))
		require.Equal(t, code, citebook.ErrorCode(err), status)
		require.NotEmpty(t, citebook.ErrorMessage(err), status)
		if status != 405 {
			require.Equal(t, status, HTTPStatus(citebook.ErrorCode(err)), status)
		}
	}
	plain := errors.New("disk on fire")
	require.Equal(t, plain, fromEcho(plain))
}

// TestRoutesAccess checks every /v1 route for its principals: who may call
// it, and that other tenants' and other groups' books and chunks are 404.
func TestRoutesAccess(t *testing.T) {
	e := newEnv(t, envOpts{})
	mobyParents := e.lib.parents["moby"]
	deniedChunk, openMobyChunk := "", ""
	for _, c := range e.lib.chunks["moby"] {
		if c.ParentID == mobyParents[0].ID && deniedChunk == "" {
			deniedChunk = c.ID
		}
		if c.ParentID == mobyParents[2].ID && openMobyChunk == "" { // ETYMOLOGY, outside the denied chapter
			openMobyChunk = c.ID
		}
	}
	require.NotEmpty(t, deniedChunk)
	require.NotEmpty(t, openMobyChunk)
	rintroChunk := e.lib.chunks["rintro"][10].ID
	waldenChunk := e.lib.chunks["walden"][0].ID

	ask := `{"question":"What are the modes and attributes of objects?"}`
	cases := []struct {
		who, method, path, body string
		status                  int
		code                    string
	}{
		{"", "GET", "/healthz", "", 200, ""},
		{"", "GET", "/openapi.json", "", 200, ""},
		{"", "GET", "/", "", 200, ""},
		{"", "GET", "/v1/books", "", 401, "unauthorized"},
		{"revoked", "GET", "/v1/books", "", 401, "unauthorized"},
		{"reader", "GET", "/v1/me", "", 200, ""},
		{"reader", "GET", "/v1/books/rintro", "", 200, ""},
		{"reader", "GET", "/v1/books/moby", "", 404, "not_found"},   // closed group
		{"reader", "GET", "/v1/books/walden", "", 404, "not_found"}, // other tenant
		{"globex", "GET", "/v1/books/rintro", "", 404, "not_found"}, // other tenant's admin
		{"reader", "GET", "/v1/books/nope", "", 404, "not_found"},
		{"whaler", "GET", "/v1/books/moby", "", 200, ""},
		{"reader", "GET", "/v1/books/rintro/pages/20", "", 200, ""},
		{"reader", "GET", "/v1/books/rintro/pages/0", "", 400, "invalid"},
		{"reader", "GET", "/v1/books/rintro/pages/x", "", 400, "invalid"},
		{"reader", "GET", "/v1/books/rintro/pages/114", "", 404, "not_found"},
		{"reader", "GET", "/v1/books/walden/pages/1", "", 404, "not_found"},
		{"reader", "GET", "/v1/chunks/" + rintroChunk, "", 200, ""},
		{"reader", "GET", "/v1/chunks/" + waldenChunk, "", 404, "not_found"},
		{"globex", "GET", "/v1/chunks/" + rintroChunk, "", 404, "not_found"},
		{"reader", "GET", "/v1/chunks/" + openMobyChunk, "", 404, "not_found"},
		{"whaler", "GET", "/v1/chunks/" + openMobyChunk, "", 200, ""},
		{"whaler", "GET", "/v1/chunks/" + deniedChunk, "", 404, "not_found"}, // denied chapter
		{"reader", "GET", "/v1/chunks/nope", "", 404, "not_found"},
		{"reader", "POST", "/v1/ask", ask, 200, ""},
		{"reader", "POST", "/v1/ask", `{"question":"  "}`, 400, "invalid"},
		{"reader", "POST", "/v1/ask", `{"question":"x","bogus":1}`, 400, "invalid"},
		{"reader", "POST", "/v1/ask", `{`, 400, "invalid"},
		{"reader", "POST", "/v1/search", ask, 200, ""},
		{"reader", "POST", "/v1/search", `{"question":"x","k":1000}`, 400, "invalid"},
		{"", "POST", "/v1/search", ask, 401, "unauthorized"},
		{"reader", "GET", "/v1/books/rintro/jobs", "", 403, "forbidden"},
		{"reader", "POST", "/v1/books/rintro/jobs", "", 403, "forbidden"},
		{"reader", "DELETE", "/v1/books/rintro", "", 403, "forbidden"},
		{"globex", "DELETE", "/v1/books/rintro", "", 404, "not_found"},
		{"globex", "POST", "/v1/books/rintro/jobs", "", 404, "not_found"},
		{"globex", "GET", "/v1/books/rintro/jobs", "", 404, "not_found"},
		{"admin", "GET", "/v1/books/rintro/jobs", "", 200, ""},
		{"admin", "GET", "/v1/jobs/job_nope", "", 404, "not_found"},
		{"reader", "GET", "/v1/jobs/job_nope", "", 403, "forbidden"},
		{"reader", "GET", "/v1/nothing", "", 404, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.who+" "+tc.method+" "+tc.path, func(t *testing.T) {
			var body io.Reader
			if tc.body != "" {
				body = strings.NewReader(tc.body)
			}
			res, data := e.do(t, tc.who, tc.method, tc.path, body)
			require.Equal(t, tc.status, res.StatusCode, "%s", data)
			if tc.code != "" {
				require.Equal(t, tc.code, errorCode(t, data))
				require.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0])
			}
			if tc.status == 401 {
				require.NotEmpty(t, res.Header.Get("WWW-Authenticate"))
			}
		})
	}
}

func TestListBooksIsScoped(t *testing.T) {
	e := newEnv(t, envOpts{})
	for who, want := range map[string][]string{
		"reader": {"rintro"},
		"whaler": {"moby", "rintro"},
		"admin":  {"moby", "rintro"},
		"globex": {"walden"},
	} {
		res, data := e.do(t, who, "GET", "/v1/books", nil)
		require.Equal(t, 200, res.StatusCode)
		var out struct{ Books []citebook.Book }
		require.NoError(t, json.Unmarshal(data, &out))
		var ids []string
		for _, b := range out.Books {
			ids = append(ids, b.ID)
		}
		require.Equal(t, want, ids, who)
	}
}

// TestBookAndPage reads R-intro's table of contents and the page where
// chapter 3 starts (physical 20, printed 14, per the corpus manifest).
func TestBookAndPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	res, data := e.do(t, "reader", "GET", "/v1/books/rintro", nil)
	require.Equal(t, 200, res.StatusCode)
	var book struct {
		ReaderPages int    `json:"reader_pages"`
		ReaderUnit  string `json:"reader_unit"`
		TOC         []tocEntry
	}
	require.NoError(t, json.Unmarshal(data, &book))
	require.Equal(t, 113, book.ReaderPages)
	require.Equal(t, "page", book.ReaderUnit)
	ch3 := -1
	for i, entry := range book.TOC {
		if len(entry.HeadingPath) > 0 && strings.Contains(entry.HeadingPath[0], "Objects, their modes and attributes") {
			ch3 = i
			break
		}
	}
	require.GreaterOrEqual(t, ch3, 0, "chapter 3 in the TOC")
	require.Equal(t, 20, book.TOC[ch3].ReaderPage)

	res, data = e.do(t, "reader", "GET", "/v1/books/rintro/pages/20", nil)
	require.Equal(t, 200, res.StatusCode)
	var pg page
	require.NoError(t, json.Unmarshal(data, &pg))
	require.Equal(t, 20, pg.Page)
	require.Equal(t, "14", pg.Printed)
	require.NotEmpty(t, pg.Blocks)
	require.NotEmpty(t, pg.Chunks)
	for _, c := range pg.Chunks {
		require.Less(t, c.Block, len(pg.Blocks))
		require.LessOrEqual(t, 0, c.Start)
		require.LessOrEqual(t, c.End, len(pg.Blocks[c.Block].Text))
	}
	// Every chunk placed on the page starts with text the page shows.
	byID := map[string]citebook.Chunk{}
	for _, c := range e.lib.chunks["rintro"] {
		byID[c.ID] = c
	}
	for _, pc := range pg.Chunks {
		shown := pg.Blocks[pc.Block].Text[pc.Start:pc.End]
		require.Contains(t, byID[pc.ID].Text, strings.TrimSpace(shown[:min(len(shown), 40)]))
	}

	// A reflowable book is read by chapter.
	res, data = e.do(t, "whaler", "GET", "/v1/books/moby", nil)
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.Unmarshal(data, &book))
	require.Equal(t, "chapter", book.ReaderUnit)
	require.Greater(t, book.ReaderPages, 1)
	for _, entry := range book.TOC {
		require.NotEqual(t, e.lib.parents["moby"][0].ID, entry.ParentID, "denied parent is not in the TOC")
	}
	res, data = e.do(t, "whaler", "GET", "/v1/books/moby/pages/3", nil)
	require.Equal(t, 200, res.StatusCode, "%s", data)
	require.NoError(t, json.Unmarshal(data, &pg))
	require.Equal(t, "chapter", pg.Kind)
	require.NotEmpty(t, pg.Blocks)
}

func TestChunkReaderPage(t *testing.T) {
	e := newEnv(t, envOpts{})
	c := e.lib.chunks["rintro"][40]
	res, data := e.do(t, "reader", "GET", "/v1/chunks/"+c.ID, nil)
	require.Equal(t, 200, res.StatusCode)
	var out struct {
		Chunk      citebook.Chunk
		ReaderPage int `json:"reader_page"`
	}
	require.NoError(t, json.Unmarshal(data, &out))
	require.Equal(t, c.Text, out.Chunk.Text)
	require.Equal(t, c.PageStart, out.ReaderPage)
}

func multipartBody(t *testing.T, fields map[string]string, name string, content []byte) (*bytes.Buffer, string) {
	t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(t, w.WriteField(k, v))
	}
	if name != "" {
		fw, err := w.CreateFormFile("file", name)
		require.NoError(t, err)
		_, err = fw.Write(content)
		require.NoError(t, err)
	}
	require.NoError(t, w.Close())
	return &buf, w.FormDataContentType()
}

// TestUploadIndexDelete uploads a corpus book, follows its job to the end,
// reads it, re-indexes it, and deletes it.
func TestUploadIndexDelete(t *testing.T) {
	e := newEnv(t, envOpts{})
	content, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)

	body, ctype := multipartBody(t, map[string]string{"title": "Moby Dick", "groups": "crew, officers"}, "mobydick.txt", content)
	res, data := e.do(t, "reader", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 403, res.StatusCode, "%s", data)

	body, ctype = multipartBody(t, map[string]string{"title": "Moby Dick", "groups": "crew, officers"}, "mobydick.txt", content)
	res, data = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	var up struct {
		BookID string `json:"book_id"`
		Job    citebook.Job
	}
	require.NoError(t, json.Unmarshal(data, &up))
	require.Equal(t, citebook.JobQueued, up.Job.Status)
	require.Equal(t, "/v1/jobs/"+up.Job.Handle, res.Header.Get("Location"))
	req := <-e.builds
	req.Recorded = nil // the queue's hook linking its job to the build record
	require.Equal(t, citebook.BookInput{BookID: up.BookID, Title: "Moby Dick", Tenant: "acme", Groups: []string{"crew", "officers"}, Path: req.Path, Owned: true}, req)
	stored, err := os.ReadFile(req.Path)
	require.NoError(t, err)
	require.Equal(t, content, stored, "upload kept under the data dir")
	require.True(t, strings.HasPrefix(req.Path, e.dataDir))

	job := waitJob(t, e.http.URL, e.tokens["admin"], up.Job.Handle)
	require.Equal(t, citebook.JobCompleted, job.Status)
	require.Positive(t, job.Chunks)

	// Same file again: a conflict, not a second book.
	body, ctype = multipartBody(t, nil, "mobydick.txt", content)
	res, data = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 409, res.StatusCode, "%s", data)
	require.Equal(t, "conflict", errorCode(t, data))

	// Unsupported type and missing file.
	body, ctype = multipartBody(t, nil, "x.exe", []byte("MZ"))
	res, _ = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 400, res.StatusCode)
	body, ctype = multipartBody(t, map[string]string{"title": "x"}, "", nil)
	res, _ = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 400, res.StatusCode)

	// Re-index, then history newest first.
	res, data = e.do(t, "admin", "POST", "/v1/books/"+up.BookID+"/jobs", nil)
	require.Equal(t, 202, res.StatusCode, "%s", data)
	<-e.builds
	var again citebook.Job
	require.NoError(t, json.Unmarshal(data, &again))
	waitJob(t, e.http.URL, e.tokens["admin"], again.Handle)
	res, data = e.do(t, "admin", "GET", "/v1/books/"+up.BookID+"/jobs", nil)
	require.Equal(t, 200, res.StatusCode)
	var hist struct{ Jobs []citebook.Job }
	require.NoError(t, json.Unmarshal(data, &hist))
	require.Len(t, hist.Jobs, 2, "recorded history does not repeat the runner's jobs")
	require.Equal(t, again.Handle, hist.Jobs[0].Handle)
	require.Equal(t, up.Job.Handle, hist.Jobs[1].Handle)

	// A build recorded before (by the CLI) shows in the history too.
	res, data = e.do(t, "admin", "GET", "/v1/books/rintro/jobs", nil)
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.Unmarshal(data, &hist))
	require.Len(t, hist.Jobs, 1)
	require.Equal(t, "index-1", hist.Jobs[0].Handle)
	res, _ = e.do(t, "globex", "GET", "/v1/jobs/"+again.Handle, nil)
	require.Equal(t, 404, res.StatusCode, "another tenant's job")

	res, _ = e.do(t, "admin", "DELETE", "/v1/books/"+up.BookID, nil)
	require.Equal(t, 204, res.StatusCode)
	res, _ = e.do(t, "admin", "GET", "/v1/books/"+up.BookID, nil)
	require.Equal(t, 404, res.StatusCode)
	_, err = os.Stat(req.Path)
	require.True(t, errors.Is(err, os.ErrNotExist), "uploaded file removed")
}

func TestPreview(t *testing.T) {
	e := newEnv(t, envOpts{})
	content, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	body, ctype := multipartBody(t, nil, "mobydick.txt", content)
	res, data := e.do(t, "reader", "POST", "/v1/preview", body, "Content-Type", ctype)
	require.Equal(t, 200, res.StatusCode, "%s", data[:min(len(data), 300)])
	var pv Preview
	require.NoError(t, json.Unmarshal(data, &pv))
	require.NotEmpty(t, pv.Parents)
	require.NotEmpty(t, pv.Chunks)
	// The same file indexed as "walden" split the same way.
	require.Len(t, pv.Chunks, len(e.lib.chunks["walden"]))
	require.Equal(t, e.lib.chunks["walden"][5].Text, pv.Chunks[5].Text)
	_, err = os.Stat(filepath.Join(e.dataDir, "books"))
	require.True(t, errors.Is(err, os.ErrNotExist), "preview stores nothing")
}

func TestBodyLimits(t *testing.T) {
	e := newEnv(t, envOpts{maxBody: 256, maxUpload: 4096})
	big := `{"question":"` + strings.Repeat("a", 300) + `"}`
	res, data := e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(big))
	require.Equal(t, 413, res.StatusCode)
	require.Equal(t, "too_large", errorCode(t, data))

	// A chunked body (no Content-Length) is cut off while reading.
	res, data = e.do(t, "reader", "POST", "/v1/search", io.MultiReader(strings.NewReader(big)))
	require.Equal(t, 413, res.StatusCode, "%s", data)

	body, ctype := multipartBody(t, nil, "big.txt", bytes.Repeat([]byte("whale "), 2000))
	res, data = e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
	require.Equal(t, 413, res.StatusCode)
	require.Equal(t, "too_large", errorCode(t, data))
	body, ctype = multipartBody(t, nil, "big.txt", bytes.Repeat([]byte("whale "), 2000))
	res, _ = e.do(t, "reader", "POST", "/v1/preview", body, "Content-Type", ctype)
	require.Equal(t, 413, res.StatusCode)
}

func TestRateLimit(t *testing.T) {
	e := newEnv(t, envOpts{rate: 0.5, burst: 2})
	for i := range 2 {
		res, _ := e.do(t, "reader", "GET", "/v1/me", nil)
		require.Equal(t, 200, res.StatusCode, "request %d within the burst", i)
	}
	res, data := e.do(t, "reader", "GET", "/v1/me", nil)
	require.Equal(t, 429, res.StatusCode)
	require.Equal(t, "rate_limited", errorCode(t, data))
	require.Equal(t, "2", res.Header.Get("Retry-After"))
	// Limits are per token: another token is unaffected.
	res, _ = e.do(t, "whaler", "GET", "/v1/me", nil)
	require.Equal(t, 200, res.StatusCode)
}

// TestLocalPrincipal: without tokens and on loopback serve sets a local
// principal; requests without a header then run as it, and a bad token is
// still refused. Without it a missing token is 401.
func TestLocalPrincipal(t *testing.T) {
	local := citebook.Principal{Tenant: "acme", User: "local", Admin: true}
	e := newEnv(t, envOpts{local: &local})
	res, data := e.do(t, "", "GET", "/v1/me", nil)
	require.Equal(t, 200, res.StatusCode)
	var p citebook.Principal
	require.NoError(t, json.Unmarshal(data, &p))
	require.Equal(t, local, p)
	res, _ = send(t, e.http.URL, "cb_not-a-token", "GET", "/v1/me", nil)
	require.Equal(t, 401, res.StatusCode)

	e = newEnv(t, envOpts{})
	res, _ = e.do(t, "", "GET", "/v1/me", nil)
	require.Equal(t, 401, res.StatusCode)
}

func TestAskJSON(t *testing.T) {
	e := newEnv(t, envOpts{})
	res, data := e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(`{"question":"attributes"}`))
	require.Equal(t, 200, res.StatusCode)
	var ans qa.Answer
	require.NoError(t, json.Unmarshal(data, &ans))
	require.False(t, ans.Refused)
	require.Len(t, ans.Citations, 1)
	require.Equal(t, "rintro", ans.Citations[0].BookID)

	res, data = e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(`{"question":"zzzqqqxxy"}`))
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.Unmarshal(data, &ans))
	require.True(t, ans.Refused)

	res, data = e.do(t, "reader", "POST", "/v1/search", strings.NewReader(`{"question":"attributes"}`))
	require.Equal(t, 200, res.StatusCode)
	var sr struct{ Results []qa.SearchResult }
	require.NoError(t, json.Unmarshal(data, &sr))
	require.Len(t, sr.Results, 1)
	require.Equal(t, "attributes", sr.Results[0].Query)
	require.NotEmpty(t, sr.Results[0].Hits)
	require.Equal(t, "acme", sr.Results[0].Hits[0].Chunk.Tenant)
}

type sseEvent struct {
	name string
	data string
}

func readSSE(t *testing.T, r io.Reader) []sseEvent {
	t.Helper()
	var out []sseEvent
	var cur sseEvent
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 1<<20), 1<<22)
	for sc.Scan() {
		line := sc.Text()
		switch {
		case line == "":
			out = append(out, cur)
			cur = sseEvent{}
		case strings.HasPrefix(line, "event: "):
			cur.name = strings.TrimPrefix(line, "event: ")
		case strings.HasPrefix(line, "data: "):
			cur.data += strings.TrimPrefix(line, "data: ")
		}
	}
	require.NoError(t, sc.Err())
	return out
}

// TestAskStream: deltas first, then one answer event whose citations are the
// verified ones; both the Accept header and ?stream=1 select it.
func TestAskStream(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, tc := range []struct{ path, accept string }{
		{"/v1/ask", "text/event-stream"},
		{"/v1/ask?stream=1", ""},
	} {
		res, data := e.do(t, "reader", "POST", tc.path, strings.NewReader(`{"question":"attributes"}`), "Accept", tc.accept)
		require.Equal(t, 200, res.StatusCode)
		require.Equal(t, "text/event-stream", res.Header.Get("Content-Type"))
		events := readSSE(t, bytes.NewReader(data))
		require.GreaterOrEqual(t, len(events), 2)
		var text string
		for _, ev := range events[:len(events)-1] {
			require.Equal(t, "delta", ev.name)
			var d struct{ Text string }
			require.NoError(t, json.Unmarshal([]byte(ev.data), &d))
			text += d.Text
		}
		last := events[len(events)-1]
		require.Equal(t, "answer", last.name)
		var ans qa.Answer
		require.NoError(t, json.Unmarshal([]byte(last.data), &ans))
		require.Equal(t, ans.Answer, text)
		require.Len(t, ans.Citations, 1)
		require.NotEmpty(t, ans.Citations[0].Quote)
		require.Positive(t, ans.Citations[0].Page)
	}
	// Errors after the stream began arrive as an error event.
	res, data := e.do(t, "", "POST", "/v1/ask?stream=1", strings.NewReader(`{"question":"attributes"}`))
	require.Equal(t, 401, res.StatusCode, "auth fails before streaming: %s", data)
}

func TestReadyAndMetrics(t *testing.T) {
	down := errors.New("connection refused")
	e := newEnv(t, envOpts{ready: map[string]Check{
		"db": func(context.Context) error { return nil },
		"store": func(context.Context) error {
			return citebook.Wrap(down, citebook.EUNAVAILABLE, "vector store unreachable")
		},
	}})
	res, data := e.do(t, "", "GET", "/readyz", nil)
	require.Equal(t, 503, res.StatusCode)
	require.JSONEq(t, `{"ready":false,"checks":{"db":"ok","store":"vector store unreachable"}}`, string(data))

	// A store that hangs fails on its own deadline; the others still
	// report their own state, not the hung one's timeout.
	e = newEnv(t, envOpts{ready: map[string]Check{
		"metadata": func(ctx context.Context) error {
			<-ctx.Done()
			return citebook.Wrap(ctx.Err(), citebook.EUNAVAILABLE, "metadata database unreachable")
		},
		"vectors": func(ctx context.Context) error { return ctx.Err() },
	}})
	res, data = e.do(t, "", "GET", "/readyz", nil)
	require.Equal(t, 503, res.StatusCode)
	require.JSONEq(t, `{"ready":false,"checks":{"metadata":"metadata database unreachable","vectors":"ok"}}`, string(data))

	e = newEnv(t, envOpts{ready: map[string]Check{"db": func(context.Context) error { return nil }}})
	res, _ = e.do(t, "", "GET", "/readyz", nil)
	require.Equal(t, 200, res.StatusCode)

	e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(`{"question":"attributes"}`))
	e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(`{"question":"zzzqqqxxy"}`))
	e.do(t, "reader", "GET", "/v1/books/walden", nil)
	res, _ = e.do(t, "", "GET", "/metrics", nil)
	require.Equal(t, 401, res.StatusCode, "metrics need a token")
	res, _ = e.do(t, "reader", "GET", "/metrics", nil)
	require.Equal(t, 403, res.StatusCode, "metrics are for admins")
	res, data = e.do(t, "admin", "GET", "/metrics", nil)
	require.Equal(t, 200, res.StatusCode)
	m := string(data)
	for _, want := range []string{
		`citebook_http_requests_total{method="POST",route="/v1/ask",status="200"} 2`,
		`citebook_http_requests_total{method="GET",route="/v1/books/:id",status="404"} 1`,
		`citebook_http_request_duration_seconds_count{method="GET",route="/readyz",status="200"} 1`,
		`citebook_ask_refusals_total 1`,
		`citebook_ask_duration_seconds_count{outcome="answered"} 1`,
	} {
		require.Contains(t, m, want)
	}
}

func TestNewRequiresDependencies(t *testing.T) {
	_, err := New(Config{})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	e := newEnv(t, envOpts{})
	cfg := e.srv.cfg
	_, err = New(cfg)
	require.Error(t, err, "metrics registered twice on one registry")
	require.Contains(t, fmt.Sprint(err), "already registered")
}
