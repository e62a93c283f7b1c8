package qa_test

import (
	"context"
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/qa"
)

// Each guard between a model (or the extractive answerer) and the reader,
// run against the real R-intro and lshort-zh-cn indexes with scripted
// models: no model server is needed.

// sentenceIn finds, among the passages the model was shown, a sentence
// holding every word, and the passage it is in.
func sentenceIn(ps []scriptPassage, words ...string) (scriptPassage, string) {
	for _, p := range ps {
		for _, s := range analysis.Sentences(p.Text) {
			l := strings.ToLower(s)
			ok := true
			for _, w := range words {
				ok = ok && strings.Contains(l, w)
			}
			if ok {
				return p, s
			}
		}
	}
	return scriptPassage{}, ""
}

// TestGuardUnsupportedRealQuote is the lying model that cites a real
// passage it was shown, with a quote copied exactly from it, for a claim
// the quote does not make. Existence checks pass; support must not.
func TestGuardUnsupportedRealQuote(t *testing.T) {
	lib := shared(t)
	var quote string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "mode(object)")
		quote = s
		return reply(qa.Statement{Text: "Objects in R are immutable and garbage-collected by the Python interpreter.",
			Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}})
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice,
		qa.Request{Question: "What are the intrinsic attributes mode and length of an object?"}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, quote, "the context holds the sentence the liar quotes")
	require.True(t, a.Refused, a.Answer)
	require.Equal(t, citation.RefusalMessage, a.Answer)
	require.Empty(t, a.Citations)
	require.Equal(t, 1, a.Trace.NotSupported)
	require.Len(t, a.Trace.Rejected, 1)
	require.Equal(t, citation.Unsupported, a.Trace.Rejected[0].Reason)
	require.Equal(t, qa.CodeUnsupported, a.Trace.Answerability.Code)
	require.NotContains(t, allStrings(t, a.Citations), "immutable")
	require.NotContains(t, a.Answer, "Python")
}

// TestGuardNumberNotInQuote: a statement whose number appears in no quote
// is dropped even though the quote is real and on topic; the supported
// statement next to it stays.
func TestGuardNumberNotInQuote(t *testing.T) {
	lib := shared(t)
	var honest string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "mode(object)")
		honest = s
		return reply(
			qa.Statement{Text: "The functions mode(object) and length(object) give the mode and length of 512 structures.",
				Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}},
			qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}},
		)
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice,
		qa.Request{Question: "What are the intrinsic attributes mode and length of an object?"}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%s %+v", a.Answer, a.Trace.Answerability)
	require.NotContains(t, a.Answer, "512")
	require.Equal(t, strings.Join(strings.Fields(honest), " ")+" [1]", a.Answer)
	require.Equal(t, 1, a.Trace.NotSupported)
	require.Len(t, a.Citations, 1)
}

