package index_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/memstore"
	"github.com/citebook/citebook/internal/dbtest"
)

// envAt is embeddedEnv with the metadata in target.
func envAt(t *testing.T, target string) *env {
	return newEnvOn(t, func(t *testing.T, _ int) index.VectorStore {
		s, err := memstore.Open(context.Background(), t.TempDir())
		require.NoError(t, err)
		t.Cleanup(func() { s.Close() })
		return s
	}, func(*testing.T, string) string { return target })
}

// TestQueueSharedAcrossRunners: a job queued through a runner that runs
// nothing (a server with --index-workers 0) is run by another runner on the
// same library (a worker), and a cancel asked of the first reaches the
// build in the second within a lease renewal.
func TestQueueSharedAcrossRunners(t *testing.T) {
	dbtest.Each(t, testQueueSharedAcrossRunners)
}

func testQueueSharedAcrossRunners(t *testing.T, target string) {
	e := envAt(t, target)
	sp := newSlowParse(true)
	defer close(sp.release)
	b := e.builder(index.BuilderOptions{Parse: sp.parse})
	api := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{QueueOnly: true, Logger: quiet()})
	defer api.Close(context.Background())
	worker := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{Workers: 1, RenewEvery: 100 * time.Millisecond,
		PollEvery: 50 * time.Millisecond, Logger: quiet()})
	defer worker.Close(context.Background())
	ctx := context.Background()
	dir := t.TempDir()

	small, err := api.Submit(ctx, citebook.BookInput{BookID: "small", Tenant: "acme", Path: bookFile(t, dir, "small.md")})
	require.NoError(t, err)
	require.Equal(t, citebook.JobCompleted, waitEnded(t, api, small.Handle, 10*time.Second).Status)
	_, err = e.meta.Book(ctx, "small")
	require.NoError(t, err, "built by the worker")

	huge, err := api.Submit(ctx, citebook.BookInput{BookID: "huge", Tenant: "acme", Path: bookFile(t, dir, "huge.md")})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		j, _ := api.Job(ctx, huge.Handle)
		return j.Status == citebook.JobRunning
	}, 5*time.Second, 5*time.Millisecond)
	es, err := e.queue().Entries(ctx, "huge")
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, worker.WorkerID(), es[0].Worker, "the worker holds it")
	t0 := time.Now()
	j, err := api.Cancel(ctx, huge.Handle)
	require.NoError(t, err)
	require.Equal(t, citebook.JobRunning, j.Status, "running elsewhere: told to stop")
	j = waitEnded(t, api, huge.Handle, 5*time.Second)
	require.Equal(t, citebook.JobCancelled, j.Status)
	t.Logf("cancel reached the other runner's build in %s", time.Since(t0).Round(time.Millisecond))
	require.Less(t, time.Since(t0), 2*time.Second)
}

// TestQueueTakesOverDeadWorkersJob: a job whose worker stopped renewing
// its lease (killed on another host) is claimed by the next worker and
// built, resuming.
func TestQueueTakesOverDeadWorkersJob(t *testing.T) {
	dbtest.Each(t, testQueueTakesOverDeadWorkersJob)
}

func testQueueTakesOverDeadWorkersJob(t *testing.T, target string) {
	e := envAt(t, target)
	b := e.builder(index.BuilderOptions{})
	ctx := context.Background()
	q := e.queue()
	j := citebook.Job{Handle: "job_dead", BookID: "guide", Tenant: "acme", Owner: index.Owner{Host: "elsewhere", PID: 42}}
	require.NoError(t, q.Enqueue(ctx, index.QueueEntry{Job: j, Worker: "w_dead", Lease: time.Now().Add(300 * time.Millisecond),
		Input: citebook.BookInput{BookID: "guide", Tenant: "acme", Path: bookFile(t, t.TempDir(), "guide.md")}}, 0))
	worker := index.NewRunner(b, e.meta, q, index.RunnerOptions{Workers: 1, PollEvery: 50 * time.Millisecond, Logger: quiet()})
	defer worker.Close(context.Background())
	time.Sleep(150 * time.Millisecond)
	got, err := q.Entry(ctx, "job_dead")
	require.NoError(t, err)
	require.Equal(t, "w_dead", got.Worker, "not taken while the lease holds")
	done := waitEnded(t, worker, "job_dead", 10*time.Second)
	require.Equal(t, citebook.JobCompleted, done.Status, done.Error)
	got, err = q.Entry(ctx, "job_dead")
	require.NoError(t, err)
	require.Equal(t, worker.WorkerID(), got.Worker)
	require.Equal(t, 2, got.Attempts)
	require.True(t, got.Input.Resume, "a taken-over job resumes its build")
	require.NotZero(t, got.Job.ID, "linked to its build record")
}

