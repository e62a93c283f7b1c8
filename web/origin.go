package web

import (
	"net"
	"net/http"
	"net/url"
	"slices"
	"strings"

	"github.com/citebook/citebook"
)

// Browser checks. A bearer token is never sent by a browser on its own, so
// the attacks these checks stop are the ones where the browser is the
// client: a page on another site posting to the local server (CSRF, which
// needs no CORS for a form or text/plain POST), and DNS rebinding, where
// evil.example resolves to 127.0.0.1 and the page then reads responses
// "same-origin" under the attacker's host name.
//
// Invariants:
//   - In zero-config mode the server answers only to a loopback Host
//     (localhost, 127.0.0.0/8, [::1], any port); Host: evil.example is 403.
//   - A request a browser marks as coming from another origin
//     (Sec-Fetch-Site other than same-origin/none; without that header, an
//     Origin other than the request's own) never runs as the zero-config
//     local principal, whatever its method or content type.
//   - With a token, such a request runs only when its Origin is listed in
//     Config.CORSOrigins.
//   - A request with neither header is not from a browser page (curl, SDKs,
//     MCP clients) and is judged by its token alone.

// loopbackHost reports whether a Host header names the loopback interface:
// "localhost" or a loopback IP literal, with or without a port.
func loopbackHost(hostport string) bool {
	host := hostport
	if h, _, err := net.SplitHostPort(hostport); err == nil {
		host = h
	} else if strings.HasPrefix(host, "[") && strings.HasSuffix(host, "]") {
		host = host[1 : len(host)-1]
	}
	if strings.EqualFold(host, "localhost") {
		return true
	}
	if strings.Contains(host, "%") { // a zone ("fe80::1%eth0") is never loopback
		return false
	}
	ip := net.ParseIP(host)
	return ip != nil && ip.IsLoopback()
}

// checkLocalHost refuses a zero-config request addressed to a host name that
// is not loopback (DNS rebinding).
func checkLocalHost(r *http.Request) error {
	if !loopbackHost(r.Host) {
		return citebook.Errorf(citebook.EFORBIDDEN,
			"this server runs in zero-config mode and answers only to localhost, 127.0.0.1 or [::1], not to host %q", r.Host)
	}
	return nil
}

// crossOrigin reports whether a browser sent r on behalf of another origin,
// and that origin ("" when unknown). Sec-Fetch-Site, set by the browser and
// not by pages, is trusted when present (it also survives a reverse proxy
// that rewrites Host); otherwise the Origin header is compared with the
// request's own scheme and host.
func crossOrigin(r *http.Request) (bool, string) {
	origin := r.Header.Get("Origin")
	switch site := strings.ToLower(strings.TrimSpace(r.Header.Get("Sec-Fetch-Site"))); site {
	case "same-origin", "none":
		return false, origin
	case "":
	default: // cross-site, same-site, or anything unexpected
		return true, origin
	}
	if origin == "" {
		return false, ""
	}
	return !sameOrigin(origin, r), origin
}

// sameOrigin compares an Origin header with the origin r was sent to.
func sameOrigin(origin string, r *http.Request) bool {
	u, err := url.Parse(origin)
	if err != nil || u.Host == "" || u.Path != "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return false // includes "null" (sandboxed frames, file: pages)
	}
	scheme := "http"
	if r.TLS != nil {
		scheme = "https"
	}
	return strings.EqualFold(u.Scheme, scheme) && strings.EqualFold(defaultPort(u.Host, scheme), defaultPort(r.Host, scheme))
}

// defaultPort drops the scheme's default port so "localhost" and
// "localhost:80" compare equal.
func defaultPort(host, scheme string) string {
	if h, p, err := net.SplitHostPort(host); err == nil && ((scheme == "http" && p == "80") || (scheme == "https" && p == "443")) {
		if strings.Contains(h, ":") {
			return "[" + h + "]"
		}
		return h
	}
	return host
}

// checkOrigin applies the browser rules to an authenticated request: local
// says whether it runs as the zero-config principal.
func (s *Server) checkOrigin(r *http.Request, local bool) error {
	cross, origin := crossOrigin(r)
	if !cross {
		return nil
	}
	if local {
		return citebook.Errorf(citebook.EFORBIDDEN,
			"cross-origin request refused: in zero-config mode only pages served by this server may call it")
	}
	if origin != "" && slices.ContainsFunc(s.cfg.CORSOrigins, func(o string) bool { return strings.EqualFold(o, origin) }) {
		return nil
	}
	return citebook.Errorf(citebook.EFORBIDDEN,
		"cross-origin request from %q refused; an operator can allow it with serve --cors-origin", origin)
}

// validCORSOrigin checks a configured origin: scheme://host[:port] exactly
// as browsers send it, no wildcard.
func validCORSOrigin(o string) error {
	u, err := url.Parse(o)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.Path != "" || u.User != nil ||
		u.RawQuery != "" || u.Fragment != "" || strings.Contains(o, "*") {
		return citebook.Errorf(citebook.EINVALID, "CORS origin %q must look like https://app.example.com[:port] (no path, no wildcard)", o)
	}
	return nil
}
