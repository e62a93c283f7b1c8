package qa_test

import (
	"context"
	"encoding/json"
	"fmt"
	"net/http"
	"net/http/httptest"
	"os/exec"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync/atomic"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/qa"
)

// scriptPassage is one passage the pipeline put into the prompt, as a
// scripted model reads it back.
type scriptPassage struct {
	ID   string
	Text string
}

// script answers one chat request from what the prompt contained.
type script func(passages []scriptPassage, question string) string

var passageRe = regexp.MustCompile(`(?s)<passage chunk_id="([^"]*)"[^>]*>\n(.*?)\n</passage>`)

// chatMessage is one message of a chat request: its role and its text.
type chatMessage struct{ role, text string }

// chatMessages decodes an OpenAI chat request's messages; a content sent as
// parts is joined.
func chatMessages(r *http.Request) ([]chatMessage, error) {
	var req struct {
		Messages []struct {
			Role    string          `json:"role"`
			Content json.RawMessage `json:"content"`
		} `json:"messages"`
	}
	if err := json.NewDecoder(r.Body).Decode(&req); err != nil {
		return nil, err
	}
	var out []chatMessage
	for _, m := range req.Messages {
		var s string
		if json.Unmarshal(m.Content, &s) != nil {
			var parts []struct {
				Text string `json:"text"`
			}
			_ = json.Unmarshal(m.Content, &parts)
			for _, p := range parts {
				s += p.Text
			}
		}
		out = append(out, chatMessage{m.Role, s})
	}
	return out, nil
}

// writeChat answers a chat request to prompt with content as its one choice.
func writeChat(w http.ResponseWriter, prompt, content string) {
	_ = json.NewEncoder(w).Encode(map[string]any{
		"id": "chatcmpl-test", "object": "chat.completion", "model": "scripted",
		"choices": []any{map[string]any{"index": 0, "finish_reason": "stop",
			"message": map[string]any{"role": "assistant", "content": content}}},
		"usage": map[string]any{"prompt_tokens": len(prompt) / 4, "completion_tokens": len(content) / 4,
			"total_tokens": (len(prompt) + len(content)) / 4},
	})
}

// scriptedServer is an OpenAI-compatible /v1/chat/completions endpoint that
// reads the context out of the request and replies with the script's text.
func scriptedServer(t *testing.T, fn script) (*httptest.Server, *atomic.Int32) {
	t.Helper()
	var calls atomic.Int32
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.URL.Path != "/v1/chat/completions" {
			http.NotFound(w, r)
			return
		}
		calls.Add(1)
		msgs, err := chatMessages(r)
		if err != nil {
			http.Error(w, err.Error(), http.StatusBadRequest)
			return
		}
		var prompt strings.Builder
		for _, m := range msgs {
			prompt.WriteString(m.text + "\n")
		}
		var ps []scriptPassage
		for _, m := range passageRe.FindAllStringSubmatch(prompt.String(), -1) {
			if strings.HasPrefix(m[1], "example-") {
				continue // the prompt's worked example
			}
			ps = append(ps, scriptPassage{ID: m[1], Text: m[2]})
		}
		question := ""
		if i := strings.LastIndex(prompt.String(), "Question: "); i >= 0 {
			question = strings.TrimSpace(prompt.String()[i+len("Question: "):])
		}
		writeChat(w, prompt.String(), fn(ps, question))
	}))
	t.Cleanup(srv.Close)
	return srv, &calls
}

func llmAnswerer(t *testing.T, fn script) (*qa.LLMAnswerer, *atomic.Int32) {
	srv, calls := scriptedServer(t, fn)
	m, err := qa.OpenModel(qa.ModelConfig{Provider: "openai", URL: srv.URL + "/v1", Model: "scripted", Client: srv.Client()})
	require.NoError(t, err)
	return qa.NewLLMAnswerer(m, "openai/scripted"), calls
}

// reply renders statements the way a chatty model would: prose around a
// fenced JSON block.
func reply(sts ...qa.Statement) string {
	if sts == nil {
		sts = []qa.Statement{}
	}
	raw, _ := json.Marshal(map[string]any{"statements": sts})
	return "Sure, here is the answer:\n```json\n" + string(raw) + "\n```\n"
}

