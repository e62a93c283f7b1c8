package web

import (
	"bytes"
	"encoding/json"
	"math"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	gojson "github.com/goccy/go-json"
	"github.com/labstack/echo/v4"
	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/acl"
	"github.com/citebook/citebook/qa"
)

// serialized is what a serializer writes for v, as a response body.
func serialized(t testing.TB, s echo.JSONSerializer, v any, indent string) []byte {
	e := echo.New()
	rec := httptest.NewRecorder()
	c := e.NewContext(httptest.NewRequest(http.MethodGet, "/", nil), rec)
	require.NoError(t, s.Serialize(c, v, indent))
	return rec.Body.Bytes()
}

// sameAsStandard fails unless jsonSerializer writes v exactly as echo's
// default (encoding/json) does, plain and indented (?pretty), and
// goccy/go-json's Marshal (the answer stream's events) as json.Marshal.
func sameAsStandard(t testing.TB, v any) {
	t.Helper()
	want, err := json.Marshal(v)
	require.NoError(t, err)
	got, err := gojson.Marshal(v)
	require.NoError(t, err)
	if !bytes.Equal(got, want) {
		t.Fatalf("Marshal: goccy/go-json wrote\n%s\nencoding/json wrote\n%s", got, want)
	}
	for _, indent := range []string{"", "  "} {
		want := serialized(t, echo.DefaultJSONSerializer{}, v, indent)
		got := serialized(t, jsonSerializer{}, v, indent)
		if !bytes.Equal(got, want) {
			t.Fatalf("indent %q: goccy/go-json wrote\n%s\nencoding/json wrote\n%s", indent, got, want)
		}
	}
}

// TestJSONMatchesStandard encodes every kind of response the API sends,
// over the real books' chunks, and requires the bytes encoding/json writes.
func TestJSONMatchesStandard(t *testing.T) {
	lib := books(t)
	var hits []citebook.Hit
	for _, id := range []string{"rintro", "moby"} {
		for i, c := range lib.chunks[id] {
			hits = append(hits, citebook.Hit{Chunk: c, Score: 1 / float64(i+3)})
		}
	}
	require.NotEmpty(t, hits)
	c0 := hits[0].Chunk
	when := time.Date(2026, 12, 1, 5, 30, 0, 123456789, time.UTC)
	ans := &qa.Answer{Answer: "Objects have a <mode> & a \"length\" [1].", Citations: []citebook.Citation{{
		N: 1, ChunkID: c0.ID, BookID: c0.BookID, BookTitle: "An Introduction to R", HeadingPath: c0.HeadingPath,
		Page: c0.PageStart, PrintedPage: "7", Quote: c0.Text[:40], CharStart: 0, CharEnd: 40,
		Boxes: []citebook.Box{}}}, Trace: qa.Trace{Question: "q", SubQueries: []string{"q"},
		Retrieved: []qa.TraceHit{{ChunkID: c0.ID, VectorScore: 0.1 + 0.2, Fused: 1e-7, Rerank: 1e21, Kept: true}},
		Dropped:   []qa.Dropped{{ChunkID: "x", Reason: "below_threshold"}},
		Context:   []string{c0.ID}, ContextTokens: 512, Model: "extractive",
		TimingsMS: map[string]float64{"retrieve": 1.25, "acl": 0.003, "fuse": 12345.678, "threshold": math.SmallestNonzeroFloat64}}}
	cases := map[string]any{
		"search":        map[string]any{"results": []qa.SearchResult{{Query: "q", Hits: hits}}},
		"search, none":  map[string]any{"results": []qa.SearchResult{}},
		"ask":           ans,
		"refused":       &qa.Answer{Refused: true, Citations: []citebook.Citation{}},
		"job, queued":   citebook.Job{ID: 7, BookID: "rintro", Status: citebook.JobQueued, Queued: when},
		"job, finished": citebook.Job{ID: 8, BookID: "rintro", Status: citebook.JobCompleted, Queued: when, Started: when, Finished: when.Add(time.Minute), Owner: citebook.JobOwner{Host: "h", PID: 42, Start: 9}, Heartbeat: when},
		"books":         map[string]any{"books": []citebook.Book{{ID: "rintro", Title: "R <intro>", Created: when}}},
		"grants":        map[string]any{"grants": []acl.Grant{{ID: 1, Tenant: "acme", BookID: "moby", Path: []string{"Chapter 1"}, SubjectKind: acl.SubjectUser, Subject: "bob", Effect: acl.Deny}}},
		"error":         errorBody{Error: errorDetail{Code: citebook.EFORBIDDEN, Message: "this action needs an admin token"}},
		"ready":         map[string]any{"ready": false, "checks": map[string]string{"vectors": "ok", "metadata": "down \u2028 <now>"}},
		"me":            citebook.Principal{Tenant: "acme", User: "alice", Groups: []string{"staff"}},
		"chunk":         map[string]any{"chunk": c0, "book_title": "t", "reader_page": 3},
	}
	for name, v := range cases {
		t.Run(name, func(t *testing.T) { sameAsStandard(t, v) })
	}
}

// FuzzJSONMatchesStandard feeds arbitrary text (invalid UTF-8, control
// characters, HTML, U+2028) and numbers through a search hit.
func FuzzJSONMatchesStandard(f *testing.F) {
	f.Add("plain text", "Chapter 1", 0.5, 3)
	f.Add("<script>&amp;\u2028\u2029\x00\x1f\"\\", "\xff\xfe bad utf-8 \xc3", 1e-7, -1)
	f.Add("数据框 data frame", "第一章", 1e21, 1<<40)
	f.Add("", "", math.Copysign(0, -1), 0)
	f.Fuzz(func(t *testing.T, text, heading string, score float64, n int) {
		if math.IsNaN(score) || math.IsInf(score, 0) {
			return // neither encoder writes these; both return an error
		}
		v := map[string]any{"results": []qa.SearchResult{{Query: heading, Hits: []citebook.Hit{{Score: score,
			Chunk: citebook.Chunk{ID: text, HeadingPath: []string{heading, text}, Text: text, PageStart: n, Ordinal: n}}}}}}
		sameAsStandard(t, v)
	})
}
