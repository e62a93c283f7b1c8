package qa_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// TestRescript asks lshort-zh-cn, a simplified-Chinese book, in traditional
// script as a reader in Taiwan types it: each question is searched in the
// book's script, answered from the page its simplified form is, and the
// trace says which characters were converted. Without the converter the
// same questions find little but the characters both scripts share, so
// they are refused or cited elsewhere; a question of another subject stays
// refused, and a simplified question is searched as asked.
func TestRescript(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	bare := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Scripts = nil })
	ctx := context.Background()
	ask := func(p *qa.Pipeline, q string) *qa.Answer {
		a, err := p.Ask(ctx, lin, qa.Request{Question: q, BookIDs: []string{bookZH}}, nil)
		require.NoError(t, err)
		return a
	}
	for _, c := range []struct {
		traditional, simplified string
	}{
		{"為什麼我在 \\TeX 後面敲的空格，在輸出裡不見了？", "为什么我在 \\TeX 后面敲的空格，在输出里不见了？"},
		{"寫頁碼範圍（比如第 13 到 67 頁）時，應該用哪一種橫線？", "写页码范围（比如第 13 到 67 页）时，应该用哪一种横线？"},
		{"為什麼不推薦用兩個美元符號 $$ 來寫單獨成行的公式？", "为什么不推荐用两个美元符号 $$ 来写单独成行的公式？"},
	} {
		want := ask(p, c.simplified)
		require.False(t, want.Refused, c.simplified)
		require.Empty(t, want.Trace.Respelled, "a simplified question is searched as asked")
		got := ask(p, c.traditional)
		require.False(t, got.Refused, "%s: %+v", c.traditional, got.Trace.Answerability)
		require.NotEmpty(t, got.Trace.Respelled, c.traditional)
		require.Equal(t, c.traditional, got.Trace.Question, "the trace keeps the question as asked")
		require.Equal(t, want.Citations[0].Page, got.Citations[0].Page, c.traditional)
		require.Equal(t, want.Citations[0].Quote, got.Citations[0].Quote, "quotes are the book's own text")
		b := ask(bare, c.traditional)
		t.Logf("%s without conversion: refused %v (%s)", c.traditional, b.Refused, b.Trace.Answerability.Code)
		if !b.Refused {
			require.NotEqual(t, want.Citations[0].Page, b.Citations[0].Page, "%s answered from its page without conversion: the test shows nothing", c.traditional)
		}
	}
	a := ask(p, "有沒有工具能把 .tex 文件直接轉換成 Word 的 .docx 文檔？")
	require.True(t, a.Refused, "lshort-zh-cn never covers converting to Word: %s", a.Answer)
}
