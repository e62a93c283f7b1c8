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

// TestAnswerQuotesWhatItAnnounces: on real books the sentence that
// answers ends on "…the special function tapply():" or "…编译速度会快不少："
// and the command follows on its own lines; the answer shows the command
// as code, and its one citation quotes the sentence and the command
// verbatim from the cited chunk.
func TestAnswerQuotesWhatItAnnounces(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, tc := range []struct {
		who            citebook.Principal
		book, question string
		code, quoted   string
	}{
		{alice, bookR, "How do I calculate the sample mean income for each state?",
			"`incmeans <- tapply(incomes, statef, mean)`", "> incmeans <- tapply(incomes, statef, mean)"},
		{lin, bookZH, "怎样让 LaTeX 只排查错误而不生成 PDF？", "`\\usepackage{syntonly}`", "\\usepackage{syntonly}"},
	} {
		a, err := p.Ask(context.Background(), tc.who, qa.Request{Question: tc.question, BookIDs: []string{tc.book}}, nil)
		require.NoError(t, err)
		require.False(t, a.Refused, "%s: %+v", tc.question, a.Trace.Answerability)
		require.Contains(t, a.Answer, tc.code, tc.question)
		require.Len(t, a.Citations, 1, a.Answer)
		c := a.Citations[0]
		require.Contains(t, c.Quote, tc.quoted)
		var text string
		for _, ch := range lib.chunks(t, tc.book) {
			if ch.ID == c.ChunkID {
				text = ch.Text
			}
		}
		require.True(t, strings.Contains(text, c.Quote), "the quote lies in the cited chunk")
	}
}

// TestAnswerQuotesTheCommandsItNames: debian-reference answers "how do I"
// with a sentence naming what follows anywhere in it ("The following
// reconfigure the timezone used by the Debian system.", "… by one of the
// following commands.") and the commands typed at a prompt after it; the
// answer shows them, quoted verbatim with the sentence.
func TestAnswerQuotesTheCommandsItNames(t *testing.T) {
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "debref", Tenant: "lib", Path: corpus.Path(t, "books/debian-reference.en.pdf")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r"}
	for _, tc := range []struct{ question, code string }{
		{"How do I reconfigure the timezone?", "`# dpkg-reconfigure tzdata`"},
		{"How do I print three copies of a file collated?", "`lp -n 3 -o Collate=True filename`"},
	} {
		a, err := p.Ask(context.Background(), reader, qa.Request{Question: tc.question, BookIDs: []string{"debref"}}, nil)
		require.NoError(t, err)
		require.False(t, a.Refused, "%s: %+v", tc.question, a.Trace.Answerability)
		require.Contains(t, a.Answer, tc.code, tc.question)
		require.Contains(t, a.Citations[0].Quote, strings.Trim(tc.code, "`"))
	}
}

// TestAnswerWithoutAccents: a question typed without the book's accents
// ("Bezier" for debian-reference's "Bézier") is searched and assessed as
// the book's word and answered from its page; before 2026-12-03 the
// accented word was a term of its own and the question was refused.
func TestAnswerWithoutAccents(t *testing.T) {
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "debref", Tenant: "lib", Path: corpus.Path(t, "books/debian-reference.en.pdf")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r"}
	for _, q := range []string{"Which font format uses quadratic Bezier curves?", "Which font format uses quadratic Bézier curves?"} {
		a, err := p.Ask(context.Background(), reader, qa.Request{Question: q, BookIDs: []string{"debref"}}, nil)
		require.NoError(t, err)
		require.False(t, a.Refused, "%s: %+v", q, a.Trace.Answerability)
		require.Contains(t, a.Citations[0].Quote, "TrueType fonts which use quadratic Bézier curves", q)
	}
}
