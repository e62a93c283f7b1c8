package qa_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/qa"
)

// Quotes a small model copies almost verbatim are snapped to the book's
// real text before the support check (citation.snap); what is shown is
// always text the chunk holds. Scripted models, no model server.

const modeQuestion = "What are the intrinsic attributes mode and length of an object?"

// nearVerbatim re-types a sentence the way Qwen 0.5B does: the first word
// lower-cased, one word of the middle dropped, quotes straightened and
// whitespace collapsed.
func nearVerbatim(s string) string {
	w := strings.Fields(strings.NewReplacer("“", `"`, "”", `"`, "’", "'").Replace(s))
	w[0] = strings.ToLower(w[0])
	mid := len(w) / 2
	return strings.Join(append(w[:mid:mid], w[mid+1:]...), " ")
}

// requireShownFromBook checks that every part of each shown quote is the
// text of its chunk at the citation's offsets.
func requireShownFromBook(t *testing.T, lib *fixture, cs []citebook.Citation) {
	t.Helper()
	for _, c := range cs {
		chunks, err := lib.Vectors.Get(context.Background(), []string{c.ChunkID})
		require.NoError(t, err)
		require.Len(t, chunks, 1)
		text := chunks[0].Text
		parts := strings.Split(c.Quote, " … ")
		require.True(t, strings.HasPrefix(text[c.CharStart:], parts[0]), "%q does not start at %d", parts[0], c.CharStart)
		require.True(t, strings.HasSuffix(text[:c.CharEnd], parts[len(parts)-1]), "%q does not end at %d", parts[len(parts)-1], c.CharEnd)
		for _, p := range parts {
			require.Contains(t, text[c.CharStart:c.CharEnd], p)
		}
	}
}

// TestSnapNearVerbatimQuote: a quote with changed case, a dropped word and
// an ellipsis is shown as the book's own words, and the trace says so.
func TestSnapNearVerbatimQuote(t *testing.T) {
	lib := shared(t)
	var real, quote string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "mode(object)")
		real = s
		quote = nearVerbatim(s)
		// and an ellipsis for the last words but two
		w := strings.Fields(quote)
		quote = strings.Join(w[:len(w)-4], " ") + " ... " + strings.Join(w[len(w)-2:], " ")
		return reply(qa.Statement{Text: "The functions mode(object) and length(object) give the mode and length of an object.",
			Citations: []qa.Claim{{ChunkID: p.ID, Quote: quote}}})
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice, qa.Request{Question: modeQuestion}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, real)
	require.False(t, a.Refused, "%s %+v %+v", a.Answer, a.Trace.Rejected, a.Trace.Answerability)
	require.Empty(t, a.Trace.Guards.Fallback, "the model's own answer is shown")
	require.Len(t, a.Citations, 1)
	shown := a.Citations[0].Quote
	require.NotEqual(t, quote, shown, "the model's words are not shown")
	require.True(t, strings.HasPrefix(shown, "The functions mode(object)"), shown)
	requireShownFromBook(t, lib, a.Citations)
	require.Len(t, a.Trace.Snapped, 1)
	sn := a.Trace.Snapped[0]
	require.True(t, sn.Kept)
	require.Equal(t, quote, sn.Quote)
	require.Equal(t, shown, sn.Real)
	require.GreaterOrEqual(t, sn.Share, citation.MinSnapShare)
	require.Empty(t, a.Trace.Rejected)
}

var digitsRe = regexp.MustCompile(`\d+`)

