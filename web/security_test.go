package web

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/modelcontextprotocol/go-sdk/mcp"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
)

// request sends one request with full control over Host and headers; secret
// "" sends no Authorization header.
func request(t testing.TB, base, secret, method, path, host string, body io.Reader, hdr ...string) (*http.Response, []byte) {
	t.Helper()
	req, err := http.NewRequest(method, base+path, body)
	require.NoError(t, err)
	if host != "" {
		req.Host = host
	}
	if secret != "" {
		req.Header.Set("Authorization", "Bearer "+secret)
	}
	for i := 0; i+1 < len(hdr); i += 2 {
		req.Header.Set(hdr[i], hdr[i+1])
	}
	res, err := http.DefaultClient.Do(req)
	require.NoError(t, err)
	defer res.Body.Close()
	data, err := io.ReadAll(res.Body)
	require.NoError(t, err)
	return res, data
}

// TestZeroConfigEndsWhenATokenIsCreated (issue 10, item 9): a token created
// while the server runs ends zero-config mode on the next request, and
// revoking it does not bring the mode back.
func TestZeroConfigEndsWhenATokenIsCreated(t *testing.T) {
	local := citebook.Principal{Tenant: "acme", User: "local", Admin: true}
	e := newEnv(t, envOpts{local: &local})
	res, data := e.do(t, "", "GET", "/v1/me", nil)
	require.Equal(t, 200, res.StatusCode, "%s", data)

	secret, tok, err := e.store.Create(context.Background(), citebook.Principal{Tenant: "acme", User: "alice"})
	require.NoError(t, err)
	res, data = e.do(t, "", "GET", "/v1/me", nil)
	require.Equal(t, 401, res.StatusCode, "zero-config is off at once: %s", data)
	res, _ = send(t, e.http.URL, secret, "GET", "/v1/me", nil)
	require.Equal(t, 200, res.StatusCode, "the new token works")

	require.NoError(t, e.store.Revoke(context.Background(), tok.ID))
	res, _ = e.do(t, "", "GET", "/v1/me", nil)
	require.Equal(t, 401, res.StatusCode, "revoking every token does not reopen the server")
	res, _ = e.do(t, "", "POST", "/v1/ask", strings.NewReader(`{"question":"attributes"}`))
	require.Equal(t, 401, res.StatusCode)
}

