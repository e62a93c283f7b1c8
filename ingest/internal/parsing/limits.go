package parsing

import (
	"context"
	"errors"
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

// WithDefaults fills the zero (or negative) fields from DefaultLimits.
func (l Limits) WithDefaults() Limits {
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

// WithDeadline applies the parse timeout to ctx.
func (l Limits) WithDeadline(ctx context.Context) (context.Context, context.CancelFunc) {
	return context.WithTimeout(ctx, l.Timeout)
}

// DeadlineError turns the end of a parse's context into the error users
// see: the deadline as a too-large file, a cancellation as such.
func (l Limits) DeadlineError(ctx context.Context) error {
	switch err := ctx.Err(); {
	case err == nil:
		return nil
	case errors.Is(err, context.DeadlineExceeded):
		return citebook.Wrap(err, citebook.ETOOLARGE, "parsing did not finish within %s; the file is too large or too complex", l.Timeout)
	default:
		return citebook.Wrap(err, citebook.EUNAVAILABLE, "parsing cancelled")
	}
}
