// Package web serves citebook over HTTP: the JSON API under /v1, server-sent
// answer streams, the MCP server (search and ask as tools), Prometheus metrics
// and the reader page. It owns authentication (bearer tokens → principals),
// rate limits and the mapping of error codes to HTTP statuses; everything it
// serves comes through the small interfaces below, which cmd wires to the real
// packages. No other package imports web.
package web

import (
	"context"
	"io"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/qa"
)

// Asker answers a question for a principal, calling onDelta with answer text
// as it is produced so it can be streamed.
type Asker interface {
	Ask(ctx context.Context, p citebook.Principal, req qa.Request, onDelta func(string)) (*qa.Answer, error)
}

// Searcher runs retrieval only, for tools that want the passages themselves.
type Searcher interface {
	Search(ctx context.Context, p citebook.Principal, req qa.Request) ([]qa.SearchResult, error)
}

// Authorizer resolves what a principal may read, ahead of any read.
type Authorizer interface {
	Filter(ctx context.Context, p citebook.Principal) (citebook.Filter, error)
}

// Library is the metadata the API and the reader read (index/metadb.DB
// implements it). It does no access control: web checks every result against
// the principal's Filter.
type Library interface {
	// Books lists a tenant's books; "" lists every tenant's (for the
	// start-up sweep of orphaned uploads).
	Books(ctx context.Context, tenant string) ([]citebook.Book, error)
	// Book returns one book; not_found when unknown.
	Book(ctx context.Context, id string) (*citebook.Book, error)
	// Parents returns the parents visible in a version, in reading order.
	Parents(ctx context.Context, bookID string, version int) ([]citebook.Parent, error)
	// ChunksAt returns the chunks visible in a version, in reading order.
	ChunksAt(ctx context.Context, bookID string, version int) ([]citebook.Chunk, error)
	// ChunksByID returns chunks by ID; unknown IDs are left out.
	ChunksByID(ctx context.Context, ids []string) ([]citebook.Chunk, error)
}

// Indexer runs index builds in the background (a book takes minutes) and
// answers for their status; index.Runner implements it, the same queue the
// CLI indexes through.
type Indexer interface {
	// Submit queues a build and returns at once with the queued job.
	Submit(ctx context.Context, in citebook.BookInput) (citebook.Job, error)
	// Job returns a job by handle; not_found when unknown.
	Job(ctx context.Context, handle string) (citebook.Job, error)
	// Jobs returns a book's jobs, newest first.
	Jobs(ctx context.Context, bookID string) ([]citebook.Job, error)
	// Cancel cancels a queued or running job; conflict when it has ended.
	Cancel(ctx context.Context, handle string) (citebook.Job, error)
	// CancelBook cancels the tenant's jobs of a book, which may not exist
	// yet, and reports how many it cancelled.
	CancelBook(ctx context.Context, tenant, bookID string) (int, error)
	// Delete cancels a book's jobs, then removes it, its chunks and vectors.
	Delete(ctx context.Context, tenant, bookID string) error
}

// Preview is how a file would be split, without indexing it.
type Preview struct {
	Title    string            `json:"title"`
	Format   citebook.Format   `json:"format"`
	Language string            `json:"language,omitempty"`
	Pages    int               `json:"pages,omitempty"`
	Parents  []citebook.Parent `json:"parents"`
	Chunks   []citebook.Chunk  `json:"chunks"`
}

// Previewer is how web reaches parsing (cmd wires it to ingest): a preview
// of how a file would be split, and the cheap check an upload gets before it
// is stored or queued. Neither stores anything.
type Previewer interface {
	// Preview parses and chunks the file.
	Preview(ctx context.Context, name string, r io.ReaderAt, size int64) (Preview, error)
	// Sniff refuses a file that is plainly not a readable book (empty,
	// binary, truncated, password-protected) without reading all of it.
	Sniff(ctx context.Context, name string, r io.ReaderAt, size int64) error
}

// TokenVerifier maps a bearer secret to the principal it was issued for; the
// key identifies the token for rate limiting without holding the secret.
type TokenVerifier interface {
	Verify(ctx context.Context, secret string) (key string, p citebook.Principal, err error)
	// AnyIssued reports whether a token has ever been created, revoked
	// ones included; from then on zero-config mode stays off.
	AnyIssued(ctx context.Context) (bool, error)
}

// GrantManager manages the ACL grants of a tenant (acl.Manager implements
// it); grants apply from the next request on.
type GrantManager interface {
	// Add validates and stores a grant: invalid when malformed, not_found
	// for an unknown book or chapter.
	Add(ctx context.Context, g acl.Grant) (acl.Grant, error)
	// List returns the tenant's grants, only bookID's when it is not empty.
	List(ctx context.Context, tenant, bookID string) ([]acl.Grant, error)
	// Remove deletes a grant of the tenant; not_found otherwise.
	Remove(ctx context.Context, tenant string, id int64) error
}

// Check is one readiness probe (database, vector store).
type Check func(ctx context.Context) error