// TestSnapChangedNumberIsNotSnapped: a near-verbatim quote whose number
// was changed is another claim: it stays rejected, and the statement
// stating the changed number is dropped (the number guard) even though an
// honest statement with the real quote stands beside it.
func TestSnapChangedNumberIsNotSnapped(t *testing.T) {
	lib := shared(t)
	var real, changed string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "datasets")
		real = s
		n := digitsRe.FindString(s)
		if n == "" {
			return reply()
		}
		changed = strings.Replace(nearVerbatim(s), n, n+"7", 1)
		return reply(
			qa.Statement{Text: strings.Replace(s, n, n+"7", 1), Citations: []qa.Claim{{ChunkID: p.ID, Quote: changed}}},
			qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}},
		)
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice,
		qa.Request{Question: "How many datasets are supplied with R?"}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, changed, "the context holds a sentence about datasets with a number: %q", real)
	require.Empty(t, a.Trace.Snapped, "%+v", a.Trace.Snapped)
	require.Len(t, a.Trace.Rejected, 1)
	require.Equal(t, citation.QuoteNotFound, a.Trace.Rejected[0].Reason)
	require.Equal(t, changed, a.Trace.Rejected[0].Quote)
	require.Greater(t, a.Trace.Rejected[0].Share, 0.8, "close in words, but the number differs")
	require.Equal(t, 1, a.Trace.Unsupported)
	require.False(t, a.Refused, a.Answer)
	n := digitsRe.FindString(real)
	require.NotContains(t, a.Answer, n+"7")
	require.Len(t, a.Citations, 1)
	requireShownFromBook(t, lib, a.Citations)
}

// TestSnapLyingModelStillCaught: a model that quotes real text nearly
// verbatim for a claim the text does not make gets its quote snapped, and
// the support check, run on the book's text, still drops the claim.
func TestSnapLyingModelStillCaught(t *testing.T) {
	lib := shared(t)
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "mode(object)")
		return reply(qa.Statement{Text: "Objects in R are immutable and garbage-collected by the Python interpreter.",
			Citations: []qa.Claim{{ChunkID: p.ID, Quote: nearVerbatim(s)}}})
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice, qa.Request{Question: modeQuestion}, nil)
	require.NoError(t, err)
	require.True(t, a.Refused, a.Answer)
	require.Empty(t, a.Citations)
	require.Len(t, a.Trace.Snapped, 1)
	require.False(t, a.Trace.Snapped[0].Kept)
	require.Equal(t, 1, a.Trace.NotSupported)
	require.Len(t, a.Trace.Rejected, 1)
	require.Equal(t, citation.Unsupported, a.Trace.Rejected[0].Reason)
	require.NotContains(t, allStrings(t, a), "immutable\",\"citations")
	require.NotContains(t, a.Answer, "Python")
}

// TestSnapChinese: a Chinese quote with a character dropped and its
// full-width punctuation re-typed is shown as the book prints it.
func TestSnapChinese(t *testing.T) {
	lib := shared(t)
	var real, quote string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		for _, p := range ps {
			for _, s := range analysis.Sentences(p.Text) {
				if !strings.Contains(s, "参数") || len([]rune(s)) < 15 {
					continue
				}
				real = s
				r := []rune(strings.NewReplacer("，", ",", "。", ".", "：", ":").Replace(s))
				mid := len(r) / 2
				for mid < len(r) && (r[mid] < 0x4e00 || r[mid] > 0x9fff) {
					mid++ // drop a Han character, not a command name
				}
				quote = string(r[:mid]) + string(r[mid+1:])
				return reply(qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: p.ID, Quote: quote}}})
			}
		}
		return reply()
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), lin,
		qa.Request{Question: "用 \\newcommand 自定义命令时，最多能带几个参数？", BookIDs: []string{bookZH}}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, quote)
	require.False(t, a.Refused, "%s %+v %+v", a.Answer, a.Trace.Rejected, a.Trace.Answerability)
	require.Empty(t, a.Trace.Guards.Fallback)
	require.Len(t, a.Trace.Snapped, 1, "%+v", a.Trace.Rejected)
	require.Len(t, a.Citations, 1)
	require.NotEqual(t, quote, a.Citations[0].Quote)
	require.Contains(t, strings.Join(strings.Fields(real), ""), strings.Join(strings.Fields(a.Citations[0].Quote), ""))
	requireShownFromBook(t, lib, a.Citations)
}
