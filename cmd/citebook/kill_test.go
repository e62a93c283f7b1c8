package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/storetest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/library"
	"github.com/citebook/citebook/internal/testlib"
)

// childEnv makes the test binary run the citebook CLI instead of the tests
// (TestMain), so a test can SIGKILL a real indexing process. With
// CITEBOOK_TEST_KILL_AT the child kills itself with SIGKILL when the
// builder reaches that fail point; with CITEBOOK_TEST_SLOW it sleeps before
// every batch so a kill from outside lands in the middle of a build.
const childEnv = "CITEBOOK_TEST_CLI"

func TestMain(m *testing.M) {
	if os.Getenv(childEnv) == "1" {
		os.Exit(childMain())
	}
	os.Exit(m.Run())
}

func childMain() int {
	at := os.Getenv("CITEBOOK_TEST_KILL_AT")
	slow, _ := time.ParseDuration(os.Getenv("CITEBOOK_TEST_SLOW"))
	hook := func(name string) {
		if name == at {
			syscall.Kill(os.Getpid(), syscall.SIGKILL)
			select {} // the signal is on its way
		}
		if slow > 0 && strings.HasSuffix(name, "-start") {
			time.Sleep(slow)
		}
	}
	root := newRoot()
	root.SetArgs(os.Args[1:])
	err := root.ExecuteContext(context.WithValue(context.Background(), library.FailPointKey{}, hook))
	if err != nil {
		fmt.Fprintf(os.Stderr, "citebook: %s\n", citebook.ErrorMessage(err))
		return exitCode(err)
	}
	return 0
}

// child starts the CLI in a new process with extra environment.
func child(t *testing.T, env []string, args ...string) (*exec.Cmd, *bytes.Buffer) {
	t.Helper()
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(append(os.Environ(), childEnv+"=1"), env...)
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = &tail{}
	require.NoError(t, cmd.Start())
	return cmd, &out
}

// tail keeps the end of a child's log for failure messages.
type tail struct{ b []byte }

func (w *tail) Write(p []byte) (int, error) {
	w.b = append(w.b, p...)
	if len(w.b) > 4000 {
		w.b = w.b[len(w.b)-4000:]
	}
	return len(p), nil
}

// logOf returns the end of a child's stderr.
func logOf(cmd *exec.Cmd) string { return string(cmd.Stderr.(*tail).b) }

// runChild runs the CLI in a new process to its end; killed reports a
// death by SIGKILL.
func runChild(t *testing.T, env []string, args ...string) (out string, code int, killed bool) {
	t.Helper()
	cmd, stdout := child(t, env, args...)
	err := cmd.Wait()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		ws := ee.Sys().(syscall.WaitStatus)
		return stdout.String(), ee.ExitCode(), ws.Signaled() && ws.Signal() == syscall.SIGKILL
	}
	require.NoError(t, err)
	return stdout.String(), 0, false
}

// libState is everything a build leaves on disk, with process-specific
// details (times, PIDs) left out, to compare a real kill with a simulated one.
type libState struct {
	Active   int
	Versions []string            // number:status
	Jobs     []string            // id:version:status
	Batches  []string            // job:n:status
	Rows     map[int][]string    // chunk rows visible in each version
	Stores   map[string][]string // id:version:retired per store
}

// chunkReader is the part of a store snapshot reads.
type chunkReader interface {
	IDs(context.Context, string) ([]string, error)
	Get(context.Context, []string) ([]citebook.Chunk, error)
	Close() error
}

func snapshot(t *testing.T, data, bookID string) libState {
	t.Helper()
	vec, err := memstore.Open(context.Background(), filepath.Join(data, "vectors"))
	require.NoError(t, err)
	return snapshotWith(t, data, bookID, vec)
}

