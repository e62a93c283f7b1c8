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
