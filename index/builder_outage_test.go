package index_test

import (
	"context"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/milvus"
)

// outageTimeout bounds every Milvus call of the outage test, so a dead
// server fails a batch within seconds rather than the default 30.
const outageTimeout = 3 * time.Second

// privateMilvus is a Milvus server of the test's own, started through the
// script that started the shared one, so it can be killed and restarted on
// the same data directory and port without disturbing other tests.
type privateMilvus struct {
	t      *testing.T
	script string
	dir    string
	port   int
	starts int
	cmd    *exec.Cmd
	exited chan struct{}
}

// newPrivateMilvus starts a private server. CI must provide the script
// (scripts/milvus.sh exports it with MILVUS_ADDR); a developer without one
// skips.
func newPrivateMilvus(t *testing.T) *privateMilvus {
	t.Helper()
	script := os.Getenv("MILVUS_SCRIPT")
	if os.Getenv("MILVUS_ADDR") == "" || script == "" {
		if os.Getenv("CI") != "" {
			t.Fatal("MILVUS_ADDR or MILVUS_SCRIPT is not set; CI must source scripts/milvus.sh")
		}
		t.Skip("MILVUS_ADDR or MILVUS_SCRIPT not set; run `make test` or source scripts/milvus.sh")
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	port := l.Addr().(*net.TCPAddr).Port
	require.NoError(t, l.Close())
	m := &privateMilvus{t: t, script: script, dir: t.TempDir(), port: port}
	require.NoError(t, os.MkdirAll(filepath.Join(m.dir, "data"), 0o755))
	t.Cleanup(m.kill)
	m.start()
	return m
}

func (m *privateMilvus) addr() string { return "127.0.0.1:" + strconv.Itoa(m.port) }

// start runs the server in its own process group (the script execs into
// milvus, so the group is the server and nothing else).
func (m *privateMilvus) start() {
	m.t.Helper()
	m.starts++
	log, err := os.Create(filepath.Join(m.dir, "milvus-"+strconv.Itoa(m.starts)+".log"))
	require.NoError(m.t, err)
	cmd := exec.Command("sh", m.script, "serve", filepath.Join(m.dir, "data"), strconv.Itoa(m.port))
	cmd.Stdout, cmd.Stderr = log, log
	// A restarted server waits for the dead one's etcd sessions to expire
	// before it loads collections again (30 s by default); a shorter lease
	// keeps the restart quick.
	cmd.Env = append(os.Environ(), "COMMON_SESSION_TTL=10")
	cmd.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	require.NoError(m.t, cmd.Start())
	exited := make(chan struct{})
	go func() {
		cmd.Wait()
		log.Close()
		close(exited)
	}()
	m.cmd, m.exited = cmd, exited
}

// kill SIGKILLs the server, as a crash or the OOM killer would, and waits
// until it is gone.
func (m *privateMilvus) kill() {
	if m.cmd == nil {
		return
	}
	syscall.Kill(-m.cmd.Process.Pid, syscall.SIGKILL)
	<-m.exited
	m.cmd = nil
}

// logTail returns the end of the newest server log for failure messages.
func (m *privateMilvus) logTail() string {
	b, _ := os.ReadFile(filepath.Join(m.dir, "milvus-"+strconv.Itoa(m.starts)+".log"))
	return string(b[max(0, len(b)-2000):])
}

// open retries Open until the fresh server serves requests.
func (m *privateMilvus) open(dim int) *milvus.Store {
	m.t.Helper()
	deadline := time.Now().Add(90 * time.Second)
	for {
		s, err := milvus.Open(context.Background(), milvus.Config{Addr: m.addr(), Collection: "builder_outage", Dim: dim,
			Timeout: outageTimeout, DialTimeout: 2 * time.Second})
		if err == nil {
			m.t.Cleanup(func() { s.Close() })
			return s
		}
		if time.Now().After(deadline) {
			m.t.Fatalf("private Milvus at %s did not come up: %v\n%s", m.addr(), err, m.logTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
}

// killingEmbedder runs a hook before each embedding call, so a test can
// take a store down at an exact point of a build.
type killingEmbedder struct {
	index.Embedder
	mu     sync.Mutex
	calls  int
	before func(call int)
}

func (k *killingEmbedder) EmbedDocuments(ctx context.Context, texts []string) ([][]float32, error) {
	k.mu.Lock()
	k.calls++
	call, before := k.calls, k.before
	k.mu.Unlock()
	if before != nil {
		before(call)
	}
	return k.Embedder.EmbedDocuments(ctx, texts)
}

// arm resets the call count and sets the hook (nil disarms).
func (k *killingEmbedder) arm(before func(call int)) {
	k.mu.Lock()
	defer k.mu.Unlock()
	k.calls, k.before = 0, before
}

// TestBuilderMilvusOutage kills Milvus in the middle of a build: the build
// must fail as unavailable with its progress recorded, the previous version
// must stay served by the metadata and, once the server is back, by Milvus,
// and a resumed build must finish without embedding done batches again.
func TestBuilderMilvusOutage(t *testing.T) {
	srv := newPrivateMilvus(t)
	ctx := context.Background()
	began := time.Now()
	var store *milvus.Store
	e := newEnv(t, func(t *testing.T, dim int) index.VectorStore {
		store = srv.open(dim)
		return store
	})
	t.Logf("private Milvus at %s ready after %s", srv.addr(), time.Since(began).Round(time.Millisecond))

	const batch = 8
	emb := &killingEmbedder{Embedder: e.emb}
	b := index.NewBuilder(e.meta, e.vec, e.lex, emb, index.BuilderOptions{
		Chunking: chunking, BatchSize: batch, Attempts: 2, RetryDelay: 100 * time.Millisecond})
	v1 := writeBook(t, e.dir, "v1.md", same)
	v2 := writeBook(t, e.dir, "v2.md", revised)
	ids1, ids2 := chunkIDs(t, v1, "guide"), chunkIDs(t, v2, "guide")
	added, removed := minus(ids2, ids1), minus(ids1, ids2)
	require.Greater(t, len(added), 2*batch, "version 2 needs at least three batches")
	require.NotEmpty(t, removed)
	t.Logf("version 1: %d chunks; version 2: %d (%d new in %d batches, %d retired)",
		len(ids1), len(ids2), len(added), (len(added)+batch-1)/batch, len(removed))

	// 1. Version 1 is built and searchable.
	res, err := b.Index(ctx, index.BookInput{BookID: "guide", Tenant: "acme", Path: v1})
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	require.Equal(t, 1, res.Version)
	vec, _ := e.visible(t, "acme", "guide", 1, "bees")
	require.Equal(t, ids1, vec)

	// 2. Milvus dies while batch 2 of version 2 is being embedded.
	e.emb.reset(-1)
	killed := false
	emb.arm(func(call int) {
		if call == 2 && !killed {
			killed = true
			srv.kill()
		}
	})
	in := index.BookInput{BookID: "guide", Tenant: "acme", Path: v2}
	start := time.Now()
	res, err = b.Index(ctx, in)
	t.Logf("build failed after %s: %v", time.Since(start).Round(time.Millisecond), err)
	emb.arm(nil)
	require.True(t, killed, "the build never reached batch 2")

	// 3. The failure is recorded and version 1 stays served.
	require.Error(t, err)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err), "%v", err)
	require.Equal(t, "failed", res.Status)
	require.Equal(t, 2, res.Version)
	require.Equal(t, batch, res.Embedded, "only batch 1 completed")
	require.Equal(t, batch, res.Upserted)

	book, err := e.meta.Book(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, 1, book.Active, "the previous version stays served")
	vs, err := e.meta.Versions(ctx, "guide")
	require.NoError(t, err)
	require.Len(t, vs, 2)
	require.Equal(t, citebook.VersionCompleted, vs[0].Status)
	require.Equal(t, citebook.VersionFailed, vs[1].Status)
	require.Contains(t, vs[1].Error, "milvus at "+srv.addr()+" is unavailable")

	jobs, err := e.meta.Jobs(ctx, "guide")
	require.NoError(t, err)
	require.Len(t, jobs, 2)
	require.Equal(t, index.JobFailed, jobs[0].Status)
	require.Equal(t, 2, jobs[0].Version)
	require.Contains(t, jobs[0].Error, "milvus at "+srv.addr())
	require.Equal(t, batch, jobs[0].Upserted)
	require.False(t, jobs[0].Finished.IsZero())
	batches, err := e.meta.Batches(ctx, jobs[0].ID)
	require.NoError(t, err)
	require.Len(t, batches, (len(added)+batch-1)/batch)
	require.Equal(t, index.BatchDone, batches[0].Status)
	require.Equal(t, 1, batches[0].Attempts)
	require.Empty(t, batches[0].Error)
	require.Equal(t, index.BatchFailed, batches[1].Status)
	require.Equal(t, 2, batches[1].Attempts, "the failed batch was retried")
	require.Contains(t, batches[1].Error, "milvus at "+srv.addr()+" is unavailable")
	for _, bt := range batches[2:] {
		require.Equal(t, index.BatchPending, bt.Status)
		require.Zero(t, bt.Attempts)
	}

	served, err := e.meta.ChunkIDs(ctx, "guide", 1)
	require.NoError(t, err)
	require.ElementsMatch(t, ids1, served, "the metadata still serves version 1")
	chunks, err := e.meta.ChunksAt(ctx, "guide", 1)
	require.NoError(t, err)
	require.Len(t, chunks, len(ids1))
	for _, c := range chunks {
		require.NotEmpty(t, c.Text, "chunk %s", c.ID)
	}

	// Verifying while the server is down says so instead of reporting drift.
	_, err = b.Verify(ctx, "guide", false)
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(err), "%v", err)

	// 4. Back on the same data: version 1 is served from Milvus as before,
	// through the same store, and batch 1 of version 2 survived the crash
	// without being visible to readers of version 1.
	start = time.Now()
	srv.start()
	f := citebook.Filter{Tenant: "acme", Books: []citebook.BookScope{{BookID: "guide", Version: 1}}}
	qv, err := e.emb.inner.EmbedDocuments(ctx, []string{"bees"})
	require.NoError(t, err)
	deadline := time.Now().Add(90 * time.Second)
	var lastErr error
	for {
		_, err = store.Search(ctx, qv[0], f, 1)
		if err == nil {
			break
		}
		lastErr = err
		if time.Now().After(deadline) {
			t.Fatalf("restarted Milvus does not serve searches: %v\n%s", err, srv.logTail())
		}
		time.Sleep(500 * time.Millisecond)
	}
	t.Logf("restarted Milvus serving after %s (last error while starting: %v)", time.Since(start).Round(time.Millisecond), lastErr)
	vec, _ = e.visible(t, "acme", "guide", 1, "bees")
	require.Equal(t, ids1, vec, "readers of version 1 see exactly version 1")
	for _, id := range added {
		require.NotContains(t, vec, id)
	}
	stored, err := e.vec.IDs(ctx, "guide")
	require.NoError(t, err)
	require.Subset(t, stored, batches[0].ChunkIDs, "batch 1 was durable before the kill")

	// 5. Resuming finishes version 2 without embedding batch 1 again.
	e.emb.reset(-1)
	in.Resume = true
	start = time.Now()
	res, err = b.Index(ctx, in)
	require.NoError(t, err)
	t.Logf("resumed build completed in %s", time.Since(start).Round(time.Millisecond))
	require.Equal(t, "completed", res.Status)
	require.Equal(t, 2, res.Version, "resume finishes the failed version")
	require.Equal(t, len(added)-batch, res.Embedded)
	require.Equal(t, len(added)-batch, e.emb.embedded(), "batch 1 is not embedded again")
	require.Equal(t, len(removed), res.Deleted)

	book, err = e.meta.Book(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, 2, book.Active)
	meta, vecIDs, lex := e.stored(t, "guide")
	require.Equal(t, ids2, meta)
	require.Equal(t, ids2, vecIDs, "retired chunks are gone from Milvus")
	require.Equal(t, ids2, lex, "retired chunks are gone from the lexical index")
	vec, _ = e.visible(t, "acme", "guide", 2, "bees")
	require.Equal(t, ids2, vec)

	rep, err := b.Verify(ctx, "guide", false)
	require.NoError(t, err)
	require.True(t, rep.OK(), "%+v", rep)
	require.Equal(t, 2, rep.Version)
	require.Equal(t, len(ids2), rep.Expected)
	t.Logf("whole outage scenario took %s", time.Since(began).Round(time.Millisecond))
}