// snapshotWith reads the library with vec as its vector store (closed after).
func snapshotWith(t *testing.T, data, bookID string, vec chunkReader) libState {
	t.Helper()
	ctx := context.Background()
	db, err := library.OpenMeta(ctx, library.Config{Data: data})
	require.NoError(t, err)
	defer db.Close()
	st := libState{Rows: map[int][]string{}, Stores: map[string][]string{}}
	book, err := db.Book(ctx, bookID)
	require.NoError(t, err)
	st.Active = book.Active
	vs, err := db.Versions(ctx, bookID)
	require.NoError(t, err)
	for _, v := range vs {
		st.Versions = append(st.Versions, fmt.Sprintf("%d:%s", v.Number, v.Status))
		ids, err := db.ChunkIDs(ctx, bookID, v.Number)
		require.NoError(t, err)
		st.Rows[v.Number] = ids
	}
	jobs, err := db.Jobs(ctx, bookID)
	require.NoError(t, err)
	for _, j := range jobs {
		st.Jobs = append(st.Jobs, fmt.Sprintf("%d:%d:%s", j.ID, j.Version, j.Status))
		bs, err := db.Batches(ctx, j.ID)
		require.NoError(t, err)
		for _, b := range bs {
			st.Batches = append(st.Batches, fmt.Sprintf("%d:%d:%s", j.ID, b.N, b.Status))
		}
	}
	defer vec.Close()
	lex, err := lexical.Open(ctx, filepath.Join(data, "lexical"))
	require.NoError(t, err)
	defer lex.Close()
	for name, s := range map[string]chunkReader{"vector": vec, "lexical": lex} {
		ids, err := s.IDs(ctx, bookID)
		require.NoError(t, err)
		cs, err := s.Get(ctx, ids)
		require.NoError(t, err)
		var rows []string
		for _, c := range cs {
			rows = append(rows, fmt.Sprintf("%s:%d:%d", c.ID, c.Version, c.Retired))
		}
		slices.Sort(rows)
		st.Stores[name] = rows
	}
	return st
}

// servedComplete checks the served version's chunks are all in both stores,
// visible in that version.
func servedComplete(t *testing.T, st libState) {
	t.Helper()
	if st.Active == 0 {
		return
	}
	for store, rows := range st.Stores {
		visible := map[string]bool{}
		for _, r := range rows {
			var id string
			var v, ret int
			parts := strings.Split(r, ":")
			id = parts[0]
			fmt.Sscan(parts[1], &v)
			fmt.Sscan(parts[2], &ret)
			if v <= st.Active && (ret == 0 || ret > st.Active) {
				visible[id] = true
			}
		}
		for _, id := range st.Rows[st.Active] {
			require.True(t, visible[id], "served chunk %s missing from the %s store", id, store)
		}
	}
}

// fieldGuide writes two editions of the index package's test book.
func fieldGuide(t *testing.T) (v1, v2 string) {
	src, err := os.ReadFile(filepath.Join("..", "..", "index", "testdata", "field-guide.md"))
	require.NoError(t, err)
	dir := t.TempDir()
	v1, v2 = filepath.Join(dir, "v1.md"), filepath.Join(dir, "v2.md")
	require.NoError(t, os.WriteFile(v1, src, 0o644))
	require.NoError(t, os.WriteFile(v2, []byte(strings.ReplaceAll(string(src), ".\n", ". Revised for the second edition.\n")), 0o644))
	return v1, v2
}