// TestZeroConfigHostAndOrigin (issue 10, item 10): in zero-config mode only
// loopback Host names and same-origin browser requests run as the local
// admin; the two reproductions are the first cases.
func TestZeroConfigHostAndOrigin(t *testing.T) {
	local := citebook.Principal{Tenant: "acme", User: "local", Admin: true}
	e := newEnv(t, envOpts{local: &local})
	u, err := url.Parse(e.http.URL)
	require.NoError(t, err)
	self := u.Host // 127.0.0.1:PORT
	port := u.Port()
	upload := func() (io.Reader, string) {
		return multipartBody(t, map[string]string{"title": "planted"}, "planted.md", []byte("# Planted\n\nA book nobody meant to index.\n"))
	}
	ask := `{"question":"attributes"}`
	cases := []struct {
		name, method, path, host, origin, site, ctype string
		multipart                                     bool
		status                                        int
	}{
		{name: "CSRF upload from another site (issue)", method: "POST", path: "/v1/books", origin: "http://evil.example", multipart: true, status: 403},
		{name: "text/plain ask with a rebound Host (issue)", method: "POST", path: "/v1/ask", host: "evil.example", ctype: "text/plain", status: 403},
		{name: "rebound Host with its port", method: "GET", path: "/v1/books", host: "evil.example:" + port, status: 403},
		{name: "rebound Host on a public route", method: "GET", path: "/healthz", host: "evil.example", status: 403},
		{name: "look-alike host name", method: "GET", path: "/v1/me", host: "localhost.evil.example:" + port, status: 403},
		{name: "private address is not loopback", method: "GET", path: "/v1/me", host: "10.0.0.1:" + port, status: 403},
		{name: "cross-site fetch metadata", method: "POST", path: "/v1/ask", site: "cross-site", ctype: "application/json", status: 403},
		{name: "same-site is still another origin", method: "POST", path: "/v1/ask", site: "same-site", origin: "http://localhost:3000", ctype: "application/json", status: 403},
		{name: "cross-site GET", method: "GET", path: "/v1/books", site: "cross-site", status: 403},
		{name: "opaque origin", method: "POST", path: "/v1/ask", origin: "null", ctype: "text/plain", status: 403},
		{name: "origin on another port", method: "DELETE", path: "/v1/books/rintro", origin: "http://127.0.0.1:1", status: 403},
		{name: "origin with the other scheme", method: "POST", path: "/v1/ask", origin: "https://" + self, ctype: "application/json", status: 403},
		{name: "cross-origin MCP", method: "POST", path: "/mcp", origin: "http://evil.example", ctype: "application/json", status: 403},
		{name: "cross-origin metrics", method: "GET", path: "/metrics", site: "cross-site", status: 403},
		{name: "same-origin page (Origin)", method: "POST", path: "/v1/ask", origin: "http://" + self, ctype: "application/json", status: 200},
		{name: "same-origin page (fetch metadata)", method: "POST", path: "/v1/books", site: "same-origin", origin: "http://" + self, multipart: true, status: 202},
		{name: "typed into the address bar", method: "GET", path: "/v1/me", site: "none", status: 200},
		{name: "curl, no browser headers", method: "POST", path: "/v1/ask", ctype: "application/json", status: 200},
		{name: "localhost with port", method: "GET", path: "/v1/me", host: "localhost:" + port, status: 200},
		{name: "LOCALHOST", method: "GET", path: "/v1/me", host: "LOCALHOST", status: 200},
		{name: "another 127/8 address", method: "GET", path: "/v1/me", host: "127.9.8.7:" + port, status: 200},
		{name: "IPv6 loopback", method: "GET", path: "/v1/me", host: "[::1]:" + port, status: 200},
		{name: "admin metrics on loopback", method: "GET", path: "/metrics", status: 200},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var body io.Reader
			ctype := tc.ctype
			switch {
			case tc.multipart:
				body, ctype = upload()
			case tc.method == "POST":
				body = strings.NewReader(ask)
			}
			res, data := request(t, e.http.URL, "", tc.method, tc.path, tc.host, body,
				"Content-Type", ctype, "Origin", tc.origin, "Sec-Fetch-Site", tc.site)
			require.Equal(t, tc.status, res.StatusCode, "%s", data)
			if tc.status == 403 {
				require.Equal(t, citebook.EFORBIDDEN, errorCode(t, data))
			}
		})
	}
	select {
	case req := <-e.builds:
		require.Equal(t, "planted", req.Title, "only the same-origin upload was indexed")
	case <-time.After(10 * time.Second):
		t.Fatal("the same-origin upload was not queued")
	}
	select {
	case req := <-e.builds:
		t.Fatalf("a refused upload was indexed: %+v", req)
	case <-time.After(100 * time.Millisecond):
	}
}

// TestTokenCrossOrigin: with a token, a browser page of another origin may
// call the API only when the operator lists that origin; then echo's CORS
// middleware answers the preflight.
func TestTokenCrossOrigin(t *testing.T) {
	e := newEnv(t, envOpts{cors: []string{"https://app.example"}})
	ask := `{"question":"attributes"}`
	res, data := e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(ask), "Origin", "https://app.example", "Sec-Fetch-Site", "cross-site")
	require.Equal(t, 200, res.StatusCode, "%s", data)
	require.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))

	res, data = e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(ask), "Origin", "https://other.example")
	require.Equal(t, 403, res.StatusCode, "%s", data)
	require.Empty(t, res.Header.Get("Access-Control-Allow-Origin"))
	res, _ = e.do(t, "", "POST", "/v1/ask", strings.NewReader(ask), "Origin", "https://app.example")
	require.Equal(t, 401, res.StatusCode, "a listed origin still needs a token")

	res, _ = request(t, e.http.URL, "", "OPTIONS", "/v1/ask", "", nil,
		"Origin", "https://app.example", "Access-Control-Request-Method", "POST", "Access-Control-Request-Headers", "authorization,content-type")
	require.Equal(t, 204, res.StatusCode)
	require.Equal(t, "https://app.example", res.Header.Get("Access-Control-Allow-Origin"))
	require.Contains(t, strings.ToLower(res.Header.Get("Access-Control-Allow-Headers")), "authorization")

	// Without the option, no other origin is allowed.
	e = newEnv(t, envOpts{})
	res, _ = e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(ask), "Origin", "https://app.example")
	require.Equal(t, 403, res.StatusCode)
	res, _ = e.do(t, "reader", "POST", "/v1/ask", strings.NewReader(ask))
	require.Equal(t, 200, res.StatusCode, "not a browser: the token decides")

	_, err := New(Config{CORSOrigins: []string{"*"}})
	require.Error(t, err)
	for _, bad := range []string{"*", "https://*.example", "app.example", "https://app.example/", "ftp://x", "https://app.example?x"} {
		require.Equal(t, citebook.EINVALID, citebook.ErrorCode(validCORSOrigin(bad)), bad)
	}
	require.NoError(t, validCORSOrigin("http://localhost:5173"))
}

