package index_test

import (
	"context"
	"fmt"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/lexical"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/index/metadb"
)

// crash is what a fail point panics with to stop a build the way kill -9
// does: the builder's own error handling (marking the job and version
// failed) never runs, since a panic is not an error return. Deferred calls
// do run, but none of them writes to a store, and the crash test reopens
// every store from disk afterwards as a new process would.
// TestCLIKillMatchesFailPoints (cmd/citebook) shows a real SIGKILL at the
// same points leaves exactly the same state.
type crash struct{ point string }

// crashAt returns a fail point hook that crashes at the named point and
// records every point reached in order.
func crashAt(point string, reached *[]string) func(string) {
	return func(name string) {
		if reached != nil {
			*reached = append(*reached, name)
		}
		if name == point {
			panic(crash{name})
		}
	}
}

// vecOpener opens the vector store of a crash environment; called again
// after a crash it must open the same data (a new process's view).
type vecOpener func(t *testing.T, dir string, dim int) index.VectorStore

func embeddedOpener(t *testing.T, dir string, _ int) index.VectorStore {
	s, err := memstore.Open(context.Background(), filepath.Join(dir, "vectors"))
	require.NoError(t, err)
	return s
}

// crashEnv is a library that can be "restarted": every handle closed and
// opened again from what is on disk (or in Milvus).
type crashEnv struct {
	t       *testing.T
	dir     string
	openVec vecOpener
	emb     index.Embedder
	meta    *metadb.DB
	vec     index.VectorStore
	lex     *lexical.Index
	owner   index.Owner
}

func newCrashEnv(t *testing.T, openVec vecOpener) *crashEnv {
	e := &crashEnv{t: t, dir: t.TempDir(), openVec: openVec, emb: newEmbedder(t), owner: deadOwner(t)}
	e.open()
	t.Cleanup(e.close)
	return e
}

func (e *crashEnv) open() {
	ctx := context.Background()
	var err error
	e.meta, err = metadb.Open(ctx, filepath.Join(e.dir, "citebook.db"))
	require.NoError(e.t, err)
	e.lex, err = lexical.Open(ctx, filepath.Join(e.dir, "lexical"))
	require.NoError(e.t, err)
	e.vec = e.openVec(e.t, e.dir, e.emb.Version().Dimension)
}

func (e *crashEnv) close() {
	if e.meta == nil {
		return
	}
	e.vec.Close()
	e.lex.Close()
	e.meta.Close()
	e.meta = nil
}

// restart is what the next process sees after a crash.
func (e *crashEnv) restart() {
	e.close()
	e.open()
}

// builder returns a builder over the env's current handles; jobs it runs
// are owned by e.owner (a process that is gone), so the next start finds
// them dead as it would after a real kill.
func (e *crashEnv) builder(fp func(string)) *index.Builder {
	return index.NewBuilder(e.meta, e.vec, e.lex, e.emb, index.BuilderOptions{Chunking: chunking, BatchSize: 4,
		Attempts: 1, RetryDelay: time.Millisecond, FailPoint: fp, Owner: &e.owner})
}

// index runs a build that may crash; it reports the crash point ("" when
// the build returned).
func (e *crashEnv) index(in index.BookInput, fp func(string)) (point string, res *index.JobResult, err error) {
	defer func() {
		if r := recover(); r != nil {
			c, ok := r.(crash)
			if !ok {
				panic(r)
			}
			point = c.point
		}
	}()
	res, err = e.builder(fp).Index(context.Background(), in)
	return "", res, err
}