// TestGuardInDomainUnanswerable: questions in the book's domain that it
// never covers are refused by both answerers, with the reason in the
// trace; a covered question is still answered.
func TestGuardInDomainUnanswerable(t *testing.T) {
	lib := shared(t)
	// The model answers anything with the best-looking sentence: only the
	// pipeline's answerability check can stop it.
	eager, calls := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "variance")
		if s == "" {
			p, s = ps[0], firstSentence(ps[0].Text)
		}
		return reply(qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: p.ID, Quote: s}}})
	})
	for _, a := range []struct {
		name string
		a    qa.Answerer
	}{{"llm", eager}, {"extractive", qa.NewExtractive(analysis.Terms)}} {
		t.Run(a.name, func(t *testing.T) {
			p := lib.pipeline(t, a.a, qa.Options{})
			for _, tt := range []struct {
				q    string
				code string
			}{
				// The book never names the action asked ("merge", in
				// any form): TestGuardAbsentAction.
				{"How do I merge two data frames on a shared ID column so that matching rows are combined, like a database join?", qa.CodeNeverMentioned},
				// CPU is an acronym: books spell those out, so its absence
				// alone proves nothing and coverage decides.
				{"How can I run a slow computation in parallel on several CPU cores in R?", qa.CodeLowCoverage},
				{"How do I convert a string such as \"2023-03-15\" into a date in R?", qa.CodeNeverMentioned},
				// A function as code names it is an identifier the book
				// would have to print.
				{"Can R map a large data file into memory with mmap() instead of reading it?", qa.CodeNeverMentioned},
			} {
				ans, err := p.Ask(context.Background(), alice, qa.Request{Question: tt.q}, nil)
				require.NoError(t, err)
				require.True(t, ans.Refused, "%s: %s", tt.q, ans.Answer)
				require.Empty(t, ans.Citations)
				require.Equal(t, tt.code, ans.Trace.Answerability.Code, tt.q)
				require.NotEmpty(t, ans.Trace.Answerability.Reason)
			}
			ans, err := p.Ask(context.Background(), alice, qa.Request{Question: "When I compare two samples with t.test, does R assume that both groups have the same variance?"}, nil)
			require.NoError(t, err)
			require.False(t, ans.Refused, "%+v", ans.Trace.Answerability)
		})
	}
	// The refusals were decided before the model was asked.
	require.Equal(t, int32(1), calls.Load())
}

// TestGuardNeverMentionedReason: the refusal names what the book lacks.
func TestGuardNeverMentionedReason(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "How do I train a neural network with TensorFlow from my R session?"}, nil)
	require.NoError(t, err)
	require.True(t, a.Refused)
	require.Equal(t, qa.CodeNeverMentioned, a.Trace.Answerability.Code)
	require.Contains(t, a.Trace.Answerability.Reason, "“tensorflow”")
	require.Contains(t, a.Trace.Answerability.Reason, "the book never mentions")

	// A plain word no chunk holds proves nothing alone (readers paraphrase),
	// but when coverage refuses, the reason names it. (Asked "how do I
	// merge …", "which function merges …" or "can R merge …", the absent
	// action or claim refuses first: TestGuardAbsentAction,
	// TestGuardAbsentFromClaim.)
	a, err = p.Ask(context.Background(), alice, qa.Request{Question: "What does R offer for merging two data frames on a shared ID column so that matching rows are combined, like a database join?", BookIDs: []string{bookR}}, nil)
	require.NoError(t, err)
	require.True(t, a.Refused)
	require.Equal(t, qa.CodeLowCoverage, a.Trace.Answerability.Code)
	require.Contains(t, a.Trace.Answerability.Absent, "merging")
	require.Contains(t, a.Trace.Answerability.Reason, "the book never mentions “merging”")
	require.Contains(t, a.Trace.Answerability.Reason, "the best passage covers")

	// A name spelled with digits that the book prints in no spelling, not
	// even its letters, is weighed as an absent word, not dropped as a
	// label on a number ("FY2018"): R-intro never names ggplot2.
	a, err = p.Ask(context.Background(), alice, qa.Request{Question: "How can I make a stacked histogram of my data with ggplot2?", BookIDs: []string{bookR}}, nil)
	require.NoError(t, err)
	require.True(t, a.Refused, a.Answer)
	require.Contains(t, a.Trace.Answerability.KeyTerms, "ggplot2")
	require.Contains(t, a.Trace.Answerability.Reason, "“ggplot2”")
}

