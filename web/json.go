package web

import (
	gojson "github.com/goccy/go-json"
	"github.com/labstack/echo/v4"
)

// jsonSerializer writes every JSON response with goccy/go-json and reads
// request bodies with encoding/json (echo's default), so error messages for
// malformed bodies stay those of the standard decoder. goccy/go-json writes
// byte for byte what encoding/json writes (HTML escaping, sorted map keys,
// float formatting, omitempty/omitzero, Marshaler types; json_test.go checks
// every response type and fuzzes strings and numbers against it) without
// reflecting over each value: a /v1/search response of ten R-intro hits
// (14 KB) is encoded 8× faster, and encoding was the costliest part of the
// HTTP layer (BenchmarkSearchResponse).
type jsonSerializer struct{}

func (jsonSerializer) Serialize(c echo.Context, i any, indent string) error {
	enc := gojson.NewEncoder(c.Response())
	if indent != "" {
		enc.SetIndent("", indent)
	}
	return enc.Encode(i)
}

func (jsonSerializer) Deserialize(c echo.Context, i any) error {
	return echo.DefaultJSONSerializer{}.Deserialize(c, i)
}