// servedDefects lists what the book's served version lacks in any store:
// every chunk the metadata serves must be stored, and visible in that
// version, in the vector store and in the lexical index; the metadata must
// hold as many chunks as the version recorded.
func (e *crashEnv) servedDefects(bookID string) []string {
	ctx := context.Background()
	t := e.t
	book, err := e.meta.Book(ctx, bookID)
	if citebook.ErrorCode(err) == citebook.ENOTFOUND {
		return nil
	}
	require.NoError(t, err)
	if book.Active == 0 {
		return nil
	}
	var defects []string
	ids, err := e.meta.ChunkIDs(ctx, bookID, book.Active)
	require.NoError(t, err)
	vs, err := e.meta.Versions(ctx, bookID)
	require.NoError(t, err)
	for _, v := range vs {
		if v.Number == book.Active && v.Chunks != len(ids) {
			defects = append(defects, fmt.Sprintf("metadata serves %d chunks of version %d, which has %d", len(ids), v.Number, v.Chunks))
		}
	}
	check := func(store string, got []citebook.Chunk, err error) {
		require.NoError(t, err)
		seen := map[string]bool{}
		for _, c := range got {
			if c.VisibleIn(book.Active) && c.BookID == bookID {
				seen[c.ID] = true
			}
		}
		missing := 0
		for _, id := range ids {
			if !seen[id] {
				missing++
			}
		}
		if missing > 0 {
			defects = append(defects, fmt.Sprintf("%s lacks %d of %d chunks of version %d", store, missing, len(ids), book.Active))
		}
	}
	vg, err := e.vec.Get(ctx, ids)
	check("vector store", vg, err)
	lg, err := e.lex.Get(ctx, ids)
	check("lexical index", lg, err)
	return defects
}

// TestRepairThenResume is issue 10 item 4: a build killed after some
// batches, then `index --verify --repair`, then `--resume`. Repair deleted
// the unfinished build's chunks but left their batches done, so the resume
// skipped them and activated a version missing most of its chunks.
func TestRepairThenResume(t *testing.T) {
	for _, update := range []bool{false, true} {
		t.Run(fmt.Sprintf("update=%v", update), func(t *testing.T) {
			ctx := context.Background()
			e := newCrashEnv(t, embeddedOpener)
			v1 := writeBook(t, e.dir, "v1.md", same)
			v2 := writeBook(t, e.dir, "v2.md", revised)
			path, want := v1, chunkIDs(t, v1, "guide")
			if update {
				_, _, err := e.index(index.BookInput{BookID: "guide", Tenant: "acme", Path: v1}, nil)
				require.NoError(t, err)
				path, want = v2, chunkIDs(t, v2, "guide")
			}
			in := index.BookInput{BookID: "guide", Tenant: "acme", Path: path}
			point, _, _ := e.index(in, crashAt("batch-3-recorded", nil))
			require.Equal(t, "batch-3-recorded", point)
			e.restart()

			rep, err := e.builder(nil).Verify(ctx, "guide", true)
			require.NoError(t, err)
			require.NotEmpty(t, rep.Vector.Extra, "the unfinished build's chunks are extra to the served version")
			in.Resume = true
			res, err := e.builder(nil).Index(ctx, in)
			require.NoError(t, err)
			require.Equal(t, "completed", res.Status)
			require.Empty(t, e.servedDefects("guide"))
			meta, vec, lex := sortedStored(t, e, "guide")
			require.Equal(t, want, meta)
			require.Equal(t, want, vec)
			require.Equal(t, want, lex)
			rep, err = e.builder(nil).Verify(ctx, "guide", false)
			require.NoError(t, err)
			require.True(t, rep.OK(), "%+v", rep)
		})
	}
}

func sortedStored(t *testing.T, e *crashEnv, bookID string) (meta, vec, lex []string) {
	ctx := context.Background()
	b, err := e.meta.Book(ctx, bookID)
	require.NoError(t, err)
	meta = sorted(e.meta.ChunkIDs(ctx, bookID, b.Active))(t)
	vec = sorted(e.vec.IDs(ctx, bookID))(t)
	lex = sorted(e.lex.IDs(ctx, bookID))(t)
	return meta, vec, lex
}

