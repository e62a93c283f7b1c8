package analysis

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestSentences(t *testing.T) {
	tests := []struct {
		name string
		text string
		want []string
	}{
		{"latin", "R is a language. It has vectors!  Does it? Yes (mostly.) End", []string{"R is a language.", "It has vectors!", "Does it?", "Yes (mostly.)", "End"}},
		{"decimals and identifiers stay whole", "Use as.integer(x) on 3.14 values. Done.", []string{"Use as.integer(x) on 3.14 values.", "Done."}},
		{"chinese", "这是第一句。这是“第二句。”第三句！还有吗？", []string{"这是第一句。", "这是“第二句。”", "第三句！", "还有吗？"}},
		{"blank line", "Heading Line\n\nBody text. More", []string{"Heading Line", "Body text.", "More"}},
		{"abbreviations", "Index matrices must be numerical: any other form of matrix (e.g. a character matrix) is treated as a vector. See Fig. 2 and cf. Section 3. It works, i.e. mostly.", []string{"Index matrices must be numerical: any other form of matrix (e.g. a character matrix) is treated as a vector.", "See Fig. 2 and cf. Section 3.", "It works, i.e. mostly."}},
		{"a web address the PDF wrapped", "To load a particular package (e.g., the boot (https://CRAN. R-project.org/package=boot) package), use library(boot). Sites (via https://CRAN.R-project. org) and elsewhere. See https://example.org. The next one, www.gnu. org/x is it.", []string{"To load a particular package (e.g., the boot (https://CRAN. R-project.org/package=boot) package), use library(boot).", "Sites (via https://CRAN.R-project. org) and elsewhere.", "See https://example.org.", "The next one, www.gnu. org/x is it."}},
		{"initials", "It was written by Philip A. Nelson, and J. R. Tolkien wrote others. See Appendix A. The end.", []string{"It was written by Philip A. Nelson, and J. R. Tolkien wrote others.", "See Appendix A.", "The end."}},
		{"blank line inside a sentence", "growth of\n\n12.5% at the mid-point • Company secured 9.5%\n\nof equity • Next", []string{"growth of\n\n12.5% at the mid-point", "Company secured 9.5%\n\nof equity", "Next"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			require.Equal(t, tt.want, Sentences(tt.text))
		})
	}
}