// TestGuardChinese: the same guards hold for Chinese questions over the
// Chinese LaTeX primer: out-of-book questions are refused, a covered one is
// answered with a verbatim quote, and a model's unsupported Chinese claim
// under a real quote is removed.
func TestGuardChinese(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, q := range []string{
		"怎样给 LaTeX 生成的 PDF 设置打开密码，防止别人随意查看？",
		"怎么给 PDF 的每一页都加上“内部资料”这样的半透明水印？",
		"有没有工具能把 .tex 文件直接转换成 Word 的 .docx 文档？",
	} {
		a, err := p.Ask(context.Background(), lin, qa.Request{Question: q, BookIDs: []string{bookZH}}, nil)
		require.NoError(t, err)
		require.True(t, a.Refused, "%s: %s", q, a.Answer)
		require.NotEmpty(t, a.Trace.Answerability.Reason)
	}
	a, err := p.Ask(context.Background(), lin, qa.Request{Question: "用 \\newcommand 自定义命令时，最多能带几个参数？", BookIDs: []string{bookZH}}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%+v", a.Trace.Answerability)
	require.NotEmpty(t, a.Citations)

	liar, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		s := firstSentence(ps[0].Text)
		return reply(qa.Statement{Text: "LaTeX 的自定义命令最多可以带 20 个参数，并且必须使用 Python 编写。",
			Citations: []qa.Claim{{ChunkID: ps[0].ID, Quote: s}}})
	})
	a, err = lib.pipeline(t, liar, qa.Options{}).Ask(context.Background(), lin,
		qa.Request{Question: "用 \\newcommand 自定义命令时，最多能带几个参数？", BookIDs: []string{bookZH}}, nil)
	require.NoError(t, err)
	require.True(t, a.Refused, a.Answer)
	require.Empty(t, a.Citations)
	require.Equal(t, 1, a.Trace.NotSupported)
}

// TestGuardMalformedReplyFallsBack: a model that replies with no usable
// JSON is retried once with output constrained to the answer schema (chunk
// IDs limited to the context), then the extractive answer stands in; the
// reader never sees an error or the model's text.
func TestGuardMalformedReplyFallsBack(t *testing.T) {
	lib := shared(t)
	var calls atomic.Int32
	var formats []string
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		calls.Add(1)
		var req struct {
			ResponseFormat *struct {
				Type       string          `json:"type"`
				JSONSchema json.RawMessage `json:"json_schema"`
			} `json:"response_format"`
		}
		require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
		f := ""
		if req.ResponseFormat != nil {
			f = req.ResponseFormat.Type
			if f == "json_schema" {
				require.Contains(t, string(req.ResponseFormat.JSONSchema), `"enum"`)
			}
		}
		formats = append(formats, f)
		content := "One sentence of the answer [1]" // not JSON at all
		if calls.Load() == 2 {
			content = ""
		}
		_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
			"message": map[string]any{"role": "assistant", "content": content}}}})
	}))
	defer srv.Close()
	cfg := qa.ModelConfig{Provider: "openai", URL: srv.URL + "/v1", Model: "scripted", Client: srv.Client()}
	m, err := qa.OpenModel(cfg)
	require.NoError(t, err)
	q := qa.Request{Question: "When I compare two samples with t.test, does R assume that both groups have the same variance?"}

	t.Run("extractive fallback", func(t *testing.T) {
		calls.Store(0)
		formats = nil
		p := lib.pipeline(t, qa.NewLLMAnswerer(m, "openai/scripted").Constrain(cfg), qa.Options{},
			func(d *qa.Deps) { d.Fallback = qa.NewExtractive(analysis.Terms) })
		a, err := p.Ask(context.Background(), alice, q, nil)
		require.NoError(t, err)
		require.Equal(t, []string{"json_object", "json_schema"}, formats)
		require.False(t, a.Refused, a.Answer)
		require.NotContains(t, a.Answer, "One sentence of the answer")
		require.Equal(t, qa.ExtractiveModel, a.Trace.Model)
		g := a.Trace.Guards
		require.Equal(t, 2, g.Attempts)
		require.True(t, g.Retried)
		require.Equal(t, "extractive", g.Fallback)
		require.NotEmpty(t, g.ModelError)
	})
	t.Run("refusal without a fallback", func(t *testing.T) {
		calls.Store(0)
		p := lib.pipeline(t, qa.NewLLMAnswerer(m, "openai/scripted").Constrain(cfg), qa.Options{})
		a, err := p.Ask(context.Background(), alice, q, nil)
		require.NoError(t, err)
		require.True(t, a.Refused)
		require.Equal(t, citation.RefusalMessage, a.Answer)
		require.Equal(t, "refusal", a.Trace.Guards.Fallback)
		require.Equal(t, qa.CodeModelFailed, a.Trace.Answerability.Code)
	})
}