// FuzzOriginPolicy checks the invariants of origin.go on arbitrary Host,
// Origin and Sec-Fetch-Site values: whatever the input, a request runs as
// the local principal only with a loopback Host and no cross-origin marker,
// and with a token only same-origin or from a listed origin.
func FuzzOriginPolicy(f *testing.F) {
	for _, seed := range [][3]string{
		{"127.0.0.1:8080", "http://127.0.0.1:8080", ""},
		{"evil.example", "http://evil.example", ""},
		{"localhost:8080", "", "same-origin"},
		{"[::1]:8080", "null", ""},
		{"127.0.0.1:8080", "http://127.0.0.1:8080", "cross-site"},
		{"LOCALHOST", "http://localhost:80", ""},
		{"[::ffff:127.0.0.1]:1", "https://app.example", "same-site"},
		{"[fe80::1%lo]:80", "http://[fe80::1%lo]:80", ""},
	} {
		f.Add(seed[0], seed[1], seed[2])
	}
	s := &Server{cfg: Config{CORSOrigins: []string{"https://app.example"}}}
	f.Fuzz(func(t *testing.T, host, origin, site string) {
		r := &http.Request{Method: "POST", Host: host, Header: http.Header{}}
		if origin != "" {
			r.Header.Set("Origin", origin)
		}
		if site != "" {
			r.Header.Set("Sec-Fetch-Site", site)
		}
		siteNorm := strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site")))
		if checkLocalHost(r) == nil {
			name := host
			if h, _, err := net.SplitHostPort(host); err == nil {
				name = h
			}
			name = strings.TrimSuffix(strings.TrimPrefix(name, "["), "]")
			ip := net.ParseIP(name)
			require.True(t, strings.EqualFold(name, "localhost") || (ip != nil && (ip.Equal(net.IPv6loopback) || ip.To4() != nil && ip.To4()[0] == 127)),
				"host %q accepted as loopback", host)
		}
		if s.checkOrigin(r, true) == nil {
			require.Contains(t, []string{"", "same-origin", "none"}, siteNorm, "local request with Sec-Fetch-Site %q", site)
			if siteNorm == "" && r.Header.Get("Origin") != "" {
				require.True(t, sameOrigin(r.Header.Get("Origin"), r), "local request from origin %q to host %q", origin, host)
			}
		}
		if s.checkOrigin(r, false) == nil {
			cross, o := crossOrigin(r)
			require.True(t, !cross || strings.EqualFold(o, "https://app.example"), "token request from %q (%q) to %q", origin, site, host)
		}
	})
}

