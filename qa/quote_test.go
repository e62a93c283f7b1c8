package qa_test

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// TestQuoteRunsThroughAWrappedAddress: R-intro's PDF wraps a web address
// at its period ("(https://CRAN. R-project.org/package=boot)"); the quote
// answering how to load a package ran to "(https://CRAN." and stopped,
// before the command. It now holds the whole sentence.
func TestQuoteRunsThroughAWrappedAddress(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "How do I install and load a package?", BookIDs: []string{bookR}}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%+v", a.Trace.Answerability)
	require.NotEmpty(t, a.Citations)
	require.Contains(t, a.Citations[0].Quote, "(https://CRAN. R-project.org/package=boot) package")
	require.Contains(t, a.Answer, "library(boot)")
}

// TestHeadingIsNoAnswer: EPUB, Markdown and text books keep a section's
// title as the first line of its text, and a question in the title's words
// was answered by quoting the title alone ("Can a maintainer script ask
// questions on the terminal?" → "Controlling terminal for maintainer
// scripts"), or, in Chinese, the title and the sentence after it, which a
// blank line between two CJK lines joins. Asked every section title of the
// Debian Policy Manual and of the Chinese Debian Edu manual (both EPUB),
// no answer may quote a heading of its chunk, alone or opening the quote.
func TestHeadingIsNoAnswer(t *testing.T) {
	ctx := context.Background()
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l,
		citebook.BookInput{BookID: "policy", Tenant: "lib", Path: corpus.Path(t, "books/policy.epub")},
		citebook.BookInput{BookID: "edu", Tenant: "lib", Path: corpus.Path(t, "books/debian-edu-bullseye-manual.epub")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r"}

	a, err := p.Ask(ctx, reader, qa.Request{Question: "Can a maintainer script ask questions on the terminal?", BookIDs: []string{"policy"}}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%+v", a.Trace.Answerability)
	require.Contains(t, a.Citations[0].Quote, "controlling terminal")
	require.NotEqual(t, "Controlling terminal for maintainer scripts", strings.TrimLeft(a.Citations[0].Quote, "0123456789. "))

	for _, tc := range []struct {
		book, ask string
		min       int
	}{
		{"policy", "What does the manual say about %s?", 100},
		{"edu", "%s是什么？", 60},
	} {
		asked, quoted := 0, 0
		seen := map[string]bool{}
		for _, c := range (&fixture{Library: l}).chunks(t, tc.book) {
			if len(c.HeadingPath) == 0 {
				continue
			}
			title := c.HeadingPath[len(c.HeadingPath)-1]
			if seen[title] || len(analysis.ContentTerms(analysis.Terms(title))) < 2 {
				continue
			}
			seen[title] = true
			a, err := p.Ask(ctx, reader, qa.Request{Question: fmt.Sprintf(tc.ask, title), BookIDs: []string{tc.book}}, nil)
			require.NoError(t, err)
			asked++
			for _, c := range a.Citations {
				quote := strings.TrimLeft(c.Quote, "0123456789. ") // "6.3. Controlling terminal …"
				for _, h := range c.HeadingPath {
					if analysis.Fold(h) == analysis.Fold(quote) || strings.HasPrefix(quote, h+"\n") {
						quoted++
						t.Errorf("%s: %q answered by its heading: %q", tc.book, title, c.Quote)
					}
				}
			}
		}
		require.Greater(t, asked, tc.min, "%s: the manual's section titles", tc.book)
		t.Logf("%s: %d section titles asked, %d answered by a heading", tc.book, asked, quoted)
	}
}
