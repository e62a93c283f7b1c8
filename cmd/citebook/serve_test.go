package main

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/web"
	"github.com/citebook/citebook/web/auth"
)

func TestIsLoopback(t *testing.T) {
	for addr, want := range map[string]bool{
		"127.0.0.1:8080": true,
		"localhost:8080": true,
		"[::1]:8080":     true,
		"127.0.0.2:80":   true,
		":8080":          false,
		"0.0.0.0:8080":   false,
		"[::]:8080":      false,
		"10.0.0.5:8080":  false,
		"example.com:80": false,
		"127.0.0.1":      false, // no port: not a listen address
	} {
		require.Equal(t, want, isLoopback(addr), addr)
	}
}

// runTokens runs `citebook tokens ARGS` and returns stdout.
func runTokens(t *testing.T, args ...string) (string, error) {
	t.Helper()
	cmd := newTokensCmd()
	var out, errOut bytes.Buffer
	cmd.SetOut(&out)
	cmd.SetErr(&errOut)
	cmd.SetArgs(args)
	err := cmd.ExecuteContext(context.Background())
	return out.String(), err
}

// TestTokensCommand creates, lists and revokes a token through the CLI and
// checks the printed secret authenticates until it is revoked.
func TestTokensCommand(t *testing.T) {
	data := t.TempDir()
	secret, err := runTokens(t, "create", "--data", data, "--tenant", "acme", "--user", "alice", "--groups", "eng,ops", "--admin")
	require.NoError(t, err)
	secret = strings.TrimSpace(secret)
	require.True(t, strings.HasPrefix(secret, "cb_"))

	_, err = runTokens(t, "create", "--data", data, "--tenant", "acme")
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "a user is required")

	out, err := runTokens(t, "list", "--data", data, "--json")
	require.NoError(t, err)
	var list []auth.Token
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	require.Len(t, list, 1)
	require.Equal(t, citebook.Principal{Tenant: "acme", User: "alice", Groups: []string{"eng", "ops"}, Admin: true}, list[0].Principal)
	require.NotContains(t, out, secret, "list never shows secrets")

	check := func() error {
		return withTokens(context.Background(), testlib.Config(data), func(s *auth.Store) error {
			_, err := s.Lookup(context.Background(), secret)
			return err
		})
	}
	require.NoError(t, check())
	_, err = runTokens(t, "revoke", "--data", data, list[0].ID)
	require.NoError(t, err)
	require.Equal(t, citebook.EUNAUTHORIZED, citebook.ErrorCode(check()))
	_, err = runTokens(t, "revoke", "--data", data, "nope")
	require.Equal(t, citebook.ENOTFOUND, citebook.ErrorCode(err))
}

// TestServeZeroConfigAndShutdown starts `citebook serve` on a fresh library
// bound to loopback: without tokens a request needs none (zero-config),
// once a token is created — while the server runs — every request needs
// one, also after that token is revoked and the server restarted, and
// cancelling the context shuts the server down cleanly.
func TestServeZeroConfigAndShutdown(t *testing.T) {
	data := t.TempDir()
	srv := startServe(t, data)
	base := srv.base
	res, err := http.Get(base + "/v1/me")
	require.NoError(t, err)
	var p citebook.Principal
	require.NoError(t, json.NewDecoder(res.Body).Decode(&p))
	res.Body.Close()
	require.Equal(t, 200, res.StatusCode)
	require.Equal(t, citebook.Principal{Tenant: "default", User: "local", Admin: true}, p)

	// DNS rebinding: the same server under another host name is refused.
	req, err := http.NewRequest("GET", base+"/v1/me", nil)
	require.NoError(t, err)
	req.Host = "evil.example"
	res, err = http.DefaultClient.Do(req)
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 403, res.StatusCode)

	// A token created by another command, on its own connection to the
	// library, ends zero-config mode in the running server (issue 10, 9).
	_, err = runTokens(t, "create", "--data", data, "--user", "alice")
	require.NoError(t, err)
	res, err = http.Get(base + "/v1/me")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode, "zero-config is off without a restart")
	out, err := runTokens(t, "list", "--data", data, "--json")
	require.NoError(t, err)
	var list []auth.Token
	require.NoError(t, json.Unmarshal([]byte(out), &list))
	_, err = runTokens(t, "revoke", "--data", data, list[0].ID)
	require.NoError(t, err)
	res, err = http.Get(base + "/v1/me")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode, "revoking every token does not reopen the server")
	require.NoError(t, srv.stop(t))

	srv = startServe(t, data)
	res, err = http.Get(srv.base + "/v1/me")
	require.NoError(t, err)
	res.Body.Close()
	require.Equal(t, 401, res.StatusCode, "nor does a restart: a token was once created")
	require.NoError(t, srv.stop(t))
}

