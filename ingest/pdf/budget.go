package pdf

import (
	"context"
	"fmt"
	"io"
	"sync"
	"sync/atomic"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

// docBudget counts what one document's parse has decoded, interpreted and
// extracted, shared by the goroutines reading its pages. The first limit
// passed is remembered: every later check reports it, so all workers stop.
type docBudget struct {
	ctx     context.Context
	lim     parsing.Limits
	decoded atomic.Int64
	ops     atomic.Int64
	text    atomic.Int64

	mu  sync.Mutex
	err error
}

func newDocBudget(ctx context.Context, lim parsing.Limits) *docBudget {
	return &docBudget{ctx: ctx, lim: lim.WithDefaults()}
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
		return b.lim.DeadlineError(b.ctx)
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
