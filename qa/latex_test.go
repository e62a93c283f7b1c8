package qa_test

import (
	"context"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/qa"
)

// unescapedLaTeX turns a JSON reply into what a small model writes when it
// copies LaTeX commands into JSON strings without doubling their
// backslash: "\frac", "\tableofcontents", "\newline" — valid JSON escapes
// (form feed, tab, line feed) followed by the rest of the command.
func unescapedLaTeX(reply string) string {
	return regexp.MustCompile(`\\\\([bfnrt][A-Za-z])`).ReplaceAllString(reply, `\$1`)
}

// TestLaTeXQuoteSurvivesJSONEscape is the scripted model that quotes the
// Chinese LaTeX primer exactly but writes its commands into JSON
// unescaped, so the decoder eats the command's first letter. The quote is
// repaired against the passages it was shown and verifies verbatim: shown
// as the book's text, not snapped, not rejected.
func TestLaTeXQuoteSurvivesJSONEscape(t *testing.T) {
	lib := shared(t)
	for _, tc := range []struct{ question, command string }{
		{"\\tableofcontents 命令生成的目录标题默认是什么？", `\tableofcontents`},
		{"以单个字符作为命令的参数时，可以不加括号吗？例如 \\frac 命令", `\frac`},
		{"\\newline 和 \\newpage 命令有什么好处？", `\newline`},
	} {
		t.Run(tc.command, func(t *testing.T) {
			var quote, raw string
			ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
				p, s := sentenceIn(ps, tc.command)
				if s == "" {
					return reply()
				}
				quote = s
				raw = unescapedLaTeX(reply(qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}}))
				return raw
			})
			a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), lin,
				qa.Request{Question: tc.question, BookIDs: []string{bookZH}}, nil)
			require.NoError(t, err)
			require.NotEmpty(t, quote, "the context holds a sentence with %s", tc.command)
			require.NotContains(t, raw, `\\`+tc.command[1:], "the scripted reply writes the command unescaped")
			require.False(t, a.Refused, "%s %+v %+v", a.Answer, a.Trace.Rejected, a.Trace.Answerability)
			require.Empty(t, a.Trace.Guards.Fallback, "the model's own answer is shown")
			require.Empty(t, a.Trace.Rejected)
			require.Empty(t, a.Trace.Snapped, "the repaired quote verifies verbatim")
			require.Len(t, a.Citations, 1)
			require.Equal(t, strings.Join(strings.Fields(quote), " "), strings.Join(strings.Fields(a.Citations[0].Quote), " "))
			require.Contains(t, a.Answer, tc.command)
			requireShownFromBook(t, lib, a.Citations)
		})
	}
}