// crashScenario is a history of builds of one book; the last build is the
// one killed.
type crashScenario struct {
	name   string
	setup  []func(string) string // edits built completely first, in order
	killed []func(string) string // edits whose builds are killed at batch 3, before the last
	last   func(string) string
}

var crashScenarios = []crashScenario{
	{name: "new", last: same},
	{name: "update", setup: []func(string) string{same}, last: revised},
	{name: "shrink", setup: []func(string) string{same}, last: secondEdition},
	// A failed build of another edition is abandoned by the last one, so
	// the discard steps are crash points too.
	{name: "abandon", setup: []func(string) string{same}, killed: []func(string) string{revised}, last: secondEdition},
}

// crashOutcome is what one kill point led to.
type crashOutcome struct {
	point    string
	defects  []string // found at any moment: after the kill, after repair, after resume
	resumed  int      // the version served at the end
	reachedV bool     // the kill happened
	reached  []string // fail points passed by the killed build
}

// runCrash plays a scenario with the last build killed at point, then
// restarts, repairs and resumes as an operator would, checking the
// served version after each step.
func runCrash(t *testing.T, e *crashEnv, sc crashScenario, bookID, point string) crashOutcome {
	return runCrashTwice(t, e, sc, bookID, point, "")
}

// runCrashTwice is runCrash with the first resume killed too, at
// again (when it gets there), before the operator repairs and resumes once
// more.
func runCrashTwice(t *testing.T, e *crashEnv, sc crashScenario, bookID, point, again string) crashOutcome {
	ctx := context.Background()
	out := crashOutcome{point: point}
	for i, edit := range sc.setup {
		p := writeBook(t, e.dir, fmt.Sprintf("setup%d.md", i), edit)
		_, res, err := e.index(index.BookInput{BookID: bookID, Tenant: "acme", Path: p}, nil)
		require.NoError(t, err)
		require.Equal(t, "completed", res.Status)
	}
	for i, edit := range sc.killed {
		p := writeBook(t, e.dir, fmt.Sprintf("killed%d.md", i), edit)
		got, _, _ := e.index(index.BookInput{BookID: bookID, Tenant: "acme", Path: p}, crashAt("batch-3-start", nil))
		require.Equal(t, "batch-3-start", got)
		e.restart()
	}
	last := writeBook(t, e.dir, "last.md", sc.last)
	want := chunkIDs(t, last, bookID)
	in := index.BookInput{BookID: bookID, Tenant: "acme", Path: last}
	got, _, err := e.index(in, crashAt(point, &out.reached))
	if got == "" {
		require.NoError(t, err)
	}
	out.reachedV = got == point
	note := func(when string) {
		for _, d := range e.servedDefects(bookID) {
			out.defects = append(out.defects, when+": "+d)
		}
	}
	note("after the kill")
	e.restart()
	note("after restart")

	_, err = e.builder(nil).Verify(ctx, bookID, true)
	require.NoError(t, err)
	note("after repair")
	in.Resume = true
	if again != "" {
		if got, _, _ := e.index(in, crashAt(again, nil)); got != "" {
			note("after the second kill")
			e.restart()
			_, err = e.builder(nil).Verify(ctx, bookID, true)
			require.NoError(t, err)
			note("after the second repair")
		}
	}
	res, err := e.builder(nil).Index(ctx, in)
	require.NoError(t, err, "resume after a kill at %s", point)
	note("after resume")
	out.resumed = res.Version

	served, vec, lex := sortedStored(t, e, bookID)
	if !slices.Equal(served, want) || !slices.Equal(vec, want) || !slices.Equal(lex, want) {
		out.defects = append(out.defects, fmt.Sprintf("after resume: served %d, vector %d, lexical %d chunks; want %d",
			len(served), len(vec), len(lex), len(want)))
	}
	rep, err := e.builder(nil).Verify(ctx, bookID, false)
	require.NoError(t, err)
	if !rep.OK() {
		out.defects = append(out.defects, fmt.Sprintf("after resume: verify reports %+v", rep))
	}
	// No job is left running; every unfinished one names its successor,
	// except a newest one killed after its version was switched to (the
	// resume then had nothing to do).
	jobs, err := e.meta.Jobs(ctx, bookID)
	require.NoError(t, err)
	book, err := e.meta.Book(ctx, bookID)
	require.NoError(t, err)
	for i, j := range jobs {
		require.NotEqual(t, index.JobRunning, j.Status, "job %d after a kill at %s", j.ID, point)
		if j.Status == index.JobCompleted {
			continue
		}
		if i == 0 {
			require.Equal(t, book.Active, j.Version, "job %d (%s) after a kill at %s", j.ID, j.Status, point)
		} else {
			require.NotZero(t, j.SupersededBy, "job %d (%s) after a kill at %s", j.ID, j.Status, point)
		}
	}
	return out
}

