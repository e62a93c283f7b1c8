package qa_test

import (
	"context"
	"slices"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// TestContentsIsNoEvidence: the contents pages of real books — R-intro's
// (from its licence page's foot, where "Table of Contents" begins)
// under the manual's title with leaders ("5.1 Arrays … 20"), and its
// indexes ("%*% … 24 %o% … 23"), lshort-zh-cn's
// under 目录, Walden's under "Contents" with no page numbers — are told
// from every other chunk of the book, and Walden's is no longer quoted for
// a broad question whose words its chapter titles hold.
func TestContentsIsNoEvidence(t *testing.T) {
	lib := shared(t)
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "walden", Tenant: "lib", Path: corpus.Path(t, "books/WaldenFull.pdf")})
	walden := (&fixture{Library: l}).chunks(t, "walden")
	for _, tc := range []struct {
		book     string
		chunks   []citebook.Chunk
		contents func(c citebook.Chunk) bool // the book's contents pages
	}{
		{bookR, lib.chunks(t, bookR), func(c citebook.Chunk) bool {
			return c.PageStart >= 2 && c.PageStart <= 6 || strings.HasSuffix(c.HeadingPath[len(c.HeadingPath)-1], " index")
		}},
		{bookZH, lib.chunks(t, bookZH), func(c citebook.Chunk) bool { return slices.Equal(c.HeadingPath, []string{"目录"}) }},
		{"walden", walden, func(c citebook.Chunk) bool { return slices.Equal(c.HeadingPath, []string{"Contents"}) }},
	} {
		n := 0
		for _, c := range tc.chunks {
			want := tc.contents(c)
			require.Equal(t, want, qa.IsContents(&c), "%s p.%d %v: %.120q", tc.book, c.PageStart, c.HeadingPath, c.Text)
			if want {
				n++
			}
		}
		require.NotZero(t, n, tc.book)
		t.Logf("%s: %d of %d chunks are contents", tc.book, n, len(tc.chunks))
	}

	p := testlib.Pipeline(t, l)
	a, err := p.Ask(context.Background(), citebook.Principal{Tenant: "lib", User: "r"},
		qa.Request{Question: "What animals lived near the pond?", BookIDs: []string{"walden"}}, nil)
	require.NoError(t, err)
	for _, c := range a.Citations {
		require.NotEqual(t, []string{"Contents"}, c.HeadingPath, a.Answer)
	}
	var dropped bool
	for _, d := range a.Trace.Dropped {
		dropped = dropped || d.Reason == "contents"
	}
	require.True(t, dropped, "the contents page was a candidate and was dropped as such")
}
