// Package citebook holds the domain types every step of the data flow shares:
// books and their versions, the parent sections and child chunks they are split
// into, the principals who ask, and the citations they get back. Behaviour lives
// in the packages named after each step (ingest, index, qa, citation, acl, eval,
// web); this package only defines the vocabulary so it is defined once.
package citebook

import (
	"fmt"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Format names the source format of a book, because parsing and page semantics
// differ: PDFs have physical pages, reflowable formats only positions.
type Format string

// Source formats citebook can ingest.
const (
	FormatPDF      Format = "pdf"
	FormatEPUB     Format = "epub"
	FormatMarkdown Format = "markdown"
	FormatText     Format = "text"
)

// Book is a document a tenant has put into the library. Tenant and Groups are
// attached at index time and copied to every chunk so stores can filter inside
// retrieval.
type Book struct {
	ID       string    `json:"id"`
	Title    string    `json:"title"`
	Format   Format    `json:"format"`
	Language string    `json:"language,omitempty"`
	Tenant   string    `json:"tenant"`
	Groups   []string  `json:"groups,omitempty"` // ACL groups allowed to read; empty means every user of the tenant
	Source   string    `json:"source,omitempty"` // path of the original file, for the reader
	Pages    int       `json:"pages,omitempty"`  // physical pages; 0 for reflowable books
	Active   int       `json:"active_version"`   // version served to readers; 0 before the first completes
	Created  time.Time `json:"created"`
}

// VersionStatus tracks an index build so a failed build never replaces a
// working one.
type VersionStatus string

// Version states, in order of a successful build.
const (
	VersionQueued    VersionStatus = "queued"
	VersionIndexing  VersionStatus = "indexing"
	VersionCompleted VersionStatus = "completed"
	VersionFailed    VersionStatus = "failed"
)

// Version is one build of a book's content. Readers are served the book's
// Active version; a newer one becomes active only once completed.
type Version struct {
	BookID      string        `json:"book_id"`
	Number      int           `json:"version"`
	ContentHash string        `json:"content_hash"`
	SourceHash  string        `json:"source_hash,omitempty"` // hash of the file bytes: an unchanged file is recognised without parsing
	Status      VersionStatus `json:"status"`
	Error       string        `json:"error,omitempty"`
	Embedding   string        `json:"embedding"` // EmbeddingVersion.String() of the model that built it
	Chunks      int           `json:"chunks"`
	Created     time.Time     `json:"created"`
	Completed   time.Time     `json:"completed,omitempty"`
}

// PageSpan marks where a page begins inside a text, so any quote can be mapped
// to the page it is printed on rather than the page its chunk starts on.
// Offset counts bytes into the text the span belongs to.
type PageSpan struct {
	Offset  int    `json:"offset"`
	Page    int    `json:"page"`              // physical page, 1-based
	Printed string `json:"printed,omitempty"` // printed label ("iv", "31"); empty when unknown
}

// Parent is a leaf section (or a chapter without sections): the unit the
// answerer expands a matching chunk to, and the unit chapter grants apply to.
type Parent struct {
	ID           string     `json:"id"`
	BookID       string     `json:"book_id"`
	Ordinal      int        `json:"ordinal"`
	HeadingPath  []string   `json:"heading_path"`
	PageStart    int        `json:"page_start,omitempty"`
	PageEnd      int        `json:"page_end,omitempty"`
	PrintedStart string     `json:"printed_page_start,omitempty"`
	PrintedEnd   string     `json:"printed_page_end,omitempty"`
	CharStart    int        `json:"char_start"`
	CharEnd      int        `json:"char_end"`
	Text         string     `json:"text"`
	Pages        []PageSpan `json:"pages,omitempty"`
}

// Chunk is a child: a paragraph-sized piece of a parent, the unit that is
// embedded, retrieved and cited. Its ID is stable across versions while its
// text is unchanged, so re-indexing only touches what changed.
//
// A chunk is visible in book versions [Version, Retired); Retired is 0 while
// the chunk is still part of the newest build.
type Chunk struct {
	ID           string   `json:"id"`
	BookID       string   `json:"book_id"`
	Version      int      `json:"version"`
	Retired      int      `json:"retired,omitempty"`
	ParentID     string   `json:"parent_id"`
	Ordinal      int      `json:"ordinal"`
	HeadingPath  []string `json:"heading_path"`
	PageStart    int      `json:"page_start,omitempty"`
	PageEnd      int      `json:"page_end,omitempty"`
	PrintedStart string   `json:"printed_page_start,omitempty"`
	PrintedEnd   string   `json:"printed_page_end,omitempty"`
	CharStart    int      `json:"char_start"` // byte offsets into the book's cleaned text
	CharEnd      int      `json:"char_end"`
	Text         string   `json:"text"`
	// IndexContext is text a chunk is found by but that is not part of it:
	// the caption and header rows (column years, period labels) of a table
	// the chunk continues, which the page prints only above the table's
	// first chunk — without it "1,577" in a statement's second chunk has no
	// "2018". The lexical index and the embedder read it beside the heading
	// path; it is never quoted or cited (a quote must lie in Text), so
	// citations still match the page, and search results carry it as a
	// field of its own. Empty for every other chunk.
	IndexContext string     `json:"index_context,omitempty"`
	Tokens       int        `json:"tokens"`
	Language     string     `json:"language,omitempty"`
	ContentHash  string     `json:"content_hash"`
	Pages        []PageSpan `json:"pages,omitempty"` // page starts inside Text, first at offset 0
	Tenant       string     `json:"tenant,omitempty"`
	Groups       []string   `json:"groups,omitempty"`
	Embedding    string     `json:"embedding,omitempty"`
	// Geometry places every word of Text on its printed page (PDF books
	// only), so any quote can be drawn as boxes on the page image. Only the
	// metadata store keeps it: it is large, and only citations need it.
	Geometry []WordBox `json:"-"`
}

// FoundBy is the body a chunk is matched by (its IndexContext, then its
// Text, a line apart), without the heading path: what the lexical index
// indexes under the headings and what the question's terms are counted in
// when candidates are ranked and thresholded, so both see the same words.
func (c *Chunk) FoundBy() string {
	if c.IndexContext == "" {
		return c.Text
	}
	return c.IndexContext + "\n" + c.Text
}

// Box is a rectangle on a physical page, as fractions of the page's width
// and height with the origin at the top left, so it can be drawn over a page
// image of any size.
type Box struct {
	Page int     `json:"page"`
	X0   float64 `json:"x0"`
	Y0   float64 `json:"y0"`
	X1   float64 `json:"x1"`
	Y1   float64 `json:"y1"`
}

// WordBox is where a word of a chunk's text is printed. Start and End are
// byte offsets into the chunk text; words printed on the same line share
// Line, so a quote's words can be merged into one box per line. OCR marks
// words read from a page image rather than from the PDF's text layer.
type WordBox struct {
	Start int  `json:"start"`
	End   int  `json:"end"`
	Line  int  `json:"line"`
	OCR   bool `json:"ocr,omitempty"`
	Box
}

// HeadingString joins a heading path the way readers see it.
func HeadingString(path []string) string { return strings.Join(path, " > ") }

// PageAt returns the physical page and printed label of the byte offset off
// inside a text whose page starts are spans. It returns 0 when the text has no
// pages (reflowable books).
func PageAt(spans []PageSpan, off int) (int, string) {
	page, printed := 0, ""
	for _, s := range spans {
		if s.Offset > off {
			break
		}
		page, printed = s.Page, s.Printed
	}
	return page, printed
}

// Clone returns a copy of c that shares no slices with it, so a store that
// keeps chunks in memory can hand them out without callers editing its copy.
// The copy has no Geometry: stores that keep chunks in memory must not hold
// a box per word, and citations read geometry from the metadata store.
func (c Chunk) Clone() Chunk {
	c.Geometry = nil
	c.HeadingPath = slices.Clone(c.HeadingPath)
	c.Pages = slices.Clone(c.Pages)
	c.Groups = slices.Clone(c.Groups)
	return c
}

// VisibleIn reports whether the chunk belongs to version v of its book.
func (c *Chunk) VisibleIn(v int) bool {
	return c.Version <= v && (c.Retired == 0 || c.Retired > v)
}

// Principal is who is asking: every read is scoped to one tenant, and groups
// decide which books and chapters inside it are visible.
type Principal struct {
	Tenant string   `json:"tenant"`
	User   string   `json:"user"`
	Groups []string `json:"groups,omitempty"`
	Admin  bool     `json:"admin,omitempty"`
}

// BookScope is one book a principal may read, at the version that is served.
type BookScope struct {
	BookID  string `json:"book_id"`
	Version int    `json:"version"`
}

// Filter is an access decision resolved ahead of retrieval. Stores apply it
// inside the search (never to a finished top-k), so a principal's results can
// never contain a chunk it may not read. The zero Filter matches nothing.
type Filter struct {
	Tenant      string      `json:"tenant"`
	Books       []BookScope `json:"books"`
	DenyParents []string    `json:"deny_parents,omitempty"`
}

// Match reports whether a chunk passes the filter; stores that scan in
// process use it, stores with their own query language must agree with it.
func (f *Filter) Match(c *Chunk) bool {
	if f == nil || c.Tenant != f.Tenant {
		return false
	}
	ok := false
	for _, b := range f.Books {
		if b.BookID == c.BookID && c.VisibleIn(b.Version) {
			ok = true
			break
		}
	}
	if !ok {
		return false
	}
	for _, p := range f.DenyParents {
		if p == c.ParentID {
			return false
		}
	}
	return true
}

// Key identifies the filter unambiguously (every string quoted), so stores
// can cache per-filter work, such as the rows a filter admits, until their
// next write.
func (f *Filter) Key() string {
	var b strings.Builder
	b.WriteString(strconv.Quote(f.Tenant))
	for _, s := range f.Books {
		b.WriteString(" book ")
		b.WriteString(strconv.Quote(s.BookID))
		b.WriteString(" v")
		b.WriteString(strconv.Itoa(s.Version))
	}
	for _, p := range f.DenyParents {
		b.WriteString(" deny ")
		b.WriteString(strconv.Quote(p))
	}
	return b.String()
}

// Citation is a verified pointer from an answer to the words that support it:
// the quote was found inside the chunk that was in the model's context, and the
// page is the page the quote itself is on.
type Citation struct {
	N           int      `json:"n"` // 1-based number shown in the answer
	ChunkID     string   `json:"chunk_id"`
	BookID      string   `json:"book_id"`
	BookTitle   string   `json:"book_title"`
	HeadingPath []string `json:"heading_path"`
	Page        int      `json:"page,omitempty"`
	PrintedPage string   `json:"printed_page,omitempty"`
	// Pages lists the physical pages a quote printed across a page break
	// runs over, first to last (Page is the one holding most of it), and
	// PrintedPages labels them as a reader looks them up ("120–121");
	// both empty for a quote on one page.
	Pages        []int  `json:"pages,omitempty"`
	PrintedPages string `json:"printed_pages,omitempty"`
	Quote        string `json:"quote"`
	CharStart    int    `json:"char_start"` // byte offsets of the quote inside the chunk text
	CharEnd      int    `json:"char_end"`
	// Boxes draw the quote on the page images, one per printed line and
	// page; empty for reflowable books and books indexed before geometry
	// was kept.
	Boxes []Box `json:"boxes"`
	OCR   bool  `json:"ocr,omitempty"` // the quoted text was read from a page image by OCR
}

// EmbeddingVersion identifies the model that produced a vector; vectors of
// different versions are not comparable, so a query must use the index's.
type EmbeddingVersion struct {
	Provider  string `json:"provider"`
	Model     string `json:"model"`
	Dimension int    `json:"dimension"`
}

// String renders the version as stored beside every chunk.
func (e EmbeddingVersion) String() string {
	return e.Provider + "/" + e.Model + "/" + strconv.Itoa(e.Dimension)
}

// Hit is a chunk a search returned, with the score that ranked it (cosine
// similarity for vectors, BM25 for lexical, fused scores after fusion).
type Hit struct {
	Chunk Chunk   `json:"chunk"`
	Score float64 `json:"score"`
	// Ref is the store's handle on the row the hit was read from (zero
	// when the store gives none), so a reader of that store finds the row
	// again without looking the chunk's ID up in a map of every chunk.
	Ref RowRef `json:"-"`
}

// RowRef is a store's handle on one of its rows. It names the row only
// while Owner is the store's current one (the store makes a new one at
// every change to its rows), so the store checks Owner before it reads
// Row, and otherwise finds the chunk by its ID as before.
type RowRef struct {
	Owner *RowOwner
	Row   int32
}

// RowOwner is a token naming a store's rows as they are between two
// changes (RowRef). A token rather than the store and a counter, so hits
// compare equal (reflect.DeepEqual) when they hold the same rows of equal
// stores, and printing one never walks a whole store.
type RowOwner struct{ _ byte }

// JobStatus is the life of one index job, from the queue to its end.
type JobStatus string

// Job states. Queued and cancelled exist only in the process that queued the
// job; the metadata database records running, completed and failed builds
// (a cancelled build is recorded as failed with the reason).
const (
	JobQueued    JobStatus = "queued"
	JobRunning   JobStatus = "running"
	JobCompleted JobStatus = "completed"
	JobFailed    JobStatus = "failed"
	JobCancelled JobStatus = "cancelled"
	// JobAbandoned is a recorded build whose process was killed or crashed
	// (it never recorded an end); the next start finds it dead.
	JobAbandoned JobStatus = "abandoned"
)

// Ended reports whether the job will not change any more.
func (s JobStatus) Ended() bool {
	return s != JobQueued && s != JobRunning
}

// Job is one index build of one book version, as the CLI (`citebook jobs`)
// and the API report it. A job submitted to a queue has a Handle at once and
// an ID once the builder recorded it in the metadata database.
type Job struct {
	ID       int64     `json:"id,omitempty"`     // number in the metadata database; 0 until the build records it
	Handle   string    `json:"job_id,omitempty"` // the queue's handle ("job_…"), or "index-<ID>" for a recorded build
	BookID   string    `json:"book_id"`
	Tenant   string    `json:"-"`
	Version  int       `json:"version,omitempty"`
	Status   JobStatus `json:"status"`
	Queued   time.Time `json:"queued,omitzero"`
	Started  time.Time `json:"started,omitzero"`
	Finished time.Time `json:"finished,omitzero"`
	Error    string    `json:"error,omitempty"`
	Chunks   int       `json:"chunks"`
	Embedded int       `json:"embedded"`
	Upserted int       `json:"upserted"`
	Deleted  int       `json:"deleted"`
	// Owner is the process that ran the build and Heartbeat when it last
	// said it was alive, so other processes can tell a dead job.
	Owner     JobOwner  `json:"owner,omitzero"`
	Heartbeat time.Time `json:"heartbeat,omitzero"`
	// SupersededBy is the job that resumed or replaced this unfinished one.
	SupersededBy int64 `json:"superseded_by,omitempty"`
	// OCR says which image-only pages of a scanned PDF were read by OCR and
	// which failed.
	OCR *OCRReport `json:"ocr,omitempty"`
}

// OCRReport says what OCR did while a book was parsed.
type OCRReport struct {
	Pages  int           `json:"pages"`            // image-only pages sent to OCR
	Read   int           `json:"read"`             // of those, pages that yielded text
	Failed []PageFailure `json:"failed,omitempty"` // pages OCR could not read, and why
}

// PageFailure is one page a parse could not read.
type PageFailure struct {
	Page  int    `json:"page"`
	Error string `json:"error"`
}

// BookInput is one book to index. Tenant and Groups are copied to every
// chunk so the stores can filter inside retrieval.
type BookInput struct {
	BookID string   `json:"book_id"`
	Title  string   `json:"title,omitempty"` // empty takes the title found in the file
	Tenant string   `json:"tenant"`
	Groups []string `json:"groups,omitempty"`
	Path   string   `json:"path"`
	// Resume continues the newest version if its build failed, skipping
	// the batches that were done, instead of starting a new version.
	Resume bool `json:"resume,omitempty"`
	// Owned says the library owns the file (an upload kept under the data
	// dir): when the book's first build is cancelled or fails on bad input,
	// the book and the file are removed so nothing is left behind.
	Owned bool `json:"-"`
	// Progress, when set, is told how many of the chunks to embed are done.
	Progress func(done, total int) `json:"-"`
	// Recorded, when set, is told the ID of the build record (Job.ID) as
	// soon as the build creates it, so the job queue can link its job to it.
	Recorded func(jobID int64) `json:"-"`
}

// JobOwner identifies the process running an index build, so that another
// process can tell a build that still runs from one whose process was killed.
type JobOwner struct {
	Host string `json:"host"`
	PID  int    `json:"pid"`
	// Start is the process's start time in clock ticks since boot (Linux
	// /proc), so a PID reused by an unrelated process is not taken for the
	// job's; 0 where it cannot be read.
	Start int64 `json:"pid_start,omitempty"`
}

// String describes an owner for messages: "pid 42 on host a".
func (o JobOwner) String() string {
	if o.PID <= 0 {
		return "unknown process"
	}
	return fmt.Sprintf("pid %d on host %s", o.PID, o.Host)
}