// TestGuardExampleEcho: a model that copies the prompt's worked example,
// even with a real citation of the context, never shows it.
func TestGuardExampleEcho(t *testing.T) {
	lib := shared(t)
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		_, s := sentenceIn(ps, "mode(object)")
		return reply(
			qa.Statement{Text: qa.ExampleText, Citations: []qa.Claim{{ChunkID: ps[0].ID, Quote: firstSentence(ps[0].Text)}}},
			qa.Statement{Text: "The kettle switches itself off.", Citations: []qa.Claim{{ChunkID: qa.ExampleChunkID, Quote: s}}},
		)
	})
	q := qa.Request{Question: "What are the intrinsic attributes mode and length of an object?"}
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice, q, nil)
	require.NoError(t, err)
	require.True(t, a.Refused)
	require.Equal(t, 2, a.Trace.Guards.ExampleEchoes)
	require.NotContains(t, allStrings(t, a), "kettle")

	// With the extractive answerer behind the model (as serve wires it),
	// the echo is a failed reply: the extractive answer stands in.
	a, err = lib.pipeline(t, ans, qa.Options{}, func(d *qa.Deps) { d.Fallback = qa.NewExtractive(analysis.Terms) }).Ask(context.Background(), alice, q, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, a.Trace.Answerability.Reason)
	require.Equal(t, "extractive", a.Trace.Guards.Fallback)
	require.Equal(t, 2, a.Trace.Guards.ExampleEchoes)
	require.Contains(t, a.Trace.Guards.ModelError, "example")
	require.NotEmpty(t, a.Citations)
	require.NotContains(t, allStrings(t, a), "kettle")
	require.NotContains(t, a.Answer, qa.ExampleText)
}

// TestSupportCheck covers the support rules on their own.
func TestSupportCheck(t *testing.T) {
	sc := citation.SupportCheck{Content: func(s string) []string { return analysis.ContentTerms(analysis.Terms(s)) }}
	for _, tt := range []struct {
		name, statement, quote string
		ok                     bool
	}{
		{"restated", "Use sink() to divert all output to a file.", `The function sink, > sink("record.lis") will divert all subsequent output from the console to an external file, record.lis.`, true},
		{"number missing", "Around 250 datasets are supplied with R.", "Around 100 datasets are supplied with R (in package datasets).", false},
		{"number present", "About 100 datasets are supplied with R.", "Around 100 datasets are supplied with R (in package datasets).", true},
		{"thousands separator", "The fee was 1000 dollars.", "a fee of 1,000 dollars was charged", true},
		{"name missing", "Use WireGuard to set up the tunnel.", "Use OpenVPN to set up the tunnel.", false},
		{"identifier missing", "Call base::t to transpose.", "The function t() transposes a matrix.", false},
		{"unrelated", "Objects are immutable and garbage-collected.", "The functions mode(object) and length(object) can be used to find out the mode and length of any defined structure.", false},
		{"chinese restated", "命令的参数个数最多为 9 个。", "命令的参数个数，从1到9，如果不写默认为0。", true},
		{"chinese number missing", "最多可以带 20 个参数。", "命令的参数个数，从1到9，如果不写默认为0。", false},
		// lshort-zh-cn p52: a footnote mark glued to the name ("1TEX"
		// segments to "1tex"); the quote holds the name as typed.
		{"name beside a footnote mark", "1TEX原生排版行间公式的方法是用一对$$符号包裹，故不太推荐使用。", "1TEX原生排版行间公式的方法是用一对$$符号包裹，不过无法通过指定fleqn选项控制左对齐，故不太推荐使用。", true},
		{"name only inside a longer word", "The TEX engine typesets it.", "The 1TEXT engine typesets it.", false},
	} {
		t.Run(tt.name, func(t *testing.T) {
			ok, gap := sc.Supported(tt.statement, []string{tt.quote})
			require.Equal(t, tt.ok, ok, "%+v", gap)
		})
	}
}

