package web

import (
	"bytes"
	"encoding/json"
	"io"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/qa"
)

// TestRealUploadIndexAsk runs the whole flow on the real stack: upload a
// corpus book, let the real builder index it, read its first chapter, and
// ask a question whose citation points into it.
func TestRealUploadIndexAsk(t *testing.T) {
	base, token := realServer(t)
	call := func(method, path string, body io.Reader, ctype string) (int, []byte) {
		t.Helper()
		res, data := send(t, base, token, method, path, body, "Content-Type", ctype)
		return res.StatusCode, data
	}

	content, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	require.NoError(t, err)
	body, ctype := multipartBody(t, map[string]string{"title": "Moby-Dick"}, "mobydick.txt", content)
	status, data := call("POST", "/v1/books", body, ctype)
	require.Equal(t, 202, status, "%s", data)
	var up struct {
		BookID string `json:"book_id"`
		Job    citebook.Job
	}
	require.NoError(t, json.Unmarshal(data, &up))

	job := waitJob(t, base, token, up.Job.Handle)
	require.Equal(t, citebook.JobCompleted, job.Status, job.Error)
	require.Positive(t, job.Chunks)
	require.Positive(t, job.ID)

	status, data = call("GET", "/v1/books/"+up.BookID+"/jobs", nil, "")
	require.Equal(t, 200, status)
	var hist struct{ Jobs []citebook.Job }
	require.NoError(t, json.Unmarshal(data, &hist))
	require.Len(t, hist.Jobs, 1, "the recorded build is the runner's job, not a second entry")

	status, data = call("POST", "/v1/ask", strings.NewReader(`{"question":"Who is the captain of the Pequod?","book_ids":["`+up.BookID+`"]}`), "application/json")
	require.Equal(t, 200, status, "%s", data)
	var ans qa.Answer
	require.NoError(t, json.Unmarshal(data, &ans))
	require.False(t, ans.Refused, ans.Answer)
	require.NotEmpty(t, ans.Citations)
	c := ans.Citations[0]
	require.Equal(t, up.BookID, c.BookID)

	// The reader finds the cited chunk's chapter and the quote on it.
	status, data = call("GET", "/v1/chunks/"+c.ChunkID, nil, "")
	require.Equal(t, 200, status)
	var ch struct {
		ReaderPage int `json:"reader_page"`
	}
	require.NoError(t, json.Unmarshal(data, &ch))
	require.Positive(t, ch.ReaderPage)
	status, data = call("GET", "/v1/books/"+up.BookID+"/pages/"+strconv.Itoa(ch.ReaderPage), nil, "")
	require.Equal(t, 200, status)
	var pg page
	require.NoError(t, json.Unmarshal(data, &pg))
	require.Equal(t, "chapter", pg.Kind)
	var text bytes.Buffer
	for _, b := range pg.Blocks {
		text.WriteString(b.Text)
		text.WriteString("\n")
	}
	norm := func(s string) string { return strings.Join(strings.Fields(s), " ") }
	require.Contains(t, norm(text.String()), norm(c.Quote))
}
