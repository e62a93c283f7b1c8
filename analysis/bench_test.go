package analysis_test

import (
	"os"
	"testing"

	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/internal/corpus"
)

// BenchmarkEachTerm segments Moby Dick (English, a few accented words) and
// a Chinese book's text with the lexical index's rule (EachTerm: sibilant
// plurals, accents folded) beside the builtin embedder's frozen one
// (EachTermV1) in the same run, so the cost of the newer rules shows as a
// ratio: go test -bench EachTerm ./analysis.
func BenchmarkEachTerm(b *testing.B) {
	for _, book := range []string{"books/mobydick.txt", "cmrc2018/cmrc2018_trial.json"} {
		raw, err := os.ReadFile(corpus.Path(b, book))
		if err != nil {
			b.Fatal(err)
		}
		text := string(raw)
		for _, c := range []struct {
			name string
			each func(string, func([]byte))
		}{{"terms", analysis.EachTerm}, {"v1", analysis.EachTermV1}} {
			b.Run(book+"/"+c.name, func(b *testing.B) {
				b.SetBytes(int64(len(text)))
				n := 0
				for b.Loop() {
					c.each(text, func([]byte) { n++ })
				}
			})
		}
	}
}
