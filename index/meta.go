package index

import (
	"context"
	"time"

	"github.com/citebook/citebook"
)

// JobStatus and Job are the domain's (citebook.Job), named here too so the
// builder and its stores read naturally; they are the same types.
type (
	JobStatus = citebook.JobStatus
	Job       = citebook.Job
)

// Job states the builder records; a job that failed can be resumed by a
// later job on the same version.
const (
	JobRunning   = citebook.JobRunning
	JobCompleted = citebook.JobCompleted
	JobFailed    = citebook.JobFailed
	// JobAbandoned: the job's process ended without recording an end
	// (killed, crashed, power cut); see RecoverJobs.
	JobAbandoned = citebook.JobAbandoned
)

// BatchStatus is the state of one batch of chunks inside a job.
type BatchStatus string

// Batch states; a resumed build skips the chunks of batches already done.
const (
	BatchPending BatchStatus = "pending"
	BatchDone    BatchStatus = "done"
	BatchFailed  BatchStatus = "failed"
)

// Batch is a unit of embedding and upserting, recorded so a failed build
// can be resumed without redoing finished work and its failure explained.
type Batch struct {
	JobID    int64       `json:"job_id"`
	N        int         `json:"n"`
	Status   BatchStatus `json:"status"`
	Attempts int         `json:"attempts"`
	Error    string      `json:"error,omitempty"`
	ChunkIDs []string    `json:"chunk_ids"`
}

// Meta is the metadata database as the builder needs it: books, versions,
// jobs and batches, and the versioned parent and chunk records readers are
// served from. index/metadb implements it.
//
// Parent and chunk rows are lifespans: a row is visible in versions
// [version, retired) of its book, like chunks in the stores, so rows of a
// version being built are invisible to readers of the active one.
type Meta interface {
	// Book returns a book or an ENOTFOUND error.
	Book(ctx context.Context, id string) (*citebook.Book, error)
	// PutBook inserts or updates a book's descriptive fields; it never
	// changes the active version (only Activate does).
	PutBook(ctx context.Context, b citebook.Book) error
	// DeleteBook removes a book and everything recorded about it.
	DeleteBook(ctx context.Context, id string) error
	// Deactivate stops serving a book (no active version) without
	// removing it; the first step of deleting it.
	Deactivate(ctx context.Context, id string) error
	// Versions lists a book's versions, oldest first.
	Versions(ctx context.Context, bookID string) ([]citebook.Version, error)
	// CreateVersion records a new build of a book.
	CreateVersion(ctx context.Context, v citebook.Version) error
	// SetVersionStatus moves a version to status, recording msg as its error.
	SetVersionStatus(ctx context.Context, bookID string, version int, status citebook.VersionStatus, msg string) error
	// SetSourceHash records the source hash a version's content also
	// matches (the same chunks parsed under a newer ingest.Revision), so
	// the next index run of the unchanged file need not parse it again.
	SetSourceHash(ctx context.Context, bookID string, version int, hash string) error
	// Activate completes a version and makes it the one served, atomically.
	Activate(ctx context.Context, bookID string, version int) error
	// DiscardVersion removes the parent and chunk rows a failed build wrote
	// and undoes its retirements, so a fresh build starts from the active
	// version.
	DiscardVersion(ctx context.Context, bookID string, version int) error

	// CreateJob inserts a job and sets its ID.
	CreateJob(ctx context.Context, j *Job) error
	// UpdateJob saves a job's status, error, counts, finish time and
	// superseding job.
	UpdateJob(ctx context.Context, j Job) error
	// TouchJob records that a running job's process is alive at t.
	TouchJob(ctx context.Context, id int64, t time.Time) error
	// Jobs lists jobs, newest first; bookID "" lists every book's.
	Jobs(ctx context.Context, bookID string) ([]Job, error)
	// CreateBatches inserts the planned batches of a job.
	CreateBatches(ctx context.Context, bs []Batch) error
	// UpdateBatch saves a batch's status, attempts and error.
	UpdateBatch(ctx context.Context, b Batch) error
	// Batches lists a job's batches in order.
	Batches(ctx context.Context, jobID int64) ([]Batch, error)

	// SaveParents writes parent rows visible from version on.
	SaveParents(ctx context.Context, version int, ps []citebook.Parent) error
	// RetireParents ends the current rows of the given parents at version.
	RetireParents(ctx context.Context, bookID string, ids []string, version int) error
	// Parents returns a book's parents visible in version, in order.
	Parents(ctx context.Context, bookID string, version int) ([]citebook.Parent, error)
	// SaveChunks writes chunk rows, each visible from its Version on.
	SaveChunks(ctx context.Context, cs []citebook.Chunk) error
	// RetireChunks ends the current rows of the given chunks at version.
	RetireChunks(ctx context.Context, bookID string, ids []string, version int) error
	// ChunksAt returns a book's chunks visible in version, in order.
	ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error)
	// ChunkIDs lists the IDs of a book's chunks visible in version.
	ChunkIDs(ctx context.Context, bookID string, version int) ([]string, error)
	// DeleteRetired physically removes rows retired at or before version.
	DeleteRetired(ctx context.Context, bookID string, version int) error

	// EmbeddingVersion returns the library's embedding version; ok is false
	// before anything was embedded.
	EmbeddingVersion(ctx context.Context) (v citebook.EmbeddingVersion, ok bool, err error)
	// SetEmbeddingVersion records the embedding version of the library.
	SetEmbeddingVersion(ctx context.Context, v citebook.EmbeddingVersion) error
}