// sentenceWith returns the first sentence holding word, else the first
// sentence of at least 40 bytes.
func sentenceWith(text, word string) string {
	for _, s := range analysis.Sentences(text) {
		if strings.Contains(strings.ToLower(s), word) {
			return s
		}
	}
	return firstSentence(text)
}

// firstSentence returns the first sentence of at least 40 bytes.
func firstSentence(text string) string {
	for _, s := range analysis.Sentences(text) {
		if len(s) >= 40 {
			return s
		}
	}
	return ""
}

// pdfPage is the text of one physical page as pdftotext reads it.
func pdfPage(t *testing.T, rel string, page int) string {
	t.Helper()
	out, err := exec.Command("pdftotext", "-f", strconv.Itoa(page), "-l", strconv.Itoa(page), corpus.Path(t, rel), "-").Output()
	require.NoError(t, err, "pdftotext (poppler-utils) is needed")
	return string(out)
}

// requireOnPage checks a citation against the PDF: the beginning of the
// quote is printed on the cited physical page, and the offsets select the
// quote in the chunk, whose page spans put its start on that page.
func requireOnPage(t *testing.T, lib *fixture, rel string, c citebook.Citation) {
	t.Helper()
	chunks, err := lib.Vectors.Get(context.Background(), []string{c.ChunkID})
	require.NoError(t, err)
	require.Len(t, chunks, 1)
	ch := chunks[0]
	require.Equal(t, c.Quote, ch.Text[c.CharStart:c.CharEnd])
	page, printed := citebook.PageAt(ch.Pages, c.CharStart)
	require.Equal(t, page, c.Page)
	require.Equal(t, printed, c.PrintedPage)
	head := analysis.Fold(c.Quote)
	head = head[:min(len(head), 40)]
	require.Contains(t, analysis.Fold(pdfPage(t, rel, c.Page)), head, "quote %q is not on physical page %d", c.Quote, c.Page)
}

func TestAskHonestModel(t *testing.T) {
	lib := shared(t)
	var quoted scriptPassage
	var said string
	ans, calls := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		quoted = ps[0]
		for _, p := range ps {
			if strings.Contains(p.Text, "mode(object)") {
				quoted = p
				break
			}
		}
		// The statement restates its quote (support verification keeps
		// only statements their quotes support), with the model's own
		// marker, which verification renumbers.
		q := sentenceWith(quoted.Text, "mode(object)")
		said = strings.TrimSuffix(strings.Join(strings.Fields(q), " "), ".")
		return reply(qa.Statement{Text: said + " [1].",
			Citations: []qa.Claim{{ChunkID: quoted.ID, Quote: q}}})
	})
	p := lib.pipeline(t, ans, qa.Options{})
	var streamed strings.Builder
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "What are the intrinsic attributes mode and length of an object?"},
		func(s string) { streamed.WriteString(s) })
	require.NoError(t, err)
	require.Equal(t, int32(1), calls.Load())
	require.False(t, a.Refused, "%s %+v", a.Answer, a.Trace.Answerability)
	require.Len(t, a.Citations, 1)
	c := a.Citations[0]
	require.Equal(t, quoted.ID, c.ChunkID)
	require.Equal(t, 1, c.N)
	require.Equal(t, bookR, c.BookID)
	require.Equal(t, lib.titleRIn, c.BookTitle)
	require.Equal(t, said+". [1]", a.Answer)
	require.Equal(t, a.Answer, streamed.String())
	requireOnPage(t, lib, "books/R-intro.pdf", c)
	if c.Page >= 7 { // body pages: printed = physical − 6 (MANIFEST.md)
		require.Equal(t, strconv.Itoa(c.Page-6), c.PrintedPage)
	}

	tr := a.Trace
	require.Contains(t, tr.Context, quoted.ID)
	require.NotEmpty(t, tr.Retrieved)
	require.Equal(t, "openai/scripted", tr.Model)
	require.Positive(t, tr.PromptTokens)
	require.Positive(t, tr.ContextTokens)
	require.Equal(t, 1, tr.Statements)
	require.Zero(t, tr.Unsupported)
	require.Empty(t, tr.Rejected)
	for _, step := range []string{"acl", "embed", "retrieve", "fuse", "threshold", "expand", "rerank", "assemble", "answer", "verify"} {
		require.Contains(t, tr.TimingsMS, step)
	}
	hits, err := lib.Meta.HitCounts(context.Background(), []string{c.ChunkID})
	require.NoError(t, err)
	require.Positive(t, hits[c.ChunkID])
}

