package ingest

import (
	"context"
	"errors"
	"fmt"
	"io"
	"sync"
	"sync/atomic"
	"time"

	"github.com/citebook/citebook"
)

// Limits bound the time and memory one parse may take, so a hostile file (a
// decompression bomb, thousands of pages drawing one huge content stream)
// fails with a clear error instead of exhausting the server. The zero value
// of a field means its default; DefaultLimits is the one place those live.
type Limits struct {
	// Timeout bounds a whole parse; the caller's context may end it sooner.
	Timeout time.Duration
	// MaxFileSize is the largest file accepted at all.
	MaxFileSize int64
	// MaxPages bounds the pages read from one PDF, so a hostile page tree
	// cannot make a parse unbounded; later pages are ignored.
	MaxPages int64
	// MaxStreamBytes bounds the decoded size of one PDF stream (content,
	// form, font, CMap, object stream) or EPUB entry.
	MaxStreamBytes int64
	// MaxArchiveBytes bounds the declared unpacked size of an EPUB, and
	// MaxRatio how much more than its compressed size a large entry may
	// claim: EPUBs are mostly text and small images.
	MaxArchiveBytes int64
	MaxRatio        int64
	// MaxDecodedBytes bounds the decoded bytes of all streams of one
	// document together.
	MaxDecodedBytes int64
	// MaxOperators bounds the content-stream operators interpreted for one
	// document, counting every page that draws a shared stream once.
	MaxOperators int64
	// MaxTextBytes bounds the text extracted from one document.
	MaxTextBytes int64
}

// DefaultLimits are sized so the largest real books (a 2,000-page manual,
// 300-page filings full of tables) parse well inside them, while a parse
// of anything stays within a few hundred MB and a few minutes.
func DefaultLimits() Limits {
	return Limits{
		Timeout:         3 * time.Minute,
		MaxFileSize:     512 << 20,
		MaxPages:        20000,
		MaxStreamBytes:  64 << 20,
		MaxArchiveBytes: 512 << 20,
		MaxRatio:        100,
		MaxDecodedBytes: 1 << 30,
		MaxOperators:    100_000_000,
		MaxTextBytes:    64 << 20,
	}
}

// withDefaults fills the zero (or negative) fields from DefaultLimits.
func (l Limits) withDefaults() Limits {
	d := DefaultLimits()
	orDefault(&l.Timeout, d.Timeout)
	for _, f := range []struct {
		v *int64
		d int64
	}{
		{&l.MaxFileSize, d.MaxFileSize}, {&l.MaxPages, d.MaxPages},
		{&l.MaxStreamBytes, d.MaxStreamBytes}, {&l.MaxArchiveBytes, d.MaxArchiveBytes},
		{&l.MaxRatio, d.MaxRatio}, {&l.MaxDecodedBytes, d.MaxDecodedBytes},
		{&l.MaxOperators, d.MaxOperators}, {&l.MaxTextBytes, d.MaxTextBytes},
	} {
		orDefault(f.v, f.d)
	}
	return l
}

// orDefault sets *v to d when it is not positive.
func orDefault[T ~int64](v *T, d T) {
	if *v <= 0 {
		*v = d
	}
}

// withDeadline applies the parse timeout to ctx.
func (l Limits) withDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.Timeout)
}

// deadlineError turns the end of a parse's context into the error users
// see: the deadline as a too-large file, a cancellation as such.
func (l Limits) deadlineError(ctx context.Context) error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return citebook.Wrap(err, citebook.ETOOLARGE, "parsing did not finish within %s; the file is too large or too complex", l.Timeout)
	default:
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "parsing cancelled")
	}
}

// docBudget counts what one document's parse has decoded, interpreted and
// extracted, shared by the goroutines reading its pages. The first limit
// passed is remembered: every later check reports it, so all workers stop.
type docBudget struct {
	ctx     context.Context
	lim     Limits
	decoded atomic.Int64
	ops     atomic.Int64
	text    atomic.Int64

	mu  sync.Mutex
	err error
}

func newDocBudget(ctx context.Context, lim Limits) *docBudget {
	return &docBudget{ctx: ctx, lim: lim.withDefaults()}
}

// fail records the first limit exceeded and returns it.
func (b *docBudget) fail(err error) error {
	b.mu.Lock()
	defer b.mu.Unlock()
	if b.err == nil {
		b.err = err
	}
	return b.err
}

// check returns the recorded limit error, or the context's end.
func (b *docBudget) check() error {
	b.mu.Lock()
	err := b.err
	b.mu.Unlock()
	if err != nil {
		return err
	}
	if b.ctx.Err() != nil {
		return b.lim.deadlineError(b.ctx)
	}
	return nil
}

// addOps counts interpreted operators.
func (b *docBudget) addOps(n int64) error {
	if b.ops.Add(n) > b.lim.MaxOperators {
		return b.fail(citebook.Errorf(citebook.ETOOLARGE,
			"PDF content draws more than %d operators; the file is too complex to read", b.lim.MaxOperators))
	}
	return b.check()
}

// addText counts extracted text.
func (b *docBudget) addText(n int64) error {
	if b.text.Add(n) > b.lim.MaxTextBytes {
		return b.fail(citebook.Errorf(citebook.ETOOLARGE,
			"the file holds more than %d MiB of text", b.lim.MaxTextBytes>>20))
	}
	return nil
}

// reader wraps the decoded data of one stream: reading past the per-stream
// or the per-document budget fails, and the failure sticks to the budget.
func (b *docBudget) reader(r io.Reader) io.Reader {
	return &budgetReader{r: r, b: b, left: b.lim.MaxStreamBytes}
}

type budgetReader struct {
	r    io.Reader
	b    *docBudget
	left int64 // bytes this stream may still produce
}

func (r *budgetReader) Read(p []byte) (int, error) {
	if r.left < 0 {
		return 0, r.b.check()
	}
	if int64(len(p)) > r.left+1 {
		p = p[:r.left+1]
	}
	n, err := r.r.Read(p)
	r.left -= int64(n)
	if r.left < 0 {
		return n, r.b.fail(citebook.Errorf(citebook.ETOOLARGE,
			"a PDF stream decodes to more than %d MiB; the file may be a decompression bomb", r.b.lim.MaxStreamBytes>>20))
	}
	if r.b.decoded.Add(int64(n)) > r.b.lim.MaxDecodedBytes {
		r.left = -1
		return n, r.b.fail(citebook.Errorf(citebook.ETOOLARGE,
			"the document's PDF streams decode to more than %d MiB; the file may be a decompression bomb", r.b.lim.MaxDecodedBytes>>20))
	}
	if err == nil && r.b.ctx.Err() != nil {
		err = r.b.check()
	}
	return n, err
}

// ctxReaderAt fails reads once ctx is done. The PDF library reads the file
// through it, so work inside the library (inflating object streams,
// resolving references) stops at a deadline or cancellation too.
type ctxReaderAt struct {
	ctx context.Context
	r   io.ReaderAt
}

func (c ctxReaderAt) ReadAt(p []byte, off int64) (int, error) {
	if err := c.ctx.Err(); err != nil {
		return 0, fmt.Errorf("reading the file: %w", err)
	}
	return c.r.ReadAt(p, off)
}
