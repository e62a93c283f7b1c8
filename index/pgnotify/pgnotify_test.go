package pgnotify_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
	"github.com/citebook/citebook/index/pgnotify"
	"github.com/citebook/citebook/internal/dbtest"
)

// TestListen: the migrations' triggers notify, the handlers run at once —
// once at connect (the catch-up) and again for a logged change and for a
// queued job.
func TestListen(t *testing.T) {
	dsn := dbtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := metadb.Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()

	var changes, jobs atomic.Int32
	l := pgnotify.New(dsn, nil)
	l.On(pgnotify.Changes, func(context.Context) { changes.Add(1) })
	l.On(pgnotify.Jobs, func(context.Context) { jobs.Add(1) })
	go l.Run(ctx)
	require.Eventually(t, func() bool { return changes.Load() == 1 && jobs.Load() == 1 }, 10*time.Second, 10*time.Millisecond,
		"every handler runs once at connect, to catch up")

	// A book's deletion is logged in the change log.
	require.NoError(t, db.PutBook(ctx, citebook.Book{ID: "b", Tenant: "acme", Title: "B"}))
	t0 := time.Now()
	require.NoError(t, db.DeleteBook(ctx, "b"))
	require.Eventually(t, func() bool { return changes.Load() >= 2 }, 2*time.Second, 5*time.Millisecond)
	t.Logf("change noticed %s after its commit", time.Since(t0).Round(time.Millisecond))

	t0 = time.Now()
	require.NoError(t, db.Enqueue(ctx, index.QueueEntry{Job: citebook.Job{Handle: "job_x", BookID: "b", Tenant: "acme"},
		Input: citebook.BookInput{BookID: "b", Tenant: "acme", Path: "/nowhere"}}, 0))
	require.Eventually(t, func() bool { return jobs.Load() >= 2 }, 2*time.Second, 5*time.Millisecond)
	t.Logf("queued job noticed %s after its commit", time.Since(t0).Round(time.Millisecond))
}

// TestCancelNotified: on PostgreSQL a cancel requested through one runner
// reaches the build in another at once (NOTIFY wakes its lease renewal),
// not at its next renewal a second later.
func TestCancelNotified(t *testing.T) {
	dsn := dbtest.DSN(t)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	db, err := metadb.Open(ctx, dsn)
	require.NoError(t, err)
	defer db.Close()
	started := make(chan struct{}, 1)
	b := blocking{started: started}
	worker := index.NewRunner(b, db, db, index.RunnerOptions{Workers: 1, RenewEvery: 5 * time.Second})
	defer worker.Close(context.Background())
	api := index.NewRunner(b, db, db, index.RunnerOptions{QueueOnly: true})
	defer api.Close(context.Background())
	l := pgnotify.New(dsn, nil)
	l.On(pgnotify.Jobs, func(context.Context) { worker.Wake() })
	go l.Run(ctx)

	j, err := api.Submit(ctx, citebook.BookInput{BookID: "b", Tenant: "acme", Path: "/nowhere"})
	require.NoError(t, err)
	<-started
	t0 := time.Now()
	_, err = api.Cancel(ctx, j.Handle)
	require.NoError(t, err)
	require.Eventually(t, func() bool {
		got, _ := api.Job(ctx, j.Handle)
		return got.Status == citebook.JobCancelled
	}, 2*time.Second, 5*time.Millisecond, "renewal is every 5 s: only the notification can be this fast")
	t.Logf("cancel through another runner ended the build %s later", time.Since(t0).Round(time.Millisecond))
}

// blocking is an Indexer whose builds run until cancelled.
type blocking struct{ started chan struct{} }

func (b blocking) Index(ctx context.Context, _ index.BookInput) (*index.JobResult, error) {
	b.started <- struct{}{}
	<-ctx.Done()
	return nil, ctx.Err()
}

func (blocking) Delete(context.Context, string) error { return nil }