// deadOwner is the identity of a process that has exited, for jobs of a
// simulated crash: the test process itself is still alive.
func deadOwner(t *testing.T) index.Owner {
	cmd := exec.Command("true")
	require.NoError(t, cmd.Run())
	o := index.ThisProcess()
	o.PID, o.Start = cmd.ProcessState.Pid(), 0
	return o
}

// TestKillAtEveryPoint kills builds at every step (before, during and after
// each batch, around the switch, during the clean-up and while abandoning
// an earlier build), then restarts, repairs and resumes, and checks after
// each of those that the served version has every chunk in every store.
func TestKillAtEveryPoint(t *testing.T) {
	runKillMatrix(t, embeddedOpener, nil)
}

// runKillMatrix runs the scenarios named in only (all when nil) with a kill
// at every point each reaches.
func runKillMatrix(t *testing.T, openVec vecOpener, only []string) {
	total, activatedBroken, killed := 0, 0, 0
	for _, sc := range crashScenarios {
		if only != nil && !slices.Contains(only, sc.name) {
			continue
		}
		t.Run(sc.name, func(t *testing.T) {
			base := runCrash(t, newCrashEnv(t, openVec), sc, sc.name+"-base", "")
			require.Empty(t, base.defects)
			require.Greater(t, len(base.reached), 10)
			for i, point := range base.reached {
				bookID := fmt.Sprintf("%s-%d", sc.name, i)
				out := runCrash(t, newCrashEnv(t, openVec), sc, bookID, point)
				total++
				if out.reachedV {
					killed++
				}
				if len(out.defects) > 0 {
					activatedBroken++
					t.Errorf("kill at %s: %s", point, strings.Join(out.defects, "; "))
				}
			}
			t.Logf("%s: %d kill points", sc.name, len(base.reached))
		})
	}
	t.Logf("kill points: %d (killed %d); runs with a served version missing chunks in some store: %d", total, killed, activatedBroken)
	require.GreaterOrEqual(t, total, 50)
	require.Equal(t, total, killed, "every point was reached")
}

