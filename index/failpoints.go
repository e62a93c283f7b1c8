package index

import "strconv"

// Fail points name the steps of a build at which a process can die. Each is
// reached right after the step it names has been durably written, so a
// crash test that stops the build there (BuilderOptions.FailPoint) leaves
// the stores exactly as a kill -9 at that moment would: every store write is
// one transaction (or one Milvus request) and nothing is undone on the way
// out. The names are stable; scripts may use them.
const (
	fpBookSaved      = "book-saved"
	fpDiscardRows    = "discard-rows"
	fpDiscardDelete  = "discard-delete" // + "-vectors", "-lexical"
	fpDiscarded      = "discarded"
	fpVersionCreated = "version-created"
	fpJobCreated     = "job-created"
	fpIndexing       = "version-indexing"
	fpBatchesPlanned = "batches-planned"
	fpRetiredVectors = "retire-vectors"
	fpRetiredLexical = "retire-lexical"
	fpRestoredKept   = "restore-kept"
	fpParentRows     = "parent-rows"
	fpChunkRows      = "chunk-rows"
	fpVerified       = "switch-verified"
	fpActivated      = "activated"
	fpRetiredDelete  = "delete-retired" // + "-vectors", "-lexical"
	fpRetiredRows    = "retired-rows-deleted"
	fpJobCompleted   = "job-completed"

	fpDeleteDeactivated = "delete-deactivated"
	fpDeleteVectors     = "delete-vectors"
	fpDeleteLexical     = "delete-lexical"
)

// batchPoint names a step of batch n (0-based): "start", "vectors",
// "lexical" (both stores written) or "recorded" (marked done).
func batchPoint(n int, step string) string {
	return "batch-" + strconv.Itoa(n+1) + "-" + step
}

// point reports reaching a fail point.
func (b *Builder) point(name string) {
	if b.opt.FailPoint != nil {
		b.opt.FailPoint(name)
	}
}
