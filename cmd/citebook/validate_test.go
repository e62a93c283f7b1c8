package main

import (
	"context"
	"encoding/json"
	"net/http"
	"strings"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/web"
)

// TestQuestionRulesAreTheSameEverywhere sends one table of questions through
// every entry point — the CLI, HTTP /v1/ask (plain and streamed),
// /v1/search and the MCP tools — and requires one outcome per question: the
// length rule counts characters, so a 2,000-character Chinese question
// (6,000 bytes) is accepted everywhere and a 4,001-character one refused
// everywhere with too_large.
func TestQuestionRulesAreTheSameEverywhere(t *testing.T) {
	data := t.TempDir()
	_, err := run(t, "index", corpus.Path(t, "books/dtc-paper.pdf"), "--data", data, "--book", "dtc")
	require.NoError(t, err)

	srv := startServe(t, data, "--rate", "0") // no rate limit: the table sends many requests at once
	base := srv.base
	ctx := context.Background()
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
		Connect(ctx, &mcp.StreamableClientTransport{Endpoint: base + "/mcp", MaxRetries: -1}, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })

	// overHTTP returns the error code of a request ("" for 200), checking
	// the status is the one web maps the code to.
	overHTTP := func(path, accept, q string) string {
		body, _ := json.Marshal(map[string]string{"question": q})
		req, _ := http.NewRequest(http.MethodPost, base+path, strings.NewReader(string(body)))
		req.Header.Set("Content-Type", "application/json")
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		res, err := http.DefaultClient.Do(req)
		require.NoError(t, err)
		defer res.Body.Close()
		if res.StatusCode == 200 {
			return ""
		}
		var e struct{ Error struct{ Code string } }
		require.NoError(t, json.NewDecoder(res.Body).Decode(&e))
		require.Equal(t, web.HTTPStatus(e.Error.Code), res.StatusCode)
		return e.Error.Code
	}
	overMCP := func(tool, arg, q string) string {
		res, err := cs.CallTool(ctx, &mcp.CallToolParams{Name: tool, Arguments: map[string]any{arg: q}})
		require.NoError(t, err)
		if !res.IsError {
			return ""
		}
		text := res.Content[0].(*mcp.TextContent).Text
		code, _, ok := strings.Cut(text, ":")
		require.True(t, ok, text)
		return code
	}
	overCLI := func(q string) string {
		_, err := run(t, "ask", q, "--data", data, "--json")
		if err == nil {
			return ""
		}
		return citebook.ErrorCode(err)
	}

	zh := func(n int) string { return string([]rune(strings.Repeat("设备树", n/3+1))[:n]) }
	for _, tc := range []struct {
		name, question, code string
	}{
		{"english", "What is a device tree?", ""},
		{"2,000 Chinese characters (6,000 bytes)", zh(2000), ""},
		{"4,000 Chinese characters, the limit", zh(4000), ""},
		{"4,001 Chinese characters", zh(4001), citebook.ETOOLARGE},
		{"4,001 ASCII characters", strings.Repeat("a", 4001), citebook.ETOOLARGE},
		{"spaces around 4,000 characters are trimmed", "  " + zh(4000) + "\n", ""},
		{"empty", "", citebook.EINVALID},
		{"only spaces", " \t\n", citebook.EINVALID},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got := map[string]string{
				"cli ask":     overCLI(tc.question),
				"http ask":    overHTTP("/v1/ask", "", tc.question),
				"http sse":    overHTTP("/v1/ask", "text/event-stream", tc.question),
				"http search": overHTTP("/v1/search", "", tc.question),
				"mcp ask":     overMCP("ask", "question", tc.question),
				"mcp search":  overMCP("search", "query", tc.question),
			}
			for entry, code := range got {
				require.Equal(t, tc.code, code, entry)
			}
		})
	}
}