// TestAskQuoteAfterPageBreak cites a sentence that starts on the second
// page of a chunk spanning two pages: the citation must carry the page the
// quote is printed on, not the chunk's first page.
func TestAskQuoteAfterPageBreak(t *testing.T) {
	lib := shared(t)
	var target citebook.Chunk
	var quote string
	for _, c := range lib.chunks(t, bookR) {
		if len(c.Pages) < 2 || c.Pages[1].Page < 7 {
			continue
		}
		if s := firstSentence(c.Text[c.Pages[1].Offset:]); s != "" && strings.Count(c.Text, s) == 1 && c.Pages[1].Offset > 0 {
			target, quote = c, s
			break
		}
	}
	require.NotEmpty(t, quote, "R-intro has chunks spanning a page break")
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		for _, p := range ps {
			if p.ID == target.ID {
				return reply(qa.Statement{Text: quote, Citations: []qa.Claim{{ChunkID: p.ID, Quote: quote}}})
			}
		}
		return reply()
	})
	// The question is the whole chunk, so no one sentence answers it: the
	// answerability bar is off, this test is about pages.
	p := lib.pipeline(t, ans, qa.Options{AnswerCoverage: -1})
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: target.Text}, nil)
	require.NoError(t, err)
	require.Contains(t, a.Trace.Context, target.ID)
	require.False(t, a.Refused, "%s %+v", a.Answer, a.Trace.Answerability)
	require.Len(t, a.Citations, 1)
	c := a.Citations[0]
	require.Equal(t, target.Pages[1].Page, c.Page)
	require.NotEqual(t, target.PageStart, c.Page)
	require.Equal(t, target.Pages[1].Printed, c.PrintedPage)
	requireOnPage(t, lib, "books/R-intro.pdf", c)
	require.NotEmpty(t, c.Boxes, "the quote is drawn on its page")
	for _, b := range c.Boxes {
		require.Equal(t, c.Page, b.Page, "every box is on the quote's page, not the chunk's first")
	}

	// A quote running over the page break is drawn on both pages.
	brk := target.Pages[1].Offset
	from := strings.LastIndex(target.Text[:brk-2], " ")
	to := brk + 2 + strings.Index(target.Text[brk+2:], " ")
	from = strings.LastIndex(target.Text[:from], " ")
	to = to + 1 + strings.Index(target.Text[to+1:], " ")
	span := target.Text[from+1 : to]
	ans, _ = llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		for _, p := range ps {
			if p.ID == target.ID {
				return reply(qa.Statement{Text: span, Citations: []qa.Claim{{ChunkID: p.ID, Quote: span}}})
			}
		}
		return reply()
	})
	a, err = lib.pipeline(t, ans, qa.Options{AnswerCoverage: -1}).Ask(context.Background(), alice, qa.Request{Question: target.Text}, nil)
	require.NoError(t, err)
	require.Len(t, a.Citations, 1, a.Answer)
	pages := map[int]bool{}
	for _, b := range a.Citations[0].Boxes {
		pages[b.Page] = true
	}
	require.Equal(t, map[int]bool{target.Pages[0].Page: true, target.Pages[1].Page: true}, pages,
		"quote %q spans the break: %+v", span, a.Citations[0].Boxes)
}

