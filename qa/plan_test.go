package qa_test

import (
	"context"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

func TestSplitIntoSubQueries(t *testing.T) {
	lib := shared(t)
	replies := map[string]string{
		"ok":      "```json\n{\"queries\":[\"How do I change the length of an object?\",\"What is a list in R?\", \"how do i change the length of an object and what is a list?\"]}\n```",
		"garbage": "I would search for lists.",
	}
	for name, content := range replies {
		t.Run(name, func(t *testing.T) {
			srv, calls := scriptedServer(t, func([]scriptPassage, string) string { return content })
			pl, err := qa.NewLLMPlanner(qa.ModelConfig{Provider: "openai", URL: srv.URL + "/v1", Model: "scripted", Client: srv.Client()})
			require.NoError(t, err)
			p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{},
				func(d *qa.Deps) { d.Planner = pl })
			q := "How do I change the length of an object and what is a list?"

			res, err := p.Search(context.Background(), alice, qa.Request{Question: q, Split: true, K: 4})
			require.NoError(t, err)
			if name == "garbage" {
				// A planner that fails costs the split, not the search.
				require.Len(t, res, 1)
				require.Equal(t, q, res[0].Query)
				return
			}
			// The original question comes first; a sub-query repeating it
			// (up to case) is dropped.
			require.Equal(t, []string{q, "How do I change the length of an object?", "What is a list in R?"},
				[]string{res[0].Query, res[1].Query, res[2].Query})
			require.Len(t, res, 3)
			for _, r := range res {
				require.NotEmpty(t, r.Hits, r.Query)
			}

			a, err := p.Ask(context.Background(), alice, qa.Request{Question: q, Split: true}, nil)
			require.NoError(t, err)
			require.Len(t, a.Trace.SubQueries, 3)
			queries := map[int]bool{}
			for _, h := range a.Trace.Retrieved {
				queries[h.Query] = true
			}
			require.Equal(t, map[int]bool{0: true, 1: true, 2: true}, queries)
			require.False(t, a.Refused, a.Answer)
			require.Equal(t, int32(2), calls.Load(), "one planning call per request")

			a, err = p.Ask(context.Background(), alice, qa.Request{Question: q}, nil)
			require.NoError(t, err)
			require.Equal(t, []string{q}, a.Trace.SubQueries, "no split unless asked")
		})
	}
}

// TestSplitWithoutModel: with no planner, a question that plainly asks two
// things (a second question, "; ", "and then", ", and how …") is searched
// as its parts too, answered when each part has its own evidence, with a
// passage per part; a bare "and" or a second verb is no split, and a part
// the book never covers keeps the question refused. Over real books.
func TestSplitWithoutModel(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, c := range []struct {
		who      citebook.Principal
		book     string
		question string
		parts    int   // sub-queries beside the question
		pages    []int // cited pages; nil: refused
	}{
		{alice, bookR, "How do I read a data frame from a file with read.table, and how do I draw a histogram with hist?", 2, []int{40, 43}},
		{alice, bookR, "How do I read a data frame from a file with read.table? How do I draw a histogram?", 2, []int{40}},
		// R-intro never explains a database-style merge: that part has no
		// evidence, and the histogram part alone does not answer it.
		{alice, bookR, "How do I merge two data frames on a shared ID column, and how do I draw a histogram?", 2, nil},
		{alice, bookR, "How do I change the length of an object and what is a list?", 0, []int{}},
		{alice, bookR, "To solve Ax = b, should I invert A first and then multiply the inverse by b?", 0, []int{}},
		{lin, bookZH, "LaTeX 默认一页上最多放几个浮动体？页面顶部和底部又各能放几个？", 2, []int{}},
	} {
		t.Run(c.question, func(t *testing.T) {
			a, err := p.Ask(context.Background(), c.who, qa.Request{Question: c.question, BookIDs: []string{c.book}}, nil)
			require.NoError(t, err)
			require.Len(t, a.Trace.SubQueries, 1+c.parts, "%q", a.Trace.SubQueries)
			require.Equal(t, c.question, a.Trace.SubQueries[0])
			if c.pages == nil {
				require.True(t, a.Refused, a.Answer)
				return
			}
			require.False(t, a.Refused, "%+v", a.Trace.Answerability)
			if len(c.pages) == 0 {
				return
			}
			var got []int
			for _, cit := range a.Citations {
				got = append(got, cit.Page)
			}
			require.Equal(t, c.pages, got)
		})
	}
}

// A planner whose model stalls is cut off at the configured bound, like
// every other model call (before, its call had no bound of its own), and
// the search runs on the question alone.
func TestPlannerCallIsBounded(t *testing.T) {
	lib := shared(t)
	cut := make(chan bool, 1)
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.Copy(io.Discard, r.Body) // so the server notices the client leave
		select {
		case <-r.Context().Done():
			cut <- true
		case <-time.After(20 * time.Second):
			cut <- false
		}
	}))
	t.Cleanup(srv.Close)
	pl, err := qa.NewLLMPlanner(qa.ModelConfig{Provider: "openai", URL: srv.URL + "/v1", Model: "stalled",
		Client: srv.Client(), Timeout: 100 * time.Millisecond})
	require.NoError(t, err)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{}, func(d *qa.Deps) { d.Planner = pl })
	q := "How do I change the length of an object and what is a list?"
	res, err := p.Search(context.Background(), alice, qa.Request{Question: q, Split: true, K: 4})
	require.NoError(t, err)
	require.Len(t, res, 1)
	require.Equal(t, q, res[0].Query)
	require.True(t, <-cut, "the planner's call was not cut off")
}
