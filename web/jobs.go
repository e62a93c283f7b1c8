package web

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"log/slog"
	"slices"
	"sync"
	"time"

	"github.com/citebook/citebook"
)

// BuildFunc runs one index build to the end and reports its counts; cmd wires
// it to the index Builder.
type BuildFunc func(ctx context.Context, req IndexRequest) (Job, error)

// DeleteFunc removes a book from every store; cmd wires it to the builder so
// vectors, lexical entries and metadata go together.
type DeleteFunc func(ctx context.Context, bookID string) error

// HistoryFunc lists the builds recorded in the metadata database (including
// those run by the CLI or before a restart), newest first.
type HistoryFunc func(ctx context.Context, bookID string) ([]Job, error)

// Runner is the Indexer the server uses: builds run one at a time on a
// background goroutine (embedding saturates the machine anyway), so an upload
// answers 202 at once and clients poll the job.
type Runner struct {
	build   BuildFunc
	delete  DeleteFunc
	history HistoryFunc
	log     *slog.Logger

	mu    sync.Mutex
	jobs  map[string]*Job
	reqs  map[string]IndexRequest // requests of queued jobs
	order []string                // job IDs, oldest first
	queue chan string
	stop  context.CancelFunc
	done  chan struct{}
}

// NewRunner starts the worker; Close stops it. history may be nil.
func NewRunner(build BuildFunc, del DeleteFunc, history HistoryFunc, log *slog.Logger) *Runner {
	ctx, cancel := context.WithCancel(context.Background())
	r := &Runner{
		build: build, delete: del, history: history, log: log,
		jobs: map[string]*Job{}, reqs: map[string]IndexRequest{}, queue: make(chan string, 1024),
		stop: cancel, done: make(chan struct{}),
	}
	go r.work(ctx)
	return r
}

// Submit queues a build and returns at once; a full queue answers
// unavailable so clients back off instead of piling work on a busy machine.
func (r *Runner) Submit(_ context.Context, req IndexRequest) (Job, error) {
	var raw [8]byte
	_, _ = rand.Read(raw[:])
	j := &Job{ID: "job_" + hex.EncodeToString(raw[:]), BookID: req.BookID, Tenant: req.Tenant, Status: JobQueued, Created: time.Now().UTC()}
	r.mu.Lock()
	defer r.mu.Unlock()
	select {
	case r.queue <- j.ID:
	default:
		return Job{}, citebook.Errorf(citebook.EUNAVAILABLE, "too many index jobs queued; try again later")
	}
	r.jobs[j.ID] = j
	r.order = append(r.order, j.ID)
	r.reqs[j.ID] = req
	return *j, nil
}

// Job returns a job by ID. Only this process's jobs are known (they live in
// memory); builds from before a restart are in Jobs' recorded history.
func (r *Runner) Job(_ context.Context, id string) (Job, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	j, ok := r.jobs[id]
	if !ok {
		return Job{}, citebook.Errorf(citebook.ENOTFOUND, "no job %q", id)
	}
	return *j, nil
}

// Jobs returns a book's jobs, newest first: those queued or run by this
// process, then the recorded history they do not already cover.
func (r *Runner) Jobs(ctx context.Context, bookID string) ([]Job, error) {
	r.mu.Lock()
	var out []Job
	seen := map[int64]bool{}
	for _, id := range slices.Backward(r.order) {
		if j := r.jobs[id]; j.BookID == bookID {
			out = append(out, *j)
			seen[j.IndexJob] = true
		}
	}
	r.mu.Unlock()
	if r.history == nil {
		return out, nil
	}
	past, err := r.history(ctx, bookID)
	if err != nil {
		return nil, err
	}
	for _, j := range past {
		if !seen[j.IndexJob] {
			out = append(out, j)
		}
	}
	return out, nil
}

// Delete removes a book; it refuses while a build of it is queued or running.
func (r *Runner) Delete(ctx context.Context, bookID string) error {
	r.mu.Lock()
	for _, j := range r.jobs {
		if j.BookID == bookID && (j.Status == JobQueued || j.Status == JobRunning) {
			r.mu.Unlock()
			return citebook.Errorf(citebook.ECONFLICT, "book %q is being indexed (job %s); delete it when the job ends", bookID, j.ID)
		}
	}
	r.mu.Unlock()
	return r.delete(ctx, bookID)
}

// Close stops taking jobs and waits for the running one to end or ctx to
// expire; a build cut short fails and never replaces the active version.
func (r *Runner) Close(ctx context.Context) error {
	r.stop()
	select {
	case <-r.done:
		return nil
	case <-ctx.Done():
		return ctx.Err()
	}
}

func (r *Runner) work(ctx context.Context) {
	defer close(r.done)
	for {
		select {
		case <-ctx.Done():
			return
		case id := <-r.queue:
			r.run(ctx, id)
		}
	}
}

func (r *Runner) run(ctx context.Context, id string) {
	r.mu.Lock()
	j := r.jobs[id]
	req := r.reqs[id]
	delete(r.reqs, id)
	j.Status = JobRunning
	r.mu.Unlock()

	r.log.Info("index job started", "job", id, "book", req.BookID)
	res, err := r.build(ctx, req)

	r.mu.Lock()
	defer r.mu.Unlock()
	j.Finished = time.Now().UTC()
	j.IndexJob, j.Version, j.Chunks, j.Embedded, j.Upserted, j.Deleted = res.IndexJob, res.Version, res.Chunks, res.Embedded, res.Upserted, res.Deleted
	if err != nil {
		j.Status, j.Error = JobFailed, citebook.ErrorMessage(err)
		r.log.Error("index job failed", "job", id, "book", req.BookID, "err", err)
		return
	}
	j.Status = JobCompleted
	r.log.Info("index job completed", "job", id, "book", req.BookID, "version", j.Version, "chunks", j.Chunks)
}