// TestKeyTermsCJKUnits: a CJK question's key terms are its words, not the
// character pairs across two of them. In "写页码范围…哪一种横线" the pairs
// 码范 (页码|范围) and 种横 (一种|横线) are rare in the book because they
// are no words; weighed by their rarity they outweighed every real term
// and the page that answers (p. 26: "短破折号…表示范围", "pages 13--67")
// covered 1 of 8 key terms. Over the real book they weigh no more than the
// words they join, while the words and numbers keep their own weight.
func TestKeyTermsCJKUnits(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		question string
		straddle map[string][2]string // pair → the words either side
		words    []string             // real terms, weighed as before
	}{
		{"写页码范围（比如第 13 到 67 页）时，应该用哪一种横线？",
			map[string][2]string{"码范": {"页码", "范围"}},
			[]string{"页码", "范围", "横线", "13", "67"}},
		{"为什么不推荐用两个美元符号 $$ 来写单独成行的公式？",
			map[string][2]string{"元符": {"美元", "符号"}},
			[]string{"推荐", "美元", "符号", "单独", "公式"}},
	} {
		w, err := qa.KeyTermWeights(ctx, p, lin, []string{bookZH}, c.question)
		require.NoError(t, err)
		for pair, words := range c.straddle {
			require.Contains(t, w, pair, c.question)
			require.LessOrEqual(t, w[pair], max(w[words[0]], w[words[1]]), "%s: %s weighs more than %v: %v", c.question, pair, words, w)
		}
		for _, word := range c.words {
			require.Contains(t, w, word, c.question)
		}
	}
}

// TestThresholdIgnoresAbsentCJKPairs: a CJK pair no chunk in scope holds
// (面敲 of "后面敲的", 不见) tells no passage from another; weighed by its
// rarity it kept the page that answers (p. 16, where commands swallow the
// spaces after them) under the keyword bar, and the question was refused
// as if nothing were relevant. An English word the filing never uses
// still counts: the off-topic dinner question stays refused.
func TestThresholdIgnoresAbsentCJKPairs(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	ctx := context.Background()
	for _, c := range []struct {
		who      citebook.Principal
		book     string
		question string
		page     int // 0: refused
	}{
		{lin, bookZH, "为什么我在 \\TeX 后面敲的空格，在输出里不见了？", 16},
		// fourth by BM25, first fused; holds 13, 67, 横线 and 范围
		{lin, bookZH, "写页码范围（比如第 13 到 67 页）时，应该用哪一种横线？", 26},
		{analyst, bookJNJ, "What time is dinner served today?", 0},
	} {
		a, err := p.Ask(ctx, c.who, qa.Request{Question: c.question, BookIDs: []string{c.book}}, nil)
		require.NoError(t, err)
		if c.page == 0 {
			require.True(t, a.Refused, "%s: %s", c.question, a.Answer)
			continue
		}
		require.False(t, a.Refused, "%s: %+v", c.question, a.Trace.Answerability)
		require.NotEmpty(t, a.Citations)
		require.Equal(t, c.page, a.Citations[0].Page, "%s: %+v", c.question, a.Citations[0])
	}
}