// TestAuthFailuresAreRateLimited (issue 10, smaller): failed
// authentications from one address are limited, answered 429 with
// Retry-After before the token is even checked.
func TestAuthFailuresAreRateLimited(t *testing.T) {
	e := newEnv(t, envOpts{authFail: 0.2, authBurst: 3})
	for i := range 3 {
		res, _ := send(t, e.http.URL, "cb_guess"+strconv.Itoa(i), "GET", "/v1/me", nil)
		require.Equal(t, 401, res.StatusCode, "guess %d", i)
	}
	res, data := send(t, e.http.URL, "cb_guess9", "GET", "/v1/me", nil)
	require.Equal(t, 429, res.StatusCode, "%s", data)
	require.Equal(t, "rate_limited", errorCode(t, data))
	wait, err := strconv.Atoi(res.Header.Get("Retry-After"))
	require.NoError(t, err)
	require.True(t, wait >= 1 && wait <= 5, "Retry-After %d", wait)
	res, _ = e.do(t, "reader", "GET", "/v1/me", nil)
	require.Equal(t, 429, res.StatusCode, "the address is blocked, so guessing cannot continue with a valid token mixed in")
	res, _ = e.do(t, "", "GET", "/v1/me", nil, "Authorization", "Basic eDp5")
	require.Equal(t, 429, res.StatusCode, "malformed headers count as failures too")
	res, _ = send(t, e.http.URL, "cb_guess9", "GET", "/v1/me", nil, "X-Forwarded-For", "203.0.113.9")
	require.Equal(t, 429, res.StatusCode, "X-Forwarded-For does not change the address")

	// Without failures the limiter never gets in the way.
	e = newEnv(t, envOpts{authFail: 0.2, authBurst: 3})
	for range 10 {
		res, _ := e.do(t, "reader", "GET", "/v1/me", nil)
		require.Equal(t, 200, res.StatusCode)
	}
}

// TestFailureLimiterKeys: the limit holds per secret as well as per address,
// IPv6 clients are keyed by /64, and idle buckets are dropped.
func TestFailureLimiterKeys(t *testing.T) {
	l := newLimiters(0.1, 2)
	l.fail("addr:a", "secret:x")
	l.fail("addr:b", "secret:x")
	_, ok := l.unblocked("addr:c", "secret:x")
	require.False(t, ok, "one secret tried from two addresses is blocked")
	_, ok = l.unblocked("addr:c", "secret:y")
	require.True(t, ok)
	_, ok = l.unblocked("addr:a", "secret:z")
	require.True(t, ok, "one failure is within the burst")

	require.Equal(t, "2001:db8:1:2::/64", clientNet("2001:db8:1:2:aaaa::1"))
	require.Equal(t, clientNet("2001:db8:1:2::1"), clientNet("2001:db8:1:2:ffff::9"))
	require.Equal(t, "127.0.0.1", clientNet("::ffff:127.0.0.1"))

	full := newLimiters(1000, 1)
	for i := range maxLimiters {
		full.fail("k" + strconv.Itoa(i))
	}
	time.Sleep(5 * time.Millisecond) // every bucket refills
	full.fail("new")
	require.Len(t, full.m, 1, "full buckets are dropped once the map is large")
}

