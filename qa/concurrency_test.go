package qa_test

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// heldLexical is the keyword search with a gate: the first search waits
// until release is closed, and it records how many ran at once.
type heldLexical struct {
	qa.LexicalSearcher
	held          atomic.Bool
	entered       chan struct{}
	release       chan struct{}
	running, most atomic.Int32
}

func (h *heldLexical) Search(ctx context.Context, q string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	return h.SearchForms(ctx, q, nil, f, lib, k)
}

func (h *heldLexical) SearchForms(ctx context.Context, q string, forms map[string][]string, f, lib citebook.Filter, k int) ([]citebook.Hit, error) {
	n := h.running.Add(1)
	defer h.running.Add(-1)
	for m := h.most.Load(); n > m && !h.most.CompareAndSwap(m, n); m = h.most.Load() {
	}
	if h.held.CompareAndSwap(false, true) {
		close(h.entered)
		<-h.release
	}
	return h.LexicalSearcher.SearchForms(ctx, q, forms, f, lib, k)
}

// TestConcurrencyTakesTurns: with Options.Concurrency 1 a question waits
// while another retrieves — it never searches beside it, it gives up with
// its context's error when that ends first, and it runs once the turn is
// free.
func TestConcurrencyTakesTurns(t *testing.T) {
	lib := shared(t)
	h := &heldLexical{entered: make(chan struct{}), release: make(chan struct{})}
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{Concurrency: 1}, func(d *qa.Deps) {
		if s, ok := d.Lexical.(qa.TermStats); ok && d.Stats == nil {
			d.Stats = s
		}
		h.LexicalSearcher = d.Lexical
		d.Lexical = h
	})
	req := qa.Request{Question: "How do I remove objects from the workspace?"}
	ctx := context.Background()
	firstDone := make(chan error, 1)
	go func() {
		_, err := p.Search(ctx, alice, req)
		firstDone <- err
	}()
	<-h.entered

	short, cancel := context.WithTimeout(ctx, 50*time.Millisecond)
	defer cancel()
	_, err := p.Search(short, alice, req)
	require.ErrorIs(t, err, context.DeadlineExceeded, "the second question waited for its turn")

	waiting := make(chan error, 1)
	go func() {
		_, err := p.Search(ctx, alice, req)
		waiting <- err
	}()
	select {
	case err := <-waiting:
		t.Fatalf("searched beside the first question: %v", err)
	case <-time.After(50 * time.Millisecond):
	}
	close(h.release)
	require.NoError(t, <-firstDone)
	require.NoError(t, <-waiting)
	require.EqualValues(t, 1, h.most.Load(), "searches at once")
}