// TestCLIKillMatchesFailPoints SIGKILLs a real `citebook index` process at
// fail points and compares what it leaves on disk with the in-process
// simulation the kill-at-every-point test in package index uses (a panic
// at the same point): they must be identical. Each killed library is then
// recovered the operator's way, by separate processes: repair, resume,
// verify, jobs.
func TestCLIKillMatchesFailPoints(t *testing.T) {
	v1, v2 := fieldGuide(t)
	points := []string{"version-created", "job-created", "batch-1-start", "batch-2-vectors", "batch-2-lexical",
		"batch-3-recorded", "retire-vectors", "retire-lexical", "parent-rows", "chunk-rows", "switch-verified",
		"activated", "delete-retired-vectors", "delete-retired-lexical", "retired-rows-deleted", "job-completed"}
	build := []string{"index", v2, "--book", "guide", "--tenant", "acme", "--batch-size", "2"}
	for _, point := range points {
		t.Run(point, func(t *testing.T) {
			real, sim := t.TempDir(), t.TempDir()
			for _, data := range []string{real, sim} {
				_, err := run(t, "index", v1, "--book", "guide", "--tenant", "acme", "--data", data, "--batch-size", "2")
				require.NoError(t, err)
			}
			_, code, killed := runChild(t, []string{"CITEBOOK_TEST_KILL_AT=" + point}, append(build, "--data", real)...)
			require.True(t, killed, "the child was not killed at %s (exit %d)", point, code)

			// The CLI runs the build on a queue goroutine, where a panic
			// cannot be recovered; the simulation calls the same builder,
			// wired by the same library.Open, directly.
			crashed := func() (p string) {
				defer func() {
					if r := recover(); r != nil {
						p = fmt.Sprint(r)
					}
				}()
				ctx := context.WithValue(context.Background(), library.FailPointKey{}, func(name string) {
					if name == point {
						panic(name)
					}
				})
				c := testlib.Config(sim)
				c.BatchSize = 2
				a, err := library.Open(ctx, c, nil)
				require.NoError(t, err)
				defer a.Close()
				a.Builder.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v2})
				return ""
			}()
			require.Equal(t, point, crashed)

			got, want := snapshot(t, real, "guide"), snapshot(t, sim, "guide")
			require.Equal(t, want, got, "a real kill at %s left what the simulation leaves", point)
			servedComplete(t, got)

			// Recover with separate processes, as an operator would.
			out, code, _ := runChild(t, nil, "index", "--verify", "--repair", "--book", "guide", "--data", real, "--json")
			require.Zero(t, code, out)
			out, code, _ = runChild(t, nil, append(build, "--data", real, "--resume", "--json")...)
			require.Zero(t, code, out)
			out, code, _ = runChild(t, nil, "index", "--verify", "--book", "guide", "--data", real, "--json")
			require.Zero(t, code, "verify after resume: %s", out)
			var rep index.VerifyReport
			require.NoError(t, json.Unmarshal([]byte(out), &rep))
			require.True(t, rep.OK(), "%+v", rep)
			after := snapshot(t, real, "guide")
			require.Equal(t, 2, after.Active)
			servedComplete(t, after)
			jobs := checkJobsSettled(t, real, "guide", after.Active)
			switch point {
			case "activated", "delete-retired-vectors", "delete-retired-lexical", "retired-rows-deleted":
				require.Equal(t, index.JobAbandoned, jobs[0].Status)
				require.Contains(t, jobs[0].Error, "after version 2 was served", "the resume had nothing to do")
			case "version-created", "job-completed":
				require.Equal(t, index.JobCompleted, jobs[0].Status)
			default:
				require.Equal(t, index.JobCompleted, jobs[0].Status)
				require.Equal(t, index.JobAbandoned, jobs[1].Status)
				require.Equal(t, jobs[0].ID, jobs[1].SupersededBy)
				require.Contains(t, jobs[1].Error, "--resume")
			}
		})
	}
}

// jobsOf reads `citebook jobs --json` in a new process (the next start
// after a kill); no job may still be running.
func jobsOf(t *testing.T, data, bookID string) []jobView {
	t.Helper()
	out, code, _ := runChild(t, nil, "jobs", "--data", data, "--json", "--book", bookID)
	require.Zero(t, code, out)
	var jobs []jobView
	require.NoError(t, json.Unmarshal([]byte(out), &jobs))
	for _, j := range jobs {
		require.NotEqual(t, index.JobRunning, j.Status, "job %d", j.ID)
	}
	return jobs
}

// checkJobsSettled is jobsOf after a resume: every unfinished job names
// the one that superseded it, except a newest one killed after it switched
// the book to its version (the resume then had nothing to do).
func checkJobsSettled(t *testing.T, data, bookID string, active int) []jobView {
	t.Helper()
	jobs := jobsOf(t, data, bookID)
	for i, j := range jobs {
		switch {
		case j.Status == index.JobCompleted:
		case i == 0:
			require.Equal(t, active, j.Version, "job %d (%s: %s)", j.ID, j.Status, j.Error)
		default:
			require.NotZero(t, j.SupersededBy, "job %d (%s: %s)", j.ID, j.Status, j.Error)
		}
	}
	return jobs
}

// TestCLIKillMidBuild is the reported sequence with a kill from outside at
// a moment the test does not choose: `citebook index` is SIGKILLed once a
// few batches are done, then `index --verify --repair`, `index --resume`.
// The killed job must show as abandoned (it stayed "running" forever), and
// the resumed version must have every chunk in every store.
func TestCLIKillMidBuild(t *testing.T) {
	runKillMidBuild(t, nil, func(data string) chunkReader {
		s, err := memstore.Open(context.Background(), filepath.Join(data, "vectors"))
		require.NoError(t, err)
		return s
	})
}

// TestCLIKillMidBuildMilvus is TestCLIKillMidBuild with the vectors in a
// real Milvus server.
func TestCLIKillMidBuildMilvus(t *testing.T) {
	addr := storetest.MilvusAddr(t)
	name := fmt.Sprintf("citebook_cli_kill_%d_%d", os.Getpid(), time.Now().UnixNano())
	emb, err := embedder.New(embedder.Config{Provider: "builtin"})
	require.NoError(t, err)
	open := func(string) chunkReader {
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: emb.Version().Dimension})
		require.NoError(t, err)
		return s
	}
	t.Cleanup(func() {
		s := open("").(*milvus.Store)
		s.Drop(context.Background())
		s.Close()
	})
	runKillMidBuild(t, []string{"--store", "milvus", "--milvus-addr", addr, "--milvus-collection", name}, open)
}