// TestGrantsAPI (issue 10, item 11): every path of /v1/grants, and that a
// grant added or removed through it decides the very next request.
func TestGrantsAPI(t *testing.T) {
	e := newEnv(t, envOpts{})
	post := func(who, body string) (*http.Response, []byte) {
		return e.do(t, who, "POST", "/v1/grants", strings.NewReader(body))
	}
	firstMoby := e.lib.parents["moby"][0].HeadingPath
	pathJSON, _ := json.Marshal(firstMoby)
	var mobyChunk string
	for _, c := range e.lib.chunks["moby"] {
		if c.ParentID == e.lib.parents["moby"][0].ID {
			mobyChunk = c.ID
			break
		}
	}

	cases := []struct {
		name, who, body string
		status          int
		code            string
	}{
		{"reader may not", "reader", `{"book_id":"moby","subject_kind":"user","subject":"rita","effect":"allow"}`, 403, "forbidden"},
		{"no token", "", `{"book_id":"moby","subject_kind":"user","subject":"rita","effect":"allow"}`, 401, "unauthorized"},
		{"malformed JSON", "admin", `{"book_id":`, 400, "invalid"},
		{"empty body", "admin", ``, 400, "invalid"},
		{"tenant is not the caller's to choose", "admin", `{"tenant":"globex","book_id":"moby","subject_kind":"user","subject":"rita","effect":"allow"}`, 400, "invalid"},
		{"unknown effect", "admin", `{"book_id":"moby","subject_kind":"user","subject":"rita","effect":"maybe"}`, 400, "invalid"},
		{"unknown subject kind", "admin", `{"book_id":"moby","subject_kind":"robot","subject":"r2","effect":"allow"}`, 400, "invalid"},
		{"group without a name", "admin", `{"book_id":"moby","subject_kind":"group","effect":"allow"}`, 400, "invalid"},
		{"two grants in one body", "admin", `{"book_id":"moby","subject_kind":"tenant","effect":"allow"}{}`, 400, "invalid"},
		{"unknown book", "admin", `{"book_id":"nope","subject_kind":"user","subject":"rita","effect":"allow"}`, 404, "not_found"},
		{"another tenant's book", "admin", `{"book_id":"walden","subject_kind":"user","subject":"rita","effect":"allow"}`, 404, "not_found"},
		{"unknown chapter", "admin", `{"book_id":"moby","path":["CHAPTER 999"],"subject_kind":"user","subject":"rita","effect":"deny"}`, 404, "not_found"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			res, data := post(tc.who, tc.body)
			require.Equal(t, tc.status, res.StatusCode, "%s", data)
			require.Equal(t, tc.code, errorCode(t, data))
		})
	}
	res, data := e.do(t, "admin", "POST", "/v1/grants", strings.NewReader(`{"book_id":"moby","subject_kind":"user","subject":"`+strings.Repeat("x", 2<<20)+`"}`))
	require.Equal(t, 413, res.StatusCode, "%s", data[:min(len(data), 200)])

	// Rita is not a whaler: Moby-Dick is closed to her until a grant opens it.
	res, _ = e.do(t, "reader", "GET", "/v1/books/moby", nil)
	require.Equal(t, 404, res.StatusCode)
	res, data = post("admin", `{"book_id":"moby","subject_kind":"user","subject":"rita","effect":"allow"}`)
	require.Equal(t, 201, res.StatusCode, "%s", data)
	var open acl.Grant
	require.NoError(t, json.Unmarshal(data, &open))
	require.Equal(t, acl.Grant{ID: open.ID, Tenant: "acme", BookID: "moby", SubjectKind: acl.SubjectUser, Subject: "rita", Effect: acl.Allow}, open)
	res, _ = e.do(t, "reader", "GET", "/v1/books/moby", nil)
	require.Equal(t, 200, res.StatusCode, "the grant applies to the next request")
	res, _ = e.do(t, "reader", "GET", "/v1/chunks/"+mobyChunk, nil)
	require.Equal(t, 200, res.StatusCode)

	// A chapter deny for her closes only that chapter.
	res, data = post("admin", `{"book_id":"moby","path":`+string(pathJSON)+`,"subject_kind":"user","subject":"rita","effect":"deny"}`)
	require.Equal(t, 201, res.StatusCode, "%s", data)
	var closed acl.Grant
	require.NoError(t, json.Unmarshal(data, &closed))
	res, _ = e.do(t, "reader", "GET", "/v1/chunks/"+mobyChunk, nil)
	require.Equal(t, 404, res.StatusCode, "denied chapter")
	res, _ = e.do(t, "reader", "GET", "/v1/books/moby", nil)
	require.Equal(t, 200, res.StatusCode, "the rest of the book stays open")

	// Listing: the tenant's grants (the harness's whalers deny too), by book.
	var list struct{ Grants []acl.Grant }
	res, data = e.do(t, "admin", "GET", "/v1/grants", nil)
	require.Equal(t, 200, res.StatusCode)
	require.NoError(t, json.Unmarshal(data, &list))
	require.Len(t, list.Grants, 3)
	res, data = e.do(t, "admin", "GET", "/v1/grants?book_id=rintro", nil)
	require.Equal(t, 200, res.StatusCode)
	require.JSONEq(t, `{"grants":[]}`, string(data))
	res, data = e.do(t, "globex", "GET", "/v1/grants", nil)
	require.Equal(t, 200, res.StatusCode)
	require.JSONEq(t, `{"grants":[]}`, string(data), "another tenant's admin sees none")
	res, _ = e.do(t, "reader", "GET", "/v1/grants", nil)
	require.Equal(t, 403, res.StatusCode)

	// Removing.
	for _, tc := range []struct {
		who, id string
		status  int
	}{
		{"admin", "abc", 400}, {"admin", "-3", 400}, {"admin", "0", 400}, {"admin", "99999", 404},
		{"globex", strconv.FormatInt(closed.ID, 10), 404}, {"reader", strconv.FormatInt(closed.ID, 10), 403},
	} {
		res, data := e.do(t, tc.who, "DELETE", "/v1/grants/"+tc.id, nil)
		require.Equal(t, tc.status, res.StatusCode, "%s %s: %s", tc.who, tc.id, data)
	}
	res, _ = e.do(t, "admin", "DELETE", "/v1/grants/"+strconv.FormatInt(closed.ID, 10), nil)
	require.Equal(t, 204, res.StatusCode)
	res, _ = e.do(t, "reader", "GET", "/v1/chunks/"+mobyChunk, nil)
	require.Equal(t, 200, res.StatusCode, "the chapter reopens on the next request")
	res, _ = e.do(t, "admin", "DELETE", "/v1/grants/"+strconv.FormatInt(open.ID, 10), nil)
	require.Equal(t, 204, res.StatusCode)
	res, _ = e.do(t, "reader", "GET", "/v1/books/moby", nil)
	require.Equal(t, 404, res.StatusCode, "closed again")
}

