package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"mime/multipart"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"
	"unicode"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/storetest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/dbtest"
	"github.com/citebook/citebook/internal/pdftotext"
	"github.com/citebook/citebook/qa"
)

// several is a library served by several processes: two servers (A and B,
// running no index jobs) and two workers, all real processes of this
// binary sharing one PostgreSQL database, one Milvus collection and one
// data dir (uploads and the lexical index's durable copy).
type several struct {
	t       *testing.T
	args    []string // --data, --meta, --store … every process takes
	lib     []string // --data and --meta, for tokens
	a, b    string   // base URLs of the servers
	workers []*exec.Cmd
	meta    *metadb.DB
	tokens  map[string]string // name → secret
	ids     map[string]string // name → token ID
}

func freeAddr(t testing.TB) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer ln.Close()
	return ln.Addr().String()
}

// startSeveral starts the processes; workerEnv goes to the workers only.
func startSeveral(t *testing.T, workerEnv []string) *several {
	dsn := dbtest.DSN(t)
	addr := storetest.MilvusAddr(t)
	name := fmt.Sprintf("citebook_several_%d_%d", os.Getpid(), time.Now().UnixNano())
	emb, err := embedder.New(embedder.Config{Provider: "builtin"})
	require.NoError(t, err)
	t.Cleanup(func() {
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: emb.Version().Dimension})
		if err == nil {
			s.Drop(context.Background())
			s.Close()
		}
	})
	data := t.TempDir()
	s := &several{t: t, tokens: map[string]string{}, ids: map[string]string{}, lib: []string{"--data", data, "--meta", dsn}}
	s.args = append(s.lib, "--store", "milvus", "--milvus-addr", addr, "--milvus-collection", name)
	// Migrated once here, so the processes do not all race to do it.
	s.meta, err = metadb.Open(context.Background(), dsn)
	require.NoError(t, err)
	t.Cleanup(func() { s.meta.Close() })

	for _, tk := range []struct {
		name string
		args []string
	}{
		{"acme-admin", []string{"--tenant", "acme", "--user", "root", "--admin"}},
		{"acme-reader", []string{"--tenant", "acme", "--user", "rita"}},
		{"globex-admin", []string{"--tenant", "globex", "--user", "gus", "--admin"}},
		{"globex-reader", []string{"--tenant", "globex", "--user", "gina"}},
	} {
		out, code, _ := runChild(t, nil, append(append([]string{"tokens", "create"}, tk.args...), s.lib...)...)
		require.Zero(t, code, "tokens create: %s", out)
		s.tokens[tk.name] = strings.TrimSpace(out)
	}
	var ids []struct {
		ID        string             `json:"id"`
		Principal citebook.Principal `json:"principal"`
	}
	out, code, _ := runChild(t, nil, append([]string{"tokens", "list", "--json"}, s.lib...)...)
	require.Zero(t, code, out)
	require.NoError(t, json.Unmarshal([]byte(out), &ids), out)
	for _, x := range ids {
		s.ids[x.Principal.User] = x.ID
	}

	serve := func() string {
		a := freeAddr(t)
		cmd, _ := child(t, nil, append([]string{"serve", "--addr", a, "--index-workers", "0"}, s.args...)...)
		t.Cleanup(func() { stop(cmd) })
		base := "http://" + a
		require.Eventually(t, func() bool {
			res, err := http.Get(base + "/readyz")
			if err != nil {
				return false
			}
			res.Body.Close()
			return res.StatusCode == 200
		}, 60*time.Second, 50*time.Millisecond, "server did not start: %s", logOf(cmd))
		return base
	}
	s.a, s.b = serve(), serve()
	for range 2 {
		cmd, _ := child(t, workerEnv, append([]string{"worker", "--workers", "1", "--batch-size", "10"}, s.args...)...)
		t.Cleanup(func() { stop(cmd) })
		s.workers = append(s.workers, cmd)
	}
	return s
}

// stop ends a child politely, then for good.
func stop(cmd *exec.Cmd) {
	if cmd.ProcessState != nil {
		return
	}
	_ = cmd.Process.Signal(syscall.SIGTERM)
	done := make(chan struct{})
	go func() { cmd.Wait(); close(done) }()
	select {
	case <-done:
	case <-time.After(20 * time.Second):
		_ = cmd.Process.Kill()
		<-done
	}
}