// TestGuardUnseenSymbol: a symbol the question types on its own ("$$",
// "<<-") is its subject. Symbols are terms (analysis.Terms), so the one
// page of lshort-zh-cn that explains $$ (p52) is found and quoted, not
// p51's "单独成行的行间公式…由equation环境包裹", which answers a
// neighbouring question and holds no "$$". When no passage found shows
// the symbol (R-intro never writes magrittr's %>%), the passages answer a
// neighbouring question, so the answer is a refusal that names it.
func TestGuardUnseenSymbol(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, c := range []struct {
		who      citebook.Principal
		book     string
		question string
		page     int    // 0: refused
		missing  string // the symbol the refusal names
	}{
		{lin, bookZH, "为什么不推荐用两个美元符号 $$ 来写单独成行的公式？", 52, ""},
		{alice, bookR, "What does the <<- operator do when it is used inside a function?", -1, ""},
		{alice, bookR, "How do I chain data frame operations with the %>% pipe?", 0, "%>%"},
	} {
		a, err := p.Ask(context.Background(), c.who, qa.Request{Question: c.question, BookIDs: []string{c.book}}, nil)
		require.NoError(t, err)
		require.Equal(t, c.page == 0, a.Refused, "%s: %s %+v", c.question, a.Answer, a.Trace.Answerability)
		if c.page == 0 {
			require.Contains(t, a.Trace.Answerability.Reason, c.missing)
			require.Empty(t, a.Citations)
			continue
		}
		require.NotEmpty(t, a.Citations)
		if c.page > 0 {
			require.Equal(t, c.page, a.Citations[0].Page, "%s: %+v", c.question, a.Citations[0])
		}
	}
}

// TestGuardUncounted: a "how many" question is answered only where some
// passage gives a number of what it counts. R-intro never counts its
// users, and the passages sharing the question's other words count other
// things; it does give locator()'s default count of points ("n (default
// 512) points"), two sentences from the passage that answers.
func TestGuardUncounted(t *testing.T) {
	p := shared(t).pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	ask := askBook(t, p, alice, bookR)
	q := "How many users does R have worldwide?"
	a := ask(q)
	require.True(t, a.Refused, "%s: %s", q, a.Answer)
	require.Equal(t, qa.CodeNoAnswer, a.Trace.Answerability.Code)
	require.Contains(t, a.Trace.Answerability.Reason, "“how many users …”")

	q = "If I call locator() without saying how many points I want, how many clicks will it accept?"
	a = ask(q)
	require.False(t, a.Refused, "%s: %+v", q, a.Trace.Answerability)
}

// TestGuardProcedureNeedsInstructions: a how-to question is answered by the
// passage giving the instructions; one sharing only its general words
// ("function", "package", "automatically") is refused under the raised
// procedural bar, in English and Chinese, while how-to questions the books
// answer still are, on the page that answers.
func TestGuardProcedureNeedsInstructions(t *testing.T) {
	lib := shared(t)
	for _, a := range bothAnswerers(t) {
		t.Run(a.name, func(t *testing.T) { askProcedures(t, lib.pipeline(t, a.a, qa.Options{})) })
	}
}

// bothAnswerers are the extractive answerer and a model that answers
// anything with the first sentence it is shown: a guard of the
// answerability check refuses before either is asked.
func bothAnswerers(t *testing.T) []struct {
	name string
	a    qa.Answerer
} {
	eager, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		s := firstSentence(ps[0].Text)
		return reply(qa.Statement{Text: s, Citations: []qa.Claim{{ChunkID: ps[0].ID, Quote: s}}})
	})
	return []struct {
		name string
		a    qa.Answerer
	}{{"llm", eager}, {"extractive", qa.NewExtractive(analysis.Terms)}}
}

