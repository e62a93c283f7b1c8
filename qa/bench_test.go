package qa_test

import (
	"context"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
	"github.com/citebook/citebook/citation"
	"github.com/citebook/citebook/qa"
)

// BenchmarkAskExtractive is one question end to end without a model:
// ACL, embedding, hybrid retrieval over R-intro, expansion, rerank,
// extraction and verification. Target: well under 50 ms on 2 cores.
func BenchmarkAskExtractive(b *testing.B) {
	lib := shared(b)
	p := lib.pipeline(b, qa.NewExtractive(analysis.Terms), qa.Options{})
	ctx := context.Background()
	b.ResetTimer()
	for b.Loop() {
		a, err := p.Ask(ctx, alice, qa.Request{Question: "How do I change the length of an object?"}, nil)
		if err != nil || a.Refused {
			b.Fatalf("ask: %v %+v", err, a)
		}
	}
}

// BenchmarkSearch is retrieval only, the "retrieval as a tool" path.
func BenchmarkSearch(b *testing.B) {
	lib := shared(b)
	p := lib.pipeline(b, qa.NewExtractive(analysis.Terms), qa.Options{})
	ctx := context.Background()
	for b.Loop() {
		if _, err := p.Search(ctx, alice, qa.Request{Question: "How are missing values represented?"}); err != nil {
			b.Fatal(err)
		}
	}
}

// BenchmarkVerify checks three citations against 1 KB chunks.
func BenchmarkVerify(b *testing.B) {
	lib := shared(b)
	cs := lib.chunks(b, bookR)[40:50]
	ctxChunks := map[string]citebook.Chunk{}
	var sts []citation.Statement
	for _, c := range cs {
		ctxChunks[c.ID] = c
		if s := firstSentence(c.Text); s != "" && len(sts) < 3 {
			sts = append(sts, citation.Statement{Text: "x", Citations: []citation.Claim{{ChunkID: c.ID, Quote: s}}})
		}
	}
	for b.Loop() {
		if r := citation.Verify(sts, ctxChunks, nil, nil, citation.SupportCheck{}); r.Refused {
			b.Fatal("refused")
		}
	}
}