func TestAskLyingModel(t *testing.T) {
	lib := shared(t)
	foreign := lib.chunks(t, bookDTC)[3]
	rChunks := lib.chunks(t, bookR)
	var withheld string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		ids := make([]string, len(ps))
		for i, p := range ps {
			ids[i] = p.ID
		}
		for _, c := range rChunks {
			if !slices.Contains(ids, c.ID) && len(c.Text) > 200 && !strings.Contains(c.HeadingPath[0], "Objects, their modes") {
				withheld = c.ID
				break
			}
		}
		wq := ""
		for _, c := range rChunks {
			if c.ID == withheld {
				wq = firstSentence(c.Text)
			}
		}
		return reply(
			qa.Statement{Text: "R was designed in 1850.", Citations: []qa.Claim{{ChunkID: "r-intro-v1-c999999", Quote: "R was designed in 1850 by a committee"}}},
			qa.Statement{Text: "R never changes modes.", Citations: []qa.Claim{{ChunkID: ps[0].ID, Quote: "R never changes the mode of an object once it is created"}}},
			qa.Statement{Text: "A real passage it was not shown.", Citations: []qa.Claim{{ChunkID: withheld, Quote: wq}}},
			qa.Statement{Text: "Another tenant's passage.", Citations: []qa.Claim{{ChunkID: foreign.ID, Quote: firstSentence(foreign.Text)}}},
		)
	})
	p := lib.pipeline(t, ans, qa.Options{})
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "What are the intrinsic attributes mode and length of an object?"}, nil)
	require.NoError(t, err)
	require.NotEmpty(t, withheld)
	require.True(t, a.Refused)
	require.Equal(t, citation.RefusalMessage, a.Answer)
	require.Empty(t, a.Citations)
	require.Equal(t, 4, a.Trace.Statements)
	require.Equal(t, 4, a.Trace.Unsupported)
	reasons := map[string]string{}
	for _, r := range a.Trace.Rejected {
		reasons[r.ChunkID] = string(r.Reason)
	}
	require.Equal(t, map[string]string{
		"r-intro-v1-c999999": "unknown_chunk",
		a.Trace.Context[0]:   "quote_not_found",
		withheld:             "not_in_context",
		foreign.ID:           "unknown_chunk", // never confirm another tenant's chunk exists
	}, reasons)
	require.NotContains(t, allStrings(t, a), firstSentence(foreign.Text))
}

func TestAskMixedModelKeepsOnlyVerified(t *testing.T) {
	lib := shared(t)
	var said string
	ans, _ := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		p, s := sentenceIn(ps, "length")
		if s == "" {
			p, s = ps[0], firstSentence(ps[0].Text)
		}
		said = s
		return reply(
			qa.Statement{Text: said, Citations: []qa.Claim{{ChunkID: p.ID, Quote: said}}},
			qa.Statement{Text: "Invented.", Citations: []qa.Claim{{ChunkID: p.ID, Quote: "this sentence appears in no book at all"}}},
		)
	})
	a, err := lib.pipeline(t, ans, qa.Options{}).Ask(context.Background(), alice,
		qa.Request{Question: "How do I change the length of an object?"}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused)
	require.Equal(t, strings.Join(strings.Fields(said), " ")+" [1]", strings.Join(strings.Fields(a.Answer), " "), "the quoted sentence as said, its code indices kept")
	require.Len(t, a.Citations, 1)
	require.Equal(t, 1, a.Trace.Unsupported)
	require.Len(t, a.Trace.Rejected, 1)
	require.Equal(t, qa.Rejected{ChunkID: a.Trace.Rejected[0].ChunkID, Quote: "this sentence appears in no book at all", Reason: "quote_not_found"}, a.Trace.Rejected[0])
	require.Contains(t, a.Trace.Context, a.Trace.Rejected[0].ChunkID)
}