// TestAbandonedJobs is issue 10 item 5: a killed build's job stayed
// "running" forever, even after a successful resume. The next start marks
// it abandoned with the reason and fails its version; a job of a process
// that still runs is left alone and keeps other builds and repairs of the
// book away; the resume records which job it superseded.
func TestAbandonedJobs(t *testing.T) {
	ctx := context.Background()
	e := newCrashEnv(t, embeddedOpener)
	v1 := writeBook(t, e.dir, "v1.md", same)
	in := index.BookInput{BookID: "guide", Tenant: "acme", Path: v1}
	point, _, _ := e.index(in, crashAt("batch-2-recorded", nil))
	require.Equal(t, "batch-2-recorded", point)
	e.restart()

	jobs, err := e.meta.Jobs(ctx, "guide")
	require.NoError(t, err)
	require.Len(t, jobs, 1)
	require.Equal(t, index.JobRunning, jobs[0].Status, "nothing recorded the kill")
	require.Equal(t, e.owner, jobs[0].Owner)
	require.False(t, jobs[0].Heartbeat.IsZero())

	dead, err := index.RecoverJobs(ctx, e.meta, "")
	require.NoError(t, err)
	require.Len(t, dead, 1)
	jobs, err = e.meta.Jobs(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, index.JobAbandoned, jobs[0].Status)
	require.Contains(t, jobs[0].Error, fmt.Sprintf("pid %d", e.owner.PID))
	require.Contains(t, jobs[0].Error, "--resume")
	require.False(t, jobs[0].Finished.IsZero())
	vs, err := e.meta.Versions(ctx, "guide")
	require.NoError(t, err)
	require.Equal(t, citebook.VersionFailed, vs[0].Status)
	require.Contains(t, vs[0].Error, "abandoned")
	again, err := index.RecoverJobs(ctx, e.meta, "")
	require.NoError(t, err)
	require.Empty(t, again, "recovery is idempotent")

	// A running job of a live process (another host's with a fresh
	// heartbeat, or a live PID here) is not touched, and blocks builds and
	// repairs of its book.
	sleeper := exec.Command("sleep", "60")
	require.NoError(t, sleeper.Start())
	t.Cleanup(func() { sleeper.Process.Kill(); sleeper.Wait() })
	here := index.ThisProcess()
	here.PID, here.Start = sleeper.Process.Pid, 0
	elsewhere := index.Owner{Host: here.Host + "-other", PID: 1}
	stale := index.Owner{Host: here.Host + "-other", PID: 2}
	for _, o := range []index.Owner{here, elsewhere, stale} {
		j := index.Job{BookID: "guide", Version: 1, Status: index.JobRunning, Owner: o}
		if o == stale {
			j.Started = time.Now().Add(-time.Hour)
		}
		require.NoError(t, e.meta.CreateJob(ctx, &j))
	}
	dead, err = index.RecoverJobs(ctx, e.meta, "guide")
	require.NoError(t, err)
	require.Len(t, dead, 1, "only the other host's job with a stale heartbeat is dead")
	require.Equal(t, stale, dead[0].Owner)
	in.Resume = true
	_, err = e.builder(nil).Index(ctx, in)
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err), "%v", err)
	require.Contains(t, citebook.ErrorMessage(err), "being indexed")
	_, err = e.builder(nil).Verify(ctx, "guide", true)
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err), "%v", err)

	// Once those processes are gone the resume takes over.
	require.NoError(t, sleeper.Process.Kill())
	sleeper.Wait()
	_, err = e.meta.SQL().ExecContext(ctx, `UPDATE jobs SET heartbeat = ? WHERE host = ?`,
		time.Now().Add(-time.Hour).UTC().Format(time.RFC3339Nano), elsewhere.Host)
	require.NoError(t, err)
	res, err := e.builder(nil).Index(ctx, in)
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	require.Equal(t, 1, res.Version)
	jobs, err = e.meta.Jobs(ctx, "guide")
	require.NoError(t, err)
	require.Len(t, jobs, 5)
	require.Equal(t, res.JobID, jobs[0].ID)
	require.Equal(t, index.JobCompleted, jobs[0].Status)
	for _, j := range jobs[1:] {
		require.Equal(t, index.JobAbandoned, j.Status, "job %d", j.ID)
		require.Equal(t, res.JobID, j.SupersededBy, "job %d", j.ID)
	}
}

