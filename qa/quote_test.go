package qa_test

import (
	"context"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/qa"
)

// TestQuoteRunsThroughAWrappedAddress: R-intro's PDF wraps a web address
// at its period ("(https://CRAN. R-project.org/package=boot)"); the quote
// answering how to load a package ran to "(https://CRAN." and stopped,
// before the command. It now holds the whole sentence.
func TestQuoteRunsThroughAWrappedAddress(t *testing.T) {
	lib := shared(t)
	p := lib.pipeline(t, qa.NewExtractive(analysis.Terms), qa.Options{})
	a, err := p.Ask(context.Background(), alice, qa.Request{Question: "How do I install and load a package?", BookIDs: []string{bookR}}, nil)
	require.NoError(t, err)
	require.False(t, a.Refused, "%+v", a.Trace.Answerability)
	require.NotEmpty(t, a.Citations)
	require.Contains(t, a.Citations[0].Quote, "(https://CRAN. R-project.org/package=boot) package")
	require.Contains(t, a.Answer, "library(boot)")
}
