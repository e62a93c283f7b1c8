package metadb_test

import (
	"context"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/index"
	"github.com/citebook/citebook/index/metadb"
)

func queueJob(t *testing.T, db *metadb.DB, handle, tenant, book string) {
	t.Helper()
	require.NoError(t, db.Enqueue(context.Background(), index.QueueEntry{
		Job:   citebook.Job{Handle: handle, BookID: book, Tenant: tenant},
		Input: citebook.BookInput{BookID: book, Tenant: tenant, Path: "/books/" + book, Groups: []string{"crew"}, Owned: true}}, 0))
	time.Sleep(2 * time.Millisecond) // queued times in ms order
}

// TestQueueClaims is the job queue's contract: claims are fair across
// tenants, never start a book another build holds, leases are renewed only
// by their holder and expire into a takeover that resumes, and a cancel
// ends a queued job at once and flags a running one.
func TestQueueClaims(t *testing.T) { each(t, testQueueClaims) }

func testQueueClaims(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	w1 := index.Worker{ID: "w_1", Owner: index.Owner{Host: "h", PID: 1}}
	w2 := index.Worker{ID: "w_2", Owner: index.Owner{Host: "h", PID: 2}}
	claim := func(w index.Worker, lease time.Duration) *index.QueueEntry {
		t.Helper()
		e, err := db.Claim(ctx, index.Claim{Worker: w, Lease: lease})
		require.NoError(t, err)
		return e
	}
	queueJob(t, db, "job_a1", "acme", "a1")
	queueJob(t, db, "job_a2", "acme", "a2")
	queueJob(t, db, "job_a1bis", "acme", "a1")
	queueJob(t, db, "job_g1", "globex", "g1")

	e := claim(w1, time.Minute)
	require.Equal(t, "job_a1", e.Job.Handle, "oldest first")
	require.Equal(t, []string{"crew"}, e.Input.Groups)
	require.True(t, e.Input.Owned)
	e = claim(w2, time.Minute)
	require.Equal(t, "job_g1", e.Job.Handle, "the tenant with no running job before acme's second")
	e = claim(w2, time.Minute)
	require.Equal(t, "job_a2", e.Job.Handle, "a1's second job waits while a1 is being built")
	require.Nil(t, claim(w2, time.Minute), "nothing claimable: a1 is held")

	r, err := db.Renew(ctx, "job_a1", w2, time.Minute)
	require.NoError(t, err)
	require.True(t, r.Lost, "only the holder renews")
	r, err = db.Renew(ctx, "job_a1", w1, time.Minute)
	require.NoError(t, err)
	require.False(t, r.Lost)

	// A cancel: queued ends at once, running is flagged for its worker.
	got, err := db.RequestCancel(ctx, "job_a1bis")
	require.NoError(t, err)
	require.Equal(t, citebook.JobCancelled, got.Job.Status)
	_, err = db.RequestCancel(ctx, "job_a1bis")
	require.Equal(t, citebook.ECONFLICT, citebook.ErrorCode(err))
	got, err = db.RequestCancel(ctx, "job_a2")
	require.NoError(t, err)
	require.Equal(t, citebook.JobRunning, got.Job.Status)
	r, err = db.Renew(ctx, "job_a2", w2, time.Minute)
	require.NoError(t, err)
	require.True(t, r.Cancel)

	// The end is recorded by the holder only.
	require.NoError(t, db.Finish(ctx, "job_a2", w1, citebook.Job{Status: citebook.JobCompleted}))
	got, err = db.Entry(ctx, "job_a2")
	require.NoError(t, err)
	require.Equal(t, citebook.JobRunning, got.Job.Status, "not w1's to finish")
	require.NoError(t, db.Finish(ctx, "job_a2", w2, citebook.Job{Status: citebook.JobCancelled, Error: "cancelled", ID: 7}))
	got, err = db.Entry(ctx, "job_a2")
	require.NoError(t, err)
	require.Equal(t, citebook.JobCancelled, got.Job.Status)
	require.Equal(t, int64(7), got.Job.ID)

	// w2 dies holding g1: once its lease is over, w1 takes it, resuming.
	require.NoError(t, db.Expire(ctx, "job_g1", "w_2"))
	e = claim(w1, time.Minute)
	require.NotNil(t, e)
	require.Equal(t, "job_g1", e.Job.Handle)
	require.Equal(t, 2, e.Attempts)
	require.True(t, e.Input.Resume)
	r, err = db.Renew(ctx, "job_g1", w2, time.Minute)
	require.NoError(t, err)
	require.True(t, r.Lost, "the dead worker lost it")

	// Handed back at shutdown: queued again, to be resumed.
	require.NoError(t, db.Release(ctx, "job_g1", w1))
	got, err = db.Entry(ctx, "job_g1")
	require.NoError(t, err)
	require.Equal(t, citebook.JobQueued, got.Job.Status)
	require.True(t, got.Input.Resume)

	// A job only its worker may run is invisible to the others.
	require.NoError(t, db.Enqueue(ctx, index.QueueEntry{Job: citebook.Job{Handle: "job_cli", BookID: "c", Tenant: "acme"},
		Input: citebook.BookInput{BookID: "c", Tenant: "acme", Path: "/c"}, Only: "w_cli"}, 0))
	e, err = db.Claim(ctx, index.Claim{Worker: w2, Lease: time.Minute})
	require.NoError(t, err)
	require.Equal(t, "job_g1", e.Job.Handle)
	e, err = db.Claim(ctx, index.Claim{Worker: index.Worker{ID: "w_cli"}, Lease: time.Minute, Own: true})
	require.NoError(t, err)
	require.Equal(t, "job_cli", e.Job.Handle)

	es, err := db.Entries(ctx, "")
	require.NoError(t, err)
	require.Len(t, es, 3, "queued and running ones: a1, g1, cli")
	more := func(h string) error {
		return db.Enqueue(ctx, index.QueueEntry{Job: citebook.Job{Handle: h, BookID: h, Tenant: "acme"},
			Input: citebook.BookInput{BookID: h, Tenant: "acme", Path: "/m"}}, 1)
	}
	require.NoError(t, more("job_m1"))
	require.Equal(t, citebook.EUNAVAILABLE, citebook.ErrorCode(more("job_m2")), "a full queue refuses")
}