func askProcedures(t *testing.T, p *qa.Pipeline) {
	for _, c := range []struct {
		who      citebook.Principal
		book     string
		question string
		page     int // 0: refused as too weak to be the instructions
	}{
		{alice, bookR, "How should I write unit tests for my R package's functions with testthat so they run automatically?", 0},
		{lin, bookZH, "怎样在 LaTeX 文档里排版带五线谱的乐谱？", 0},
		{alice, bookR, "How do I run a file of R commands from the command line?", -1},
		{lin, bookZH, "怎样给文档加上目录？", -1},
	} {
		a, err := p.Ask(context.Background(), c.who, qa.Request{Question: c.question, BookIDs: []string{c.book}}, nil)
		require.NoError(t, err)
		require.Equal(t, c.page == 0, a.Refused, "%s: %s %+v", c.question, a.Answer, a.Trace.Answerability)
		if c.page == 0 {
			require.Equal(t, qa.CodeLowCoverage, a.Trace.Answerability.Code)
			require.Contains(t, a.Trace.Answerability.Reason, "asks how to do something")
			require.GreaterOrEqual(t, a.Trace.Answerability.Coverage, a.Trace.Answerability.Bar, "refused by the procedural bar, not the general one")
			require.Empty(t, a.Citations)
			continue
		}
		require.NotEmpty(t, a.Citations)
	}
}

// TestGuardDoerNamed: a question asking who did something is answered by a
// passage naming someone who did, not by one that only tells of the deed
// ("With the merge of ppc32 and ppc64 code …" of "Who merged …?"), for
// either answerer; one the paper answers ("Ben Herrenschmidt implemented")
// still is, on its page.
func TestGuardDoerNamed(t *testing.T) {
	lib := shared(t)
	for _, a := range bothAnswerers(t) {
		t.Run(a.name, func(t *testing.T) {
			p := lib.pipeline(t, a.a, qa.Options{})
			ask := func(q string) *qa.Answer {
				ans, err := p.Ask(context.Background(), bob, qa.Request{Question: q, BookIDs: []string{bookDTC}}, nil)
				require.NoError(t, err)
				return ans
			}
			ans := ask("Who merged the ppc32 and ppc64 code?")
			require.True(t, ans.Refused, "%s %+v", ans.Answer, ans.Trace.Answerability)
			require.Equal(t, qa.CodeNoAnswer, ans.Trace.Answerability.Code)
			require.Contains(t, ans.Trace.Answerability.Reason, "asks who merged it")
			require.GreaterOrEqual(t, ans.Trace.Answerability.Coverage, ans.Trace.Answerability.Bar, "refused for the doer, not the coverage")
			require.Empty(t, ans.Citations)

			if a.name == "extractive" {
				ans = ask("Who implemented the flattened device tree approach?")
				require.False(t, ans.Refused, ans.Trace.Answerability.Reason)
				require.Contains(t, ans.Answer, "Ben Herrenschmidt")
			}
		})
	}
}

// TestGuardModelSilence: a model that says nothing (no statements) on a
// question the answerability check judged answerable has failed to answer:
// the extractive answer stands in, verified; with ModelMayRefuse its
// silence is its refusal.
func TestGuardModelSilence(t *testing.T) {
	lib := shared(t)
	silent, _ := llmAnswerer(t, func([]scriptPassage, string) string { return reply() })
	q := qa.Request{Question: "When I compare two samples with t.test, does R assume that both groups have the same variance?"}
	fallback := func(d *qa.Deps) { d.Fallback = qa.NewExtractive(analysis.Terms) }

	a, err := lib.pipeline(t, silent, qa.Options{}, fallback).Ask(context.Background(), alice, q, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, a.Answer)
	require.Equal(t, qa.ExtractiveModel, a.Trace.Model)
	require.Equal(t, "extractive", a.Trace.Guards.Fallback)
	require.Equal(t, "the model gave no statement", a.Trace.Guards.ModelError)
	require.NotEmpty(t, a.Citations)

	a, err = lib.pipeline(t, silent, qa.Options{ModelMayRefuse: true}, fallback).Ask(context.Background(), alice, q, nil)
	require.NoError(t, err)
	require.True(t, a.Refused)
	require.Empty(t, a.Trace.Guards.Fallback)
	require.Empty(t, a.Citations)
}
