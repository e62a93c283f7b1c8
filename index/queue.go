package index

import (
	"context"
	"time"
)

// Several processes share one queue of index jobs (serve, `citebook
// worker`, the CLI): a job is a row in the metadata database, queued by any
// of them and claimed by one worker at a time with a lease the worker
// renews while the build runs. A worker that dies stops renewing; once its
// lease runs out (or, on the same host, as soon as its process is seen to
// be gone) another worker claims the job again and resumes the build from
// its last completed batch. A cancel is a flag on the row, so it reaches
// the worker holding the job wherever that runs. index/metadb implements
// Queue on SQLite and PostgreSQL.

// Worker is one Runner as the queue knows it: ID tells two runners of one
// process apart, Owner the process, so a holder on this host can be seen
// to be dead.
type Worker struct {
	ID    string
	Owner Owner
}

// QueueEntry is one job of the shared queue.
type QueueEntry struct {
	// Job carries the handle, book, tenant, status, times, the build
	// record's ID and counts once it ended, and in Owner the process that
	// holds (or last held) it.
	Job   Job
	Input BookInput // Owned included; Progress is never stored
	// Only, when set, is the one worker that may claim the job (the CLI
	// runs its own books and nobody else's).
	Only     string
	Worker   string    // the worker holding the job while it runs
	Lease    time.Time // until when the holder's claim is valid
	Cancel   bool      // a cancel was requested
	Attempts int       // claims so far; above 1 the job was taken over
}

// Renewal is what renewing a lease learns.
type Renewal struct {
	Lost   bool // another worker holds the job now (or it ended)
	Cancel bool // a cancel was requested
}

// Claim says which job a worker may take.
type Claim struct {
	Worker Worker
	Lease  time.Duration
	// Busy are books with a build still alive in the claiming process
	// (a cancelled build that has not returned yet).
	Busy []string
	// Own limits the claim to jobs only this worker may run (the CLI's).
	Own bool
}

// Queue is the shared, persisted queue of index jobs.
type Queue interface {
	// Enqueue adds a queued job (or, with e.Worker set, one already held
	// by that worker); it fails with EUNAVAILABLE when maxQueued jobs are
	// waiting already.
	Enqueue(ctx context.Context, e QueueEntry, maxQueued int) error
	// Claim takes the next job for c.Worker: never a book another build
	// holds, the tenant with the fewest running jobs first, then the tenant
	// served longest ago, then the oldest job. It returns nil when nothing
	// is claimable.
	Claim(ctx context.Context, c Claim) (*QueueEntry, error)
	// Renew extends w's lease on a job and reports a requested cancel, or
	// that w lost the job.
	Renew(ctx context.Context, handle string, w Worker, lease time.Duration) (Renewal, error)
	// Finish records the end of a job w holds (status, error, the build
	// record and its counts); a job w no longer holds is left alone.
	Finish(ctx context.Context, handle string, w Worker, j Job) error
	// Link records the build record (Job.ID) of the job w runs.
	Link(ctx context.Context, handle string, w Worker, jobID int64) error
	// Release gives a running job w holds back to the queue, to be resumed
	// by the next worker (graceful shutdown).
	Release(ctx context.Context, handle string, w Worker) error
	// Expire ends the lease of a running job whose holder w is known dead,
	// so the job can be claimed at once.
	Expire(ctx context.Context, handle string, w string) error
	// RequestCancel cancels a queued job at once and flags a running one;
	// it returns the entry as it then stands, or ECONFLICT if it ended.
	RequestCancel(ctx context.Context, handle string) (QueueEntry, error)
	// Entry returns one job or ENOTFOUND.
	Entry(ctx context.Context, handle string) (QueueEntry, error)
	// Entries lists jobs, newest first: one book's, or with bookID ""
	// those queued or running.
	Entries(ctx context.Context, bookID string) ([]QueueEntry, error)
}