// TestQueueUnrecorded: the failed and cancelled jobs without a build record
// are what `citebook jobs` adds to the recorded history (a failed first
// build removes its book and records); completed ones without a record were
// unchanged books, and jobs still open are the queue's to show.
func TestQueueUnrecorded(t *testing.T) { each(t, testQueueUnrecorded) }

func testQueueUnrecorded(t *testing.T, db *metadb.DB) {
	ctx := context.Background()
	w := index.Worker{ID: "w_1", Owner: index.Owner{Host: "h", PID: 1}}
	servedBook(t, db, "kept", 1)
	rec := index.Job{BookID: "kept", Version: 1, Status: citebook.JobRunning, Started: time.Now()}
	require.NoError(t, db.CreateJob(ctx, &rec))
	end := func(handle, book string, j citebook.Job) {
		t.Helper()
		require.NoError(t, db.Enqueue(ctx, index.QueueEntry{Job: citebook.Job{Handle: handle, BookID: book, Tenant: "t"},
			Worker: w.ID, Lease: time.Now().Add(time.Minute), Input: citebook.BookInput{BookID: book, Tenant: "t", Path: "/" + book}}, 0))
		if j.Status != "" {
			require.NoError(t, db.Finish(ctx, handle, w, j))
		}
		time.Sleep(2 * time.Millisecond) // queued times in ms order
	}
	end("job_gone", "gone", citebook.Job{Status: citebook.JobFailed, Error: "PDF file is truncated", ID: 41}) // its record went with its book
	end("job_unread", "kept", citebook.Job{Status: citebook.JobFailed, Error: "unreadable"})                  // failed before it was recorded
	end("job_kept", "kept", citebook.Job{Status: citebook.JobFailed, Error: "batch failed", ID: rec.ID})      // recorded: the history shows it
	end("job_same", "kept", citebook.Job{Status: citebook.JobCompleted})                                      // unchanged: nothing was built
	end("job_stop", "other", citebook.Job{Status: citebook.JobCancelled, Error: "cancelled"})
	end("job_open", "other", citebook.Job{})

	handles := func(book string) []string {
		es, err := db.Unrecorded(ctx, book)
		require.NoError(t, err)
		var out []string
		for _, e := range es {
			out = append(out, e.Job.Handle)
		}
		return out
	}
	require.Equal(t, []string{"job_stop", "job_unread", "job_gone"}, handles(""), "newest first")
	require.Equal(t, []string{"job_unread"}, handles("kept"))
	es, err := db.Unrecorded(ctx, "gone")
	require.NoError(t, err)
	require.Len(t, es, 1)
	require.Equal(t, citebook.JobFailed, es[0].Job.Status)
	require.Equal(t, "PDF file is truncated", es[0].Job.Error)
}