// do sends a request with a token and decodes a JSON answer into out.
func (s *several) do(base, token, method, path string, body io.Reader, ctype string, out any) int {
	s.t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(s.t, err)
	req.Header.Set("Authorization", "Bearer "+token)
	if ctype != "" {
		req.Header.Set("Content-Type", ctype)
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(s.t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(s.t, err)
	if out != nil && res.StatusCode < 300 {
		require.NoError(s.t, json.Unmarshal(data, out), "%s", data)
	}
	return res.StatusCode
}

// upload sends a book through a server and returns its job.
func (s *several) upload(base, token, path string, fields map[string]string) (string, citebook.Job) {
	s.t.Helper()
	var buf bytes.Buffer
	w := multipart.NewWriter(&buf)
	for k, v := range fields {
		require.NoError(s.t, w.WriteField(k, v))
	}
	fw, err := w.CreateFormFile("file", filepath.Base(path))
	require.NoError(s.t, err)
	data, err := os.ReadFile(path)
	require.NoError(s.t, err)
	_, err = fw.Write(data)
	require.NoError(s.t, err)
	require.NoError(s.t, w.Close())
	var up struct {
		BookID string       `json:"book_id"`
		Job    citebook.Job `json:"job"`
	}
	require.Equal(s.t, 202, s.do(base, token, "POST", "/v1/books", &buf, w.FormDataContentType(), &up))
	return up.BookID, up.Job
}

// waitJob follows a job through a server until it ends.
func (s *several) waitJob(base, token, handle string, within time.Duration) citebook.Job {
	s.t.Helper()
	deadline := time.Now().Add(within)
	for {
		var j citebook.Job
		require.Equal(s.t, 200, s.do(base, token, "GET", "/v1/jobs/"+handle, nil, "", &j))
		if j.Status.Ended() {
			return j
		}
		require.True(s.t, time.Now().Before(deadline), "job %s still %s after %s", handle, j.Status, within)
		time.Sleep(50 * time.Millisecond)
	}
}

func (s *several) ask(base, token, question string, books ...string) (qa.Answer, int) {
	body, _ := json.Marshal(qa.Request{Question: question, BookIDs: books})
	var a qa.Answer
	code := s.do(base, token, "POST", "/v1/ask", bytes.NewReader(body), "application/json", &a)
	return a, code
}

func (s *several) search(base, token, question string, books ...string) []citebook.Hit {
	body, _ := json.Marshal(qa.Request{Question: question, BookIDs: books})
	var res struct {
		Results []qa.SearchResult `json:"results"`
	}
	require.Equal(s.t, 200, s.do(base, token, "POST", "/v1/search", bytes.NewReader(body), "application/json", &res))
	var hits []citebook.Hit
	for _, r := range res.Results {
		hits = append(hits, r.Hits...)
	}
	return hits
}

// within polls cond every 20 ms and returns how long it took to hold.
func within(t *testing.T, limit time.Duration, what string, cond func() bool) time.Duration {
	t.Helper()
	t0 := time.Now()
	for !cond() {
		require.Less(t, time.Since(t0), limit, "%s: not within %s", what, limit)
		time.Sleep(20 * time.Millisecond)
	}
	took := time.Since(t0)
	t.Logf("%s: %s", what, took.Round(time.Millisecond))
	return took
}

// onPage reports whether the quote is printed on the page: at least 70%
// of its words of three letters or more are among the page's words as
// pdftotext reads them (its layout and ligatures differ from ours, so
// the check is on words, not on the exact text).
func onPage(t *testing.T, pdf string, page int, quote string) bool {
	out := strings.Join(pdftotext.Pages(t, pdf, "-f", fmt.Sprint(page), "-l", fmt.Sprint(page)), "\f")
	words := func(s string) []string {
		return strings.FieldsFunc(strings.ToLower(s), func(r rune) bool { return !unicode.IsLetter(r) && !unicode.IsDigit(r) })
	}
	onPage := map[string]bool{}
	for _, w := range words(out) {
		onPage[w] = true
	}
	n, found := 0, 0
	for _, w := range words(quote) {
		if len(w) >= 3 {
			n++
			if onPage[w] {
				found++
			}
		}
	}
	t.Logf("%d of %d words of the quote are on page %d", found, n, page)
	return n > 0 && float64(found) >= 0.7*float64(n)
}

// TestSeveralServers is issue 15's end-to-end test: two servers and two
// workers on one PostgreSQL and one Milvus. A book uploaded through server
// A is answered through server B with a citation of the right page; a
// worker killed with SIGKILL mid-build loses the job to the other worker,
// which finishes it, and --verify is clean; a token revoked and a grant
// added or removed through A take effect on B within 2 s; and no search on
// either server returns another tenant's chunk.
func TestSeveralServers(t *testing.T) {
	pdftotext.Path(t) // cited pages are checked against it
	// Slow batches, so the kill lands in the middle of a build.
	s := startSeveral(t, []string{"CITEBOOK_TEST_SLOW=100ms"})
	admin, reader := s.tokens["acme-admin"], s.tokens["acme-reader"]
	dtc := corpus.Path(t, "books/dtc-paper.pdf")

	// 1. Upload through A, answer through B with a verified page.
	book, job := s.upload(s.a, admin, dtc, map[string]string{"title": "Device trees everywhere"})
	done := s.waitJob(s.a, admin, job.Handle, 90*time.Second)
	require.Equal(t, citebook.JobCompleted, done.Status, done.Error)
	const question = "Which tool compiles device tree source?"
	var a qa.Answer
	within(t, 2*time.Second, "book indexed through A answered on B", func() bool {
		var code int
		a, code = s.ask(s.b, reader, question, book)
		return code == 200 && len(a.Citations) > 0
	})
	c := a.Citations[0]
	require.Equal(t, book, c.BookID)
	require.Positive(t, c.Page)
	require.True(t, onPage(t, dtc, c.Page, c.Quote), "quote %q is on page %d", c.Quote, c.Page)

	// 2. Kill the worker building a book mid-job: the other one finishes.
	rintro := corpus.Path(t, "books/R-intro.pdf")
	rbook, rjob := s.upload(s.b, admin, rintro, map[string]string{"title": "An Introduction to R"})
	var holder *exec.Cmd
	var batchesDone, total int
	within(t, 90*time.Second, "build under way", func() bool {
		es, err := s.meta.Entries(context.Background(), rbook)
		require.NoError(t, err)
		if len(es) != 1 || es[0].Job.Status != citebook.JobRunning || es[0].Job.ID == 0 {
			return false
		}
		for _, w := range s.workers {
			if w.Process.Pid == es[0].Job.Owner.PID {
				holder = w
			}
		}
		bs, err := s.meta.Batches(context.Background(), es[0].Job.ID)
		require.NoError(t, err)
		batchesDone, total = 0, len(bs)
		for _, b := range bs {
			if b.Status == index.BatchDone {
				batchesDone++
			}
		}
		return holder != nil && batchesDone >= 3
	})
	// `citebook jobs` shows which worker holds the job.
	out, code, _ := runChild(t, nil, append([]string{"jobs", "--queue", "--json"}, s.lib...)...)
	require.Zero(t, code, out)
	var held []queueView
	require.NoError(t, json.Unmarshal([]byte(out), &held), out)
	require.True(t, slices.ContainsFunc(held, func(h queueView) bool {
		return h.BookID == rbook && h.Status == citebook.JobRunning && h.Owner.PID == holder.Process.Pid && h.Worker != ""
	}), "jobs --queue lists the holder: %s", out)
	require.NoError(t, holder.Process.Signal(syscall.SIGKILL))
	holder.Wait()
	t.Logf("killed worker pid %d with %d of %d batches done", holder.Process.Pid, batchesDone, total)
	t0 := time.Now()
	done = s.waitJob(s.a, admin, rjob.Handle, 3*time.Minute)
	require.Equal(t, citebook.JobCompleted, done.Status, done.Error)
	require.NotEqual(t, holder.Process.Pid, done.Owner.PID, "finished by the other worker")
	t.Logf("the other worker finished the job %s after the kill", time.Since(t0).Round(time.Millisecond))
	es, err := s.meta.Entries(context.Background(), rbook)
	require.NoError(t, err)
	require.Equal(t, 2, es[0].Attempts)
	jobs, err := s.meta.Jobs(context.Background(), rbook)
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	require.Equal(t, index.JobAbandoned, jobs[1].Status, "the killed build")
	require.Equal(t, jobs[0].ID, jobs[1].SupersededBy, "resumed by the second build")
	require.Less(t, done.Embedded, done.Chunks, "the taken-over build resumed instead of starting over")
	t.Logf("the resumed build embedded %d of %d chunks", done.Embedded, done.Chunks)
	out, code, _ = runChild(t, nil, append([]string{"index", "--verify", "--book", rbook, "--json"}, s.args...)...)
	require.Zero(t, code, out)
	var rep index.VerifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.OK(), "%+v", rep)

	// 3. A grant added through A opens a closed book on B, and its removal
	// closes it again, each within 2 s.
	officers, ojob := s.upload(s.a, admin, corpus.Path(t, "books/hash_usenix.pdf"), map[string]string{"title": "Officers only", "groups": "officers"})
	require.Equal(t, citebook.JobCompleted, s.waitJob(s.a, admin, ojob.Handle, 90*time.Second).Status)
	sees := func(base string) bool {
		for _, h := range s.search(base, reader, "hash function collisions") {
			if h.Chunk.BookID == officers {
				return true
			}
		}
		return false
	}
	require.False(t, sees(s.b), "a group book is closed to a reader outside the group")
	var g struct {
		ID int64 `json:"id"`
	}
	body := fmt.Sprintf(`{"book_id":%q,"subject_kind":"user","subject":"rita","effect":"allow"}`, officers)
	require.Equal(t, 201, s.do(s.a, admin, "POST", "/v1/grants", strings.NewReader(body), "application/json", &g))
	within(t, 2*time.Second, "grant added through A applies on B", func() bool { return sees(s.b) })
	require.Equal(t, 204, s.do(s.a, admin, "DELETE", fmt.Sprintf("/v1/grants/%d", g.ID), nil, "", nil))
	within(t, 2*time.Second, "grant removed through A applies on B", func() bool { return !sees(s.b) })

	// 4. Cross-tenant: globex has a book of its own; no search on either
	// server returns the other tenant's chunks.
	gbook, gjob := s.upload(s.b, s.tokens["globex-admin"], corpus.Path(t, "books/policy.epub"), map[string]string{"title": "Debian policy"})
	require.Equal(t, citebook.JobCompleted, s.waitJob(s.b, s.tokens["globex-admin"], gjob.Handle, 90*time.Second).Status)
	owner := map[string]string{book: "acme", rbook: "acme", officers: "acme", gbook: "globex"}
	hits := 0
	for _, base := range []string{s.a, s.b} {
		for _, tok := range []string{"acme-admin", "acme-reader", "globex-admin", "globex-reader"} {
			for _, q := range []string{question, "device tree blob", "How do I read data from a file in R?", "hash function collisions",
				"package maintainer scripts", "What must a package do when it is removed?"} {
				for _, h := range s.search(base, s.tokens[tok], q) {
					hits++
					require.Equal(t, strings.SplitN(tok, "-", 2)[0], owner[h.Chunk.BookID], "%s on %s found %s", tok, base, h.Chunk.BookID)
				}
			}
		}
	}
	require.Positive(t, hits)
	t.Logf("%d hits across both servers and both tenants, 0 of another tenant", hits)

	// 5. A token revoked through A's library fails on B within 2 s.
	require.Equal(t, 200, s.do(s.b, reader, "GET", "/v1/me", nil, "", nil))
	out, code, _ = runChild(t, nil, append([]string{"tokens", "revoke", s.ids["rita"]}, s.lib...)...)
	require.Zero(t, code, out)
	within(t, 2*time.Second, "revoked token refused on B", func() bool {
		return s.do(s.b, reader, "GET", "/v1/me", nil, "", nil) == 401
	})
}
