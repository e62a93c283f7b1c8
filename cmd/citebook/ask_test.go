package main

import (
	"encoding/json"
	"net/http"
	"net/http/httptest"
	"regexp"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

func TestAskCommand(t *testing.T) {
	data := t.TempDir()
	_, err := run(t, "index", corpus.Path(t, "books/dtc-paper.pdf"), "--data", data, "--tenant", "acme", "--groups", "eng", "--book", "dtc")
	require.NoError(t, err)
	q := "What is a device tree and how is it passed to the kernel?"

	t.Run("json contract", func(t *testing.T) {
		out, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--user", "ann", "--groups", "eng", "--json")
		require.NoError(t, err)
		var raw map[string]any
		require.NoError(t, json.Unmarshal([]byte(out), &raw))
		for _, k := range []string{"answer", "refused", "citations", "trace"} {
			require.Contains(t, raw, k)
		}
		require.Equal(t, false, raw["refused"], raw["answer"])
		cits := raw["citations"].([]any)
		require.NotEmpty(t, cits)
		for _, c := range cits {
			for _, k := range []string{"n", "chunk_id", "book_id", "book_title", "heading_path", "page", "printed_page", "quote"} {
				require.Contains(t, c, k)
			}
			require.Equal(t, "dtc", c.(map[string]any)["book_id"])
		}
		tr := raw["trace"].(map[string]any)
		for _, k := range []string{"question", "sub_queries", "retrieved", "context", "timings_ms", "model"} {
			require.Contains(t, tr, k)
		}
	})

	t.Run("human output", func(t *testing.T) {
		out, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--user", "ann", "--groups", "eng")
		require.NoError(t, err)
		lines := strings.Split(strings.TrimSpace(out), "\n")
		require.Regexp(t, `\[1\]`, lines[0])
		cite := regexp.MustCompile(`^\[\d+\] .+( — .+)?(, p\. \S+( \(physical \d+\))?)?: “.+”$`)
		n := 0
		for _, l := range lines[1:] {
			if strings.HasPrefix(l, "[") {
				require.Regexp(t, cite, l)
				n++
			}
		}
		require.Positive(t, n)
	})

	t.Run("outside the book's groups nothing is found", func(t *testing.T) {
		out, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--user", "bo", "--json")
		require.NoError(t, err)
		var ans struct {
			Refused   bool                `json:"refused"`
			Citations []citebook.Citation `json:"citations"`
			Trace     struct {
				NothingFound bool `json:"nothing_relevant"`
			} `json:"trace"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &ans))
		require.True(t, ans.Refused)
		require.Empty(t, ans.Citations)
		require.True(t, ans.Trace.NothingFound)
	})

	t.Run("openai-compatible model", func(t *testing.T) {
		passage := regexp.MustCompile(`(?s)<passage chunk_id="([^"]*)"[^>]*>\n(.*?)\n</passage>`)
		var auth string
		srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
			auth = r.Header.Get("Authorization")
			var req struct {
				Messages []struct {
					Content string `json:"content"`
				} `json:"messages"`
			}
			require.NoError(t, json.NewDecoder(r.Body).Decode(&req))
			ms := passage.FindAllStringSubmatch(req.Messages[len(req.Messages)-1].Content, -1)
			require.NotEmpty(t, ms)
			// Quote a sentence that answers: one naming the device tree
			// and the kernel (verification keeps no answer that does not).
			m, quote := ms[0], strings.SplitAfter(ms[0][2], ". ")[0]
		pick:
			for _, c := range ms {
				for _, s := range strings.SplitAfter(c[2], ". ") {
					l := strings.ToLower(s)
					if strings.Contains(l, "device tree") && strings.Contains(l, "kernel") && len(s) < 400 {
						m, quote = c, s
						break pick
					}
				}
			}
			body, _ := json.Marshal(map[string]any{"statements": []any{map[string]any{
				"text": quote, "citations": []any{map[string]any{"chunk_id": m[1], "quote": quote}}}}})
			_ = json.NewEncoder(w).Encode(map[string]any{"choices": []any{map[string]any{"index": 0,
				"message": map[string]any{"role": "assistant", "content": string(body)}}}})
		}))
		defer srv.Close()
		t.Setenv("CITEBOOK_LLM_KEY", "sekret")
		out, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--user", "ann", "--groups", "eng", "--json",
			"--llm", "openai", "--llm-url", srv.URL+"/v1", "--llm-model", "scripted")
		require.NoError(t, err)
		require.Equal(t, "Bearer sekret", auth)
		var ans struct {
			Answer    string              `json:"answer"`
			Refused   bool                `json:"refused"`
			Citations []citebook.Citation `json:"citations"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &ans))
		require.False(t, ans.Refused, ans.Answer)
		// The statement restates its quote: support verification keeps no other.
		require.True(t, strings.HasSuffix(ans.Answer, " [1]"), ans.Answer)
		require.Len(t, ans.Citations, 1)
	})

	// The wired pipeline weighs terms by the lexical index's statistics:
	// without them no name is ever found missing and in-domain questions
	// the book never covers were answered (books-dev refusal accuracy 0.18).
	t.Run("a name the book never mentions is refused", func(t *testing.T) {
		out, err := run(t, "ask", "How do I pass a device tree to the kernel through WireGuard?",
			"--data", data, "--tenant", "acme", "--user", "ann", "--groups", "eng", "--json")
		require.NoError(t, err)
		var ans struct {
			Refused bool `json:"refused"`
			Trace   struct {
				Answerability struct {
					Code     string   `json:"code"`
					Missing  []string `json:"missing"`
					KeyTerms []string `json:"key_terms"`
				} `json:"answerability"`
			} `json:"trace"`
		}
		require.NoError(t, json.Unmarshal([]byte(out), &ans))
		require.True(t, ans.Refused)
		require.Equal(t, "never_mentioned", ans.Trace.Answerability.Code, ans.Trace.Answerability.KeyTerms)
		require.Equal(t, []string{"wireguard"}, ans.Trace.Answerability.Missing)
	})

	t.Run("bad llm", func(t *testing.T) {
		_, err := run(t, "ask", q, "--data", data, "--tenant", "acme", "--llm", "gpt")
		require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
	})
}
