package qa_test

import (
	"context"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/testlib"
	"github.com/citebook/citebook/qa"
)

// TestAnswerTypeClockTime: a question asking for a time of day is answered
// only from a passage that states one. A 10-K holds "time" and "served"
// ("he served as … until that time") and answered "What time is dinner
// served today?" before; Walden states when Thoreau hoed his beans.
func TestAnswerTypeClockTime(t *testing.T) {
	l := testlib.Open(t, testlib.Config(t.TempDir()))
	testlib.Index(t, l, citebook.BookInput{BookID: "3m-2018", Tenant: "lib", Path: corpus.Path(t, "financebench/pdfs/3M_2018_10K.pdf")})
	testlib.Index(t, l, citebook.BookInput{BookID: "walden", Tenant: "lib", Path: corpus.Path(t, "books/WaldenFull.pdf")})
	p := testlib.Pipeline(t, l)
	reader := citebook.Principal{Tenant: "lib", User: "r", Admin: true}
	for _, tc := range []struct {
		book, question string
		code           string // the answerability's code
		quote          string // a cited quote holds it
	}{
		{"3m-2018", "What time is dinner served today?", qa.CodeNoAnswer, ""},
		{"walden", "What time is dinner served today?", qa.CodeNoAnswer, ""},
		{"walden", "From what time in the morning did Thoreau hoe his beans?", qa.CodeAnswered, "o’clock"},
	} {
		t.Run(tc.book+"/"+tc.question, func(t *testing.T) {
			a, err := p.Ask(context.Background(), reader, qa.Request{Question: tc.question, BookIDs: []string{tc.book}}, nil)
			require.NoError(t, err)
			require.Equal(t, tc.code, a.Trace.Answerability.Code, "%s %+v", a.Answer, a.Trace.Answerability)
			require.Equal(t, tc.code != qa.CodeAnswered, a.Refused, a.Answer)
			if a.Refused {
				require.Empty(t, a.Citations)
				require.NotEmpty(t, a.Trace.Answerability.Reason)
				return
			}
			var found bool
			for _, c := range a.Citations {
				found = found || strings.Contains(c.Quote, tc.quote)
			}
			require.True(t, found, "%+v", a.Citations)
		})
	}
}