// served is `citebook serve` running in this test's process.
type served struct {
	base   string // http://127.0.0.1:PORT
	cancel context.CancelFunc
	ended  chan struct{} // closed when serve returned err
	err    error
}

// startServe runs `citebook serve --data data` with args on a free loopback
// port and waits until /readyz answers; a test that does not stop it has it
// stopped at cleanup, before its data directory is removed.
func startServe(t *testing.T, data string, args ...string) *served {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	addr := ln.Addr().String()
	ln.Close()
	ctx, cancel := context.WithCancel(context.Background())
	cmd := newServeCmd()
	cmd.SetArgs(append([]string{"--data", data, "--addr", addr}, args...))
	s := &served{base: "http://" + addr, cancel: cancel, ended: make(chan struct{})}
	go func() {
		s.err = cmd.ExecuteContext(ctx)
		close(s.ended)
	}()
	t.Cleanup(func() {
		cancel()
		select {
		case <-s.ended:
		case <-time.After(30 * time.Second):
			t.Error("serve did not shut down")
		}
	})
	for deadline := time.Now().Add(20 * time.Second); ; time.Sleep(50 * time.Millisecond) {
		res, err := http.Get(s.base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				return s
			}
		}
		select {
		case <-s.ended:
			t.Fatalf("serve ended before it was ready: %v", s.err)
		default:
		}
		require.True(t, time.Now().Before(deadline), "server did not become ready: %v", err)
	}
}

// stop cancels serve and returns what it returned, failing the test when
// it does not end within 30 s.
func (s *served) stop(t *testing.T) error {
	t.Helper()
	s.cancel()
	select {
	case <-s.ended:
		return s.err
	case <-time.After(30 * time.Second):
		t.Fatal("serve did not shut down")
		return nil
	}
}

// TestServeMCPStdio runs `citebook serve --mcp-stdio` over pipes with the
// SDK's client: the tools answer from an indexed corpus book as the flag
// principal, and as a token's principal of another tenant they see nothing.
func TestServeMCPStdio(t *testing.T) {
	book := corpus.Path(t, "books/R-intro.pdf")
	data := t.TempDir()
	root := newRoot()
	root.SetOut(io.Discard)
	root.SetArgs([]string{"index", "--data", data, "--book", "r-intro", book})
	require.NoError(t, root.ExecuteContext(context.Background()))
	other, err := runTokens(t, "create", "--data", data, "--tenant", "elsewhere", "--user", "eve")
	require.NoError(t, err)

	connect := func(args ...string) *mcp.ClientSession {
		ctx, cancel := context.WithCancel(context.Background())
		cr, sw := io.Pipe()
		sr, cw := io.Pipe()
		cmd := newServeCmd()
		cmd.SetIn(cr)
		cmd.SetOut(cw)
		cmd.SetArgs(append([]string{"--data", data, "--mcp-stdio"}, args...))
		done := make(chan error, 1)
		go func() { done <- cmd.ExecuteContext(ctx) }()
		cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).
			Connect(ctx, &mcp.IOTransport{Reader: sr, Writer: sw}, nil)
		require.NoError(t, err)
		t.Cleanup(func() {
			cs.Close()
			cancel()
			cr.Close()
			<-done
		})
		return cs
	}
	call := func(cs *mcp.ClientSession, tool string, args map[string]any, out any) {
		res, err := cs.CallTool(context.Background(), &mcp.CallToolParams{Name: tool, Arguments: args})
		require.NoError(t, err)
		require.False(t, res.IsError, "%v", res.Content)
		data, err := json.Marshal(res.StructuredContent)
		require.NoError(t, err)
		require.NoError(t, json.Unmarshal(data, out))
	}

	cs := connect("--tenant", "default", "--user", "agent")
	var found web.SearchOutput
	call(cs, "search", map[string]any{"query": "intrinsic attributes mode and length"}, &found)
	require.NotEmpty(t, found.Results)
	require.NotEmpty(t, found.Results[0].Hits)
	require.Equal(t, "r-intro", found.Results[0].Hits[0].Chunk.BookID)
	var ans web.AskOutput
	call(cs, "ask", map[string]any{"question": "What are the intrinsic attributes of an object?"}, &ans)
	require.False(t, ans.Refused)
	require.NotEmpty(t, ans.Citations)
	require.Equal(t, "r-intro", ans.Citations[0].BookID)

	cs = connect("--token", strings.TrimSpace(other))
	call(cs, "search", map[string]any{"query": "intrinsic attributes mode and length"}, &found)
	for _, r := range found.Results {
		require.Empty(t, r.Hits, "another tenant's token sees no books")
	}
}
