package qa_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// TestRespell asks R-intro, which prints American spellings, in British
// ones: the question is searched in the book's spelling and answered from
// the sentence that holds it, the trace says which words changed, and a
// word the book holds as written (R-intro prints "colour" too) stays.
func TestRespell(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	for _, tt := range []struct {
		q, respelled, quote string
	}{
		{"In the past, how was genuinely Poisson data often analysed?", "analysed → analyzed", "analyzed as gaussian data"},
		{"Which plotting character produces points that are centred?", "centred → centered", "centered points"},
	} {
		a, err := p.Ask(context.Background(), alice, qa.Request{Question: tt.q, BookIDs: []string{bookR}}, nil)
		require.NoError(t, err)
		require.Equal(t, []string{tt.respelled}, a.Trace.Respelled, tt.q)
		require.False(t, a.Refused, "%s: %+v", tt.q, a.Trace.Answerability)
		var quotes []string
		for _, c := range a.Citations {
			quotes = append(quotes, c.Quote)
		}
		require.Contains(t, strings.Join(quotes, " "), tt.quote, tt.q)
	}
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "How do I set the colour of the plotted points?", BookIDs: []string{bookR}}, nil)
	require.NoError(t, err)
	require.Empty(t, a.Trace.Respelled, "the book holds “colour” as written")
}
