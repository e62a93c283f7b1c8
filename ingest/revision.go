package ingest

// Revision names the rules by which files become parents and chunks. The
// builder keys a book's "unchanged" check on the file's bytes, its chunking
// options and this revision, so a library indexed by an older binary parses
// its unchanged files again on the next index run and picks up a parsing
// change (a table's header rows, a statement title); a file whose chunks
// come out the same stays unchanged and keeps its embeddings. Bump it with
// every change that alters what Split returns for some file.
const Revision = "2026-12-05.2"
