package web

import (
	"encoding/json"
	"regexp"
	"slices"
	"strings"
	"testing"

	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"
)

// TestOpenAPIMatchesRoutes: every route echo serves is documented, and every
// documented operation is routed.
func TestOpenAPIMatchesRoutes(t *testing.T) {
	e := newEnv(t, envOpts{})
	var doc struct {
		OpenAPI string                                `json:"openapi"`
		Paths   map[string]map[string]json.RawMessage `json:"paths"`
	}
	require.NoError(t, json.Unmarshal(openAPIDoc, &doc))
	require.True(t, strings.HasPrefix(doc.OpenAPI, "3."))

	param := regexp.MustCompile(`:([a-z_]+)`)
	var routed, documented []string
	for _, r := range e.srv.echo.Routes() {
		if r.Method == echo.RouteNotFound {
			continue // echo's own catch-all for unmatched paths under a group
		}
		routed = append(routed, r.Method+" "+param.ReplaceAllString(r.Path, "{$1}"))
	}
	for path, ops := range doc.Paths {
		for method, op := range ops {
			// echo cannot route a suffix after a parameter: {page}.png is
			// served by the {page} route, which dispatches on the suffix.
			documented = append(documented, strings.ToUpper(method)+" "+strings.TrimSuffix(path, ".png"))
			var o struct {
				OperationID string                     `json:"operationId"`
				Responses   map[string]json.RawMessage `json:"responses"`
			}
			require.NoError(t, json.Unmarshal(op, &o))
			require.NotEmpty(t, o.OperationID, "%s %s", method, path)
			require.NotEmpty(t, o.Responses, "%s %s", method, path)
		}
	}
	slices.Sort(routed)
	routed = slices.Compact(routed)
	slices.Sort(documented)
	documented = slices.Compact(documented)
	require.Equal(t, routed, documented)

	// The served document is the embedded one.
	res, data := e.do(t, "", "GET", "/openapi.json", nil)
	require.Equal(t, 200, res.StatusCode)
	require.JSONEq(t, string(openAPIDoc), string(data))
}
