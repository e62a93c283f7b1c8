package qa_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// TestBookNames: a question naming the book by its author ("Thoreau"), a
// name Walden prints only on its title and publisher pages, searches the
// book without the name — BM25 ranked those two pages and the cover first
// for it — while a name the text itself uses ("Walden" Pond) and a question
// about the name alone are searched as asked.
func TestBookNames(t *testing.T) {
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "walden", Tenant: "lib", Path: corpus.Path(t, "books/WaldenFull.pdf")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r", Admin: true}
	for _, c := range []struct {
		question string
		names    []string
	}{
		{"Why did Thoreau eventually give up living at the pond?", []string{"thoreau"}},
		{"If all of Thoreau's rows of beans were laid end to end, how long would they be?", []string{"thoreau"}},
		{"How deep is Walden Pond at its deepest point?", nil},
		{"Who was Thoreau?", nil},
	} {
		t.Run(c.question, func(t *testing.T) {
			a, err := p.Ask(context.Background(), reader, qa.Request{Question: c.question, BookIDs: []string{"walden"}}, nil)
			require.NoError(t, err)
			require.Equal(t, c.question, a.Trace.Question, "the trace keeps the question as asked")
			require.Equal(t, c.names, a.Trace.BookNames)
			if c.names == nil {
				return
			}
			require.NotEmpty(t, a.Trace.Retrieved)
			for _, h := range a.Trace.Retrieved[:min(3, len(a.Trace.Retrieved))] {
				require.Greater(t, h.Page, 3, "a title page ranked first: %+v", h)
			}
		})
	}
}