// TestKillDuringDelete kills a book's deletion at each step: the book is
// never served with chunks missing from a store, and deleting it again
// removes it everywhere.
func TestKillDuringDelete(t *testing.T) {
	ctx := context.Background()
	for _, point := range []string{"delete-deactivated", "delete-vectors", "delete-lexical"} {
		t.Run(point, func(t *testing.T) {
			e := newCrashEnv(t, embeddedOpener)
			_, _, err := e.index(index.BookInput{BookID: "guide", Tenant: "acme", Path: writeBook(t, e.dir, "v1.md", same)}, nil)
			require.NoError(t, err)
			func() {
				defer func() { require.Equal(t, crash{point}, recover()) }()
				e.builder(crashAt(point, nil)).Delete(ctx, "guide")
			}()
			e.restart()
			require.Empty(t, e.servedDefects("guide"))
			book, err := e.meta.Book(ctx, "guide")
			require.NoError(t, err)
			require.Zero(t, book.Active, "a book being deleted is no longer served")

			require.NoError(t, e.builder(nil).Delete(ctx, "guide"))
			_, err = e.meta.Book(ctx, "guide")
			require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
			require.Empty(t, sorted(e.vec.IDs(ctx, "guide"))(t))
			require.Empty(t, sorted(e.lex.IDs(ctx, "guide"))(t))
		})
	}
}

// TestKillTwice kills a build, repairs, and kills the resume as well (at
// a batch, around the switch), then repairs and resumes again.
func TestKillTwice(t *testing.T) {
	sc := crashScenarios[1] // update
	base := runCrash(t, newCrashEnv(t, embeddedOpener), sc, "base", "")
	runs, broken := 0, 0
	for i := 0; i < len(base.reached); i += 5 {
		for _, again := range []string{"batch-1-lexical", "batch-2-recorded", "retire-vectors", "switch-verified", "activated"} {
			point := base.reached[i]
			out := runCrashTwice(t, newCrashEnv(t, embeddedOpener), sc, fmt.Sprintf("twice-%d", runs), point, again)
			runs++
			if len(out.defects) > 0 {
				broken++
				t.Errorf("kills at %s then %s: %s", point, again, strings.Join(out.defects, "; "))
			}
		}
	}
	t.Logf("double kills: %d; served a version missing chunks: %d", runs, broken)
}

// TestSwitchRefusesIncompleteVersion removes chunks of the new version from
// a store just before the switch (another process, an operator, a store
// losing writes): the build refuses to activate it, the previous version
// stays served, and a resume writes what is missing and switches.
func TestSwitchRefusesIncompleteVersion(t *testing.T) {
	ctx := context.Background()
	for _, store := range []string{"vector", "lexical"} {
		t.Run(store, func(t *testing.T) {
			e := newCrashEnv(t, embeddedOpener)
			_, _, err := e.index(index.BookInput{BookID: "guide", Tenant: "acme", Path: writeBook(t, e.dir, "v1.md", same)}, nil)
			require.NoError(t, err)
			v2 := writeBook(t, e.dir, "v2.md", revised)
			want := chunkIDs(t, v2, "guide")
			in := index.BookInput{BookID: "guide", Tenant: "acme", Path: v2}
			_, res, err := e.index(in, func(name string) {
				if name == "chunk-rows" {
					lost := want[:3]
					if store == "vector" {
						require.NoError(t, e.vec.Delete(ctx, lost))
					} else {
						require.NoError(t, e.lex.Delete(ctx, lost))
					}
				}
			})
			require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err), "%v", err)
			require.Contains(t, res.Error, "the "+store)
			require.Equal(t, "failed", res.Status)
			book, err := e.meta.Book(ctx, "guide")
			require.NoError(t, err)
			require.Equal(t, 1, book.Active, "the incomplete version is not served")
			require.Empty(t, e.servedDefects("guide"))

			in.Resume = true
			res, err = e.builder(nil).Index(ctx, in)
			require.NoError(t, err)
			require.Equal(t, 2, res.Version)
			require.Equal(t, 3, res.Embedded, "only the lost chunks are written again")
			require.Empty(t, e.servedDefects("guide"))
			meta, vec, lex := sortedStored(t, e, "guide")
			require.Equal(t, want, meta)
			require.Equal(t, want, vec)
			require.Equal(t, want, lex)
		})
	}
}