// TestBookSourceIsForAdmins (issue 10, smaller): the server's path of a
// book's file is not shown to readers.
func TestBookSourceIsForAdmins(t *testing.T) {
	e := newEnv(t, envOpts{})
	for who, want := range map[string]bool{"reader": false, "admin": true} {
		res, data := e.do(t, who, "GET", "/v1/books", nil)
		require.Equal(t, 200, res.StatusCode)
		require.Equal(t, want, bytes.Contains(data, []byte(`"source"`)), "%s: %s", who, data)
		res, data = e.do(t, who, "GET", "/v1/books/rintro", nil)
		require.Equal(t, 200, res.StatusCode)
		require.Equal(t, want, bytes.Contains(data, []byte(`"source"`)), who)
		require.Equal(t, want, bytes.Contains(data, []byte("R-intro.pdf")), who)
	}
}

// TestMCPAskMetrics (issue 10, smaller): the MCP ask tool records the same
// latency and refusal metrics as /v1/ask.
func TestMCPAskMetrics(t *testing.T) {
	e := newEnv(t, envOpts{})
	ctx := context.Background()
	p := citebook.Principal{Tenant: "acme", User: "rita"}
	st, ct := mcp.NewInMemoryTransports()
	ss, err := e.srv.NewMCPServer(&p).Connect(ctx, st, nil)
	require.NoError(t, err)
	t.Cleanup(func() { ss.Close() })
	cs, err := mcp.NewClient(&mcp.Implementation{Name: "test", Version: "1"}, nil).Connect(ctx, ct, nil)
	require.NoError(t, err)
	t.Cleanup(func() { cs.Close() })
	callTool[AskOutput](t, cs, "ask", map[string]any{"question": "attributes"})
	callTool[AskOutput](t, cs, "ask", map[string]any{"question": "zzzqqqxxy"})

	res, data := e.do(t, "admin", "GET", "/metrics", nil)
	require.Equal(t, 200, res.StatusCode)
	for _, want := range []string{
		`citebook_ask_refusals_total 1`,
		`citebook_ask_duration_seconds_count{outcome="answered"} 1`,
		`citebook_ask_duration_seconds_count{outcome="refused"} 1`,
	} {
		require.Contains(t, string(data), want)
	}
}

// TestMCPChunkedBodyTooLarge (issue 10, smaller): a chunked MCP body over
// the limit gets the JSON error shape, as on every other route.
func TestMCPChunkedBodyTooLarge(t *testing.T) {
	e := newEnv(t, envOpts{maxBody: 256})
	big := `{"jsonrpc":"2.0","id":1,"method":"tools/list","params":{"pad":"` + strings.Repeat("a", 1000) + `"}}`
	for _, body := range []io.Reader{strings.NewReader(big), io.MultiReader(strings.NewReader(big))} {
		res, data := e.do(t, "reader", "POST", "/mcp", body, "Accept", "application/json, text/event-stream")
		require.Equal(t, 413, res.StatusCode, "%s", data)
		require.Equal(t, "application/json", strings.Split(res.Header.Get("Content-Type"), ";")[0])
		require.Equal(t, "too_large", errorCode(t, data))
	}
}
