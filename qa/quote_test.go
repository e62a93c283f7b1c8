package qa_test

import (
	"context"
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
// scripts"). Asked every section title of the Debian Policy Manual (EPUB)
// as a question, no answer may quote a bare heading of its chunk.
func TestHeadingIsNoAnswer(t *testing.T) {
	ctx := context.Background()
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "policy", Tenant: "lib", Path: corpus.Path(t, "books/policy.epub")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r"}

	a, err := p.Ask(ctx, reader, qa.Request{Question: "Can a maintainer script ask questions on the terminal?", BookIDs: []string{"policy"}}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%+v", a.Trace.Answerability)
	require.Contains(t, a.Citations[0].Quote, "controlling terminal")
	require.NotEqual(t, "Controlling terminal for maintainer scripts", strings.TrimLeft(a.Citations[0].Quote, "0123456789. "))

	book, err := l.Meta.Book(ctx, "policy")
	require.NoError(t, err)
	parents, err := l.Meta.Parents(ctx, "policy", book.Active)
	require.NoError(t, err)
	asked, quoted := 0, 0
	seen := map[string]bool{}
	for _, par := range parents {
		if len(par.HeadingPath) == 0 {
			continue
		}
		title := par.HeadingPath[len(par.HeadingPath)-1]
		if seen[title] || len(analysis.ContentTerms(analysis.Terms(title))) < 2 {
			continue
		}
		seen[title] = true
		a, err := p.Ask(ctx, reader, qa.Request{Question: "What does the manual say about " + title + "?", BookIDs: []string{"policy"}}, nil)
		require.NoError(t, err)
		asked++
		for _, c := range a.Citations {
			q := analysis.Fold(strings.TrimLeft(c.Quote, "0123456789. ")) // "6.3. Controlling terminal …"
			for _, h := range c.HeadingPath {
				if analysis.Fold(h) == q {
					quoted++
					t.Errorf("%q answered by its heading: %q", title, c.Quote)
				}
			}
		}
	}
	require.Greater(t, asked, 100, "the manual's section titles")
	require.Zero(t, quoted)
}