func TestAskOffTopicIsRefused(t *testing.T) {
	lib := shared(t)
	honest, calls := llmAnswerer(t, func(ps []scriptPassage, _ string) string {
		if len(ps) == 0 {
			return reply()
		}
		return reply(qa.Statement{Text: "Dinner.", Citations: []qa.Claim{{ChunkID: ps[0].ID, Quote: firstSentence(ps[0].Text)}}})
	})
	for _, tc := range []struct {
		name string
		a    qa.Answerer
	}{{"llm", honest}, {"extractive", qa.NewExtractive(analysis.Terms)}} {
		t.Run(tc.name, func(t *testing.T) {
			a, err := lib.pipeline(t, tc.a, qa.Options{}).Ask(context.Background(), alice, qa.Request{Question: "what time is dinner today?"}, nil)
			require.NoError(t, err)
			require.True(t, a.Refused, a.Answer)
			require.Empty(t, a.Citations)
			require.True(t, a.Trace.NothingFound, "dropped: %v", a.Trace.Retrieved)
			require.Empty(t, a.Trace.Context)
		})
	}
	require.Zero(t, calls.Load(), "the model is not asked when nothing is relevant")
}

func TestEmbeddingVersionMismatch(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{},
		func(d *qa.Deps) { d.Embedder = otherVersion{lib.Embed} })
	_, err := p.Ask(context.Background(), alice, qa.Request{Question: "What is a vector?"}, nil)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	require.Contains(t, citebook.ErrorMessage(err), "re-index")
	_, err = p.Search(context.Background(), alice, qa.Request{Question: "What is a vector?"})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}

type otherVersion struct{ qa.Embedder }

func (o otherVersion) Version() citebook.EmbeddingVersion {
	v := o.Embedder.Version()
	v.Model += "-other"
	return v
}

func TestExtractiveFinanceBench(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	// FinanceBench DEV: evidence_page_num 3 (zero-based) → physical page 4.
	q := "What is the amount of the cash proceeds that JnJ realised from the separation of Kenvue (formerly Consumer Health business segment), as of August 30, 2023?"
	a, err := p.Ask(context.Background(), analyst, qa.Request{Question: q}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%s %+v", a.Answer, a.Trace.Answerability)
	require.NotEmpty(t, a.Citations)
	var found bool
	for _, c := range a.Citations {
		requireOnPage(t, lib, jnjFile, c)
		require.Equal(t, bookJNJ, c.BookID)
		if c.Page == 4 && strings.Contains(c.Quote, "Kenvue") {
			found = true
		}
	}
	require.True(t, found, "no citation of the evidence page: answer %q cites %v", a.Answer, fmt.Sprint(a.Citations))
	require.Equal(t, qa.ExtractiveModel, a.Trace.Model)
}

func TestSearchGroupsByQuery(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	res, err := p.Search(context.Background(), alice, qa.Request{Question: "How is a list different from a vector?", K: 3})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, "How is a list different from a vector?", res[0].Query)
	require.NotEmpty(t, res[0].Hits)
	require.LessOrEqual(t, len(res[0].Hits), 3)
	for i, h := range res[0].Hits {
		require.Equal(t, bookR, h.Chunk.BookID)
		if i > 0 {
			require.LessOrEqual(t, h.Score, res[0].Hits[i-1].Score)
		}
	}
	_, err = p.Search(context.Background(), alice, qa.Request{Question: "  "})
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
}

func TestExtractiveChinese(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	a, err := p.Ask(context.Background(), lin, qa.Request{Question: "TeXworks 和 TeXstudio 等编辑器的编译功能是什么？"}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%s %+v", a.Answer, a.Trace.Answerability)
	require.NotEmpty(t, a.Citations)
	for _, c := range a.Citations {
		require.Equal(t, bookZH, c.BookID)
		requireOnPage(t, lib, zhFile, c)
		if c.Page >= 13 { // body pages: printed = physical − 12 (MANIFEST.md)
			require.Equal(t, strconv.Itoa(c.Page-12), c.PrintedPage)
		}
	}
	require.Contains(t, a.Answer, "编译")
	t.Logf("answer: %s", a.Answer)

	// Other tenants' principals never reach the Chinese book.
	res, err := p.Search(context.Background(), alice, qa.Request{Question: "TeXworks 和 TeXstudio 等编辑器的编译功能是什么？"})
	require.NoError(t, err)
	for _, h := range res[0].Hits {
		require.NotEqual(t, bookZH, h.Chunk.BookID)
	}
}
