package qa

import (
	"testing"

	"github.com/citebook/citebook/analysis"
)

// BenchmarkHowWords: howWords runs twice a query (key terms, threshold);
// most questions ask no "how"/"who" and framed skips the three patterns.
func BenchmarkHowWords(b *testing.B) {
	qs := []string{"Which characters may a package name contain?", "What does the apply function do?",
		"How do I read data from a file?", "Why was the sdbm library written, and by whom?",
		"Maintainer scripts are not guaranteed to run with a controlling terminal", "什么是导言区？"}
	for b.Loop() {
		for _, q := range qs {
			howWords(q, analysis.Terms)
		}
	}
}
