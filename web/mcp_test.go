package web

import (
	"context"
	"encoding/json"
	"net/http"
	"slices"
	"testing"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

// bearer adds a token to every request of an MCP client.
type bearer struct {
	token string
	next  http.RoundTripper
}

func (b bearer) RoundTrip(r *http.Request) (*http.Response, error) {
	r = r.Clone(r.Context())
	if b.token != "" {
		r.Header.Set("Authorization", "Bearer "+b.token)
	}
	return b.next.RoundTrip(r)
}

func callTool[T any](t *testing.T, cs *mcp.ClientSession, name string, args any) (T, *mcp.CallToolResult) {
	t.Helper()
	var out T
	res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: name, Arguments: args})
	require.NoError(t, err)
	if res.IsError {
		return out, res
	}
	data, err := json.Marshal(res.StructuredContent)
	require.NoError(t, err)
	require.NoError(t, json.Unmarshal(data, &out))
	return out, res
}

func checkTools(t *testing.T, cs *mcp.ClientSession, wantBook string) {
	t.Helper()
	ctx := context.Background()
	tools, err := cs.ListTools(ctx, nil)
	require.NoError(t, err)
	var names []string
	for _, tl := range tools.Tools {
		names = append(names, tl.Name)
	}
	slices.Sort(names)
	require.Equal(t, []string{"ask", "search"}, names)

	found, _ := callTool[SearchOutput](t, cs, "search", map[string]any{"query": "attributes"})
	require.Len(t, found.Results, 1)
	if wantBook == "" {
		require.Empty(t, found.Results[0].Hits)
	} else {
		require.NotEmpty(t, found.Results[0].Hits)
		require.Equal(t, wantBook, found.Results[0].Hits[0].Chunk.BookID)
	}

	ans, res := callTool[AskOutput](t, cs, "ask", map[string]any{"question": "attributes"})
	require.False(t, res.IsError)
	if wantBook == "" {
		require.True(t, ans.Refused)
		return
	}
	require.Len(t, ans.Citations, 1)
	require.Equal(t, wantBook, ans.Citations[0].BookID)
	require.Contains(t, res.Content[0].(*mcp.TextContent).Text, ans.Citations[0].Quote, "text content lists the citation")

	_, res = callTool[AskOutput](t, cs, "ask", map[string]any{"question": ""})
	require.True(t, res.IsError, "empty question is a tool error")
}

// TestMCPInMemory runs the tools as the stdio server does: one fixed
// principal for the whole session.
func TestMCPInMemory(t *testing.T) {
	e := newEnv(t, envOpts{})
	for _, tc := range []struct {
		p    citebook.Principal
		book string
	}{
		{citebook.Principal{Tenant: "acme", User: "rita"}, "rintro"},
		{citebook.Principal{Tenant: "initech", User: "nobody"}, ""},
	} {
		ctx := context.Background()
		st, ct := mcp.NewInMemoryTransports()
		ss, err := e.srv.NewMCPServer(&tc.p).Connect(ctx, st, nil)
		require.NoError(t, err)
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
		require.NoError(t, err)
		t.Cleanup(func() { cs.Close() })
		checkTools(t, cs, tc.book)
		ss.Close()
	}
}

// TestMCPHTTP runs the tools over streamable HTTP at /mcp behind the bearer
// auth: each token sees its own tenant's books, no token is refused.
func TestMCPHTTP(t *testing.T) {
	e := newEnv(t, envOpts{})
	connect := func(token string) (*mcp.ClientSession, error) {
		tr := &mcp.StreamableClientTransport{
			Endpoint:   e.http.URL + "/mcp",
			HTTPClient: &http.Client{Transport: bearer{token: token, next: http.DefaultTransport}},
			MaxRetries: -1,
		}
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
		if err == nil {
			t.Cleanup(func() { cs.Close() })
		}
		return cs, err
	}
	cs, err := connect(e.tokens["reader"])
	require.NoError(t, err)
	checkTools(t, cs, "rintro")

	cs, err = connect(e.tokens["globex"])
	require.NoError(t, err)
	found, _ := callTool[SearchOutput](t, cs, "search", map[string]any{"query": "attributes"})
	for _, h := range found.Results[0].Hits {
		require.Equal(t, "globex", h.Chunk.Tenant, "another tenant's chunks never leak")
	}

	_, err = connect("")
	require.Error(t, err, "no token")
	_, err = connect(e.tokens["revoked"])
	require.Error(t, err, "revoked token")

	res, data := e.do(t, "", "POST", "/mcp", nil)
	require.Equal(t, 401, res.StatusCode)
	require.Equal(t, "unauthorized", errorCode(t, data))
}

// TestMCPHTTPLocalPrincipal: in zero-config loopback mode an MCP client
// without a token runs as the local principal.
func TestMCPHTTPLocalPrincipal(t *testing.T) {
	e := newEnv(t, envOpts{local: &citebook.Principal{Tenant: "acme", User: "local", Admin: true}})
	tr := &mcp.StreamableClientTransport{Endpoint: e.http.URL + "/mcp", MaxRetries: -1}
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(context.Background(), tr, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	checkTools(t, cs, "rintro")
}