// TestQueueHandOverAtShutdown: a runner that stops hands its running job
// back to the queue and another runner finishes it; a CLI's job (Run) is
// never claimed by another runner.
func TestQueueHandOverAtShutdown(t *testing.T) {
	e := embeddedEnv(t)
	sp := newSlowParse(true)
	b := e.builder(index.BuilderOptions{Parse: sp.parse})
	ctx := context.Background()
	dir := t.TempDir()
	first := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{Workers: 1, Logger: quiet()})
	j, err := first.Submit(ctx, citebook.BookInput{BookID: "huge", Tenant: "acme", Path: bookFile(t, dir, "huge.md")})
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, _ := first.Job(ctx, j.Handle)
		return got.Status == citebook.JobRunning
	}, 5*time.Second, 5*time.Millisecond)
	require.NoError(t, first.Close(ctx))
	got, err := e.queue().Entry(ctx, j.Handle)
	require.NoError(t, err)
	require.Equal(t, citebook.JobQueued, got.Job.Status, "handed back, not failed")
	require.True(t, got.Input.Resume)

	close(sp.release)
	second := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{Workers: 1, PollEvery: 50 * time.Millisecond, Logger: quiet()})
	done := waitEnded(t, second, j.Handle, 10*time.Second)
	require.Equal(t, citebook.JobCompleted, done.Status, done.Error)
	got, err = e.queue().Entry(ctx, j.Handle)
	require.NoError(t, err)
	require.Equal(t, second.WorkerID(), got.Worker)

	require.NoError(t, second.Close(ctx))

	// The CLI runs its own job and no other: a server's upload waits for
	// a server or a worker.
	api := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{QueueOnly: true, Logger: quiet()})
	defer api.Close(ctx)
	other, err := api.Submit(ctx, citebook.BookInput{BookID: "other", Tenant: "acme", Path: bookFile(t, dir, "other.md")})
	require.NoError(t, err)
	cli := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{Workers: 1, OwnOnly: true, PollEvery: 20 * time.Millisecond, Logger: quiet()})
	defer cli.Close(ctx)
	res, err := cli.Run(ctx, citebook.BookInput{BookID: "mine", Tenant: "acme", Path: bookFile(t, dir, "mine.md")})
	require.NoError(t, err)
	require.Equal(t, "completed", res.Status)
	es, err := e.queue().Entries(ctx, "mine")
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, cli.WorkerID(), es[0].Worker)
	time.Sleep(100 * time.Millisecond)
	got, err = e.queue().Entry(ctx, other.Handle)
	require.NoError(t, err)
	require.Equal(t, citebook.JobQueued, got.Job.Status, "the CLI left the server's job alone")
}

// TestQueueCancelCLIJobFromAnotherProcess: the API (another runner) cancels
// a job the CLI runs (Run), and the CLI's Run returns the cancellation.
func TestQueueCancelCLIJobFromAnotherProcess(t *testing.T) {
	e := embeddedEnv(t)
	sp := newSlowParse(true)
	defer close(sp.release)
	b := e.builder(index.BuilderOptions{Parse: sp.parse})
	ctx := context.Background()
	cli := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{Workers: 1, OwnOnly: true, RenewEvery: 100 * time.Millisecond, Logger: quiet()})
	defer cli.Close(ctx)
	api := index.NewRunner(b, e.meta, e.queue(), index.RunnerOptions{QueueOnly: true, Logger: quiet()})
	defer api.Close(ctx)
	errc := make(chan error, 1)
	go func() {
		_, err := cli.Run(ctx, citebook.BookInput{BookID: "huge", Tenant: "acme", Path: bookFile(t, t.TempDir(), "huge.md")})
		errc <- err
	}()
	var handle string
	require.Eventually(t, func() bool {
		es, _ := e.queue().Entries(ctx, "huge")
		if len(es) == 1 && es[0].Job.Status == citebook.JobRunning {
			handle = es[0].Job.Handle
		}
		return handle != ""
	}, 5*time.Second, 5*time.Millisecond)
	_, err := api.Cancel(ctx, handle)
	require.NoError(t, err)
	select {
	case err := <-errc:
		require.Contains(t, citebook.ErrorMessage(err), "cancelled")
	case <-time.After(5 * time.Second):
		t.Fatal("the CLI's job was not cancelled")
	}
	j, err := api.Job(ctx, handle)
	require.NoError(t, err)
	require.Equal(t, citebook.JobCancelled, j.Status)
}