func runKillMidBuild(t *testing.T, storeArgs []string, openVec func(data string) chunkReader) {
	ctx := context.Background()
	pdf := corpus.Path(t, "books/R-intro.pdf")
	data := t.TempDir()
	build := append([]string{"index", pdf, "--book", "r", "--tenant", "acme", "--data", data, "--batch-size", "20"}, storeArgs...)
	db, err := library.OpenMeta(ctx, library.Config{Data: data}) // migrated before the child starts, not by both at once
	require.NoError(t, err)
	defer db.Close()
	cmd, _ := child(t, []string{"CITEBOOK_TEST_SLOW=150ms"}, build...)
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()

	deadline := time.Now().Add(2 * time.Minute)
	var done, total int
	for done < 3 {
		select {
		case err := <-exited:
			t.Fatalf("the build ended before it was killed: %v\n%s", err, logOf(cmd))
		case <-time.After(50 * time.Millisecond):
		}
		require.True(t, time.Now().Before(deadline), "no batch done in time")
		jobs, err := db.Jobs(ctx, "r")
		if err != nil || len(jobs) == 0 {
			continue
		}
		bs, err := db.Batches(ctx, jobs[0].ID)
		if err != nil {
			continue
		}
		done, total = 0, len(bs)
		for _, b := range bs {
			if b.Status == index.BatchDone {
				done++
			}
		}
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGKILL))
	<-exited
	t.Logf("killed with %d of %d batches done", done, total)

	jobs := jobsOf(t, data, "r")
	require.Equal(t, index.JobAbandoned, jobs[0].Status, "the killed job is not left running")
	require.Contains(t, jobs[0].Error, fmt.Sprintf("pid %d", cmd.Process.Pid))

	verify := append([]string{"index", "--verify", "--book", "r", "--data", data, "--json"}, storeArgs...)
	out, code, _ := runChild(t, nil, append(verify, "--repair")...)
	require.Zero(t, code, out)
	out, code, _ = runChild(t, nil, append(build, "--resume", "--json")...)
	require.Zero(t, code, out)
	var res index.JobResult
	require.NoError(t, json.Unmarshal([]byte(out), &res))
	require.Equal(t, "completed", res.Status)
	out, code, _ = runChild(t, nil, verify...)
	require.Zero(t, code, out)
	var rep index.VerifyReport
	require.NoError(t, json.Unmarshal([]byte(out), &rep))
	require.True(t, rep.OK(), "%+v", rep)
	require.Equal(t, res.Chunks, rep.Expected)
	st := snapshotWith(t, data, "r", openVec(data))
	require.Len(t, st.Rows[st.Active], res.Chunks)
	servedComplete(t, st)
	jobs = checkJobsSettled(t, data, "r", st.Active)
	require.Equal(t, index.JobCompleted, jobs[0].Status)
	require.Equal(t, jobs[0].ID, jobs[1].SupersededBy, "the resume superseded the killed job")
}

// TestServeShowsAbandonedJobs: after a kill, `citebook serve` starts and
// GET /v1/books/{id}/jobs reports the killed build as abandoned with the
// reason, not running.
func TestServeShowsAbandonedJobs(t *testing.T) {
	v1, _ := fieldGuide(t)
	data := t.TempDir()
	_, _, killed := runChild(t, []string{"CITEBOOK_TEST_KILL_AT=batch-2-recorded"},
		"index", v1, "--book", "guide", "--data", data, "--batch-size", "2")
	require.True(t, killed)

	srv := startServe(t, data)
	var body struct {
		Jobs []struct {
			Status string `json:"status"`
			Error  string `json:"error"`
		} `json:"jobs"`
	}
	deadline := time.Now().Add(20 * time.Second)
	for {
		res, err := http.Get(srv.base + "/v1/books/guide/jobs")
		if err == nil {
			err = json.NewDecoder(res.Body).Decode(&body)
			res.Body.Close()
			if err == nil && res.StatusCode == 200 {
				break
			}
		}
		require.True(t, time.Now().Before(deadline), "server did not answer: %v", err)
		time.Sleep(50 * time.Millisecond)
	}
	require.Len(t, body.Jobs, 1)
	require.Equal(t, "abandoned", body.Jobs[0].Status)
	require.Contains(t, body.Jobs[0].Error, "ended without finishing")
	require.NoError(t, srv.stop(t))
}
