package ingest

import (
	"bytes"
	"context"
	"os"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

// fuzzSeed adds a corpus file as a seed when the corpus is present; fuzzing
// still runs on the inline seeds without it.
func fuzzSeed(f *testing.F, rel string) {
	if os.Getenv("CITEBOOK_CORPUS") == "" {
		return
	}
	data, err := os.ReadFile(corpus.Path(f, rel))
	if err != nil {
		f.Fatal(err)
	}
	f.Add(data)
}

// checkFuzzResult holds for any input: either an application error with
// a code, or a document whose chunks respect the budget.
func checkFuzzResult(t *testing.T, tok *Tokenizer, doc *Document, err error) {
	if err != nil {
		if citebook.ErrorCode(err) == citebook.EINTERNAL {
			t.Fatalf("uncoded error: %v", err)
		}
		return
	}
	full := FullText(doc)
	if len(full) > 16<<10 {
		return // chunking is exercised by its own tests; keep fuzzing fast
	}
	opt := ChunkOptions{MinTokens: 32, MaxTokens: 64, Overlap: 8}
	_, chunks := Split(doc, "fuzz", tok, opt)
	for _, c := range chunks {
		if c.Tokens > opt.MaxTokens || full[c.CharStart:c.CharEnd] != c.Text {
			t.Fatalf("bad chunk %+v", c)
		}
	}
}

func FuzzParseEPUB(f *testing.F) {
	fuzzSeed(f, "books/debmake-doc.zh-cn.epub")
	f.Add(zipOf(f, "META-INF/container.xml", testContainer, "OPS/book.opf", testOPF, "OPS/nav.xhtml", testNav, "OPS/c1.xhtml", testC1))
	tok := testTokenizer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseEPUB(context.Background(), bytes.NewReader(data), int64(len(data)))
		checkFuzzResult(t, tok, doc, err)
	})
}

func FuzzParseMarkdown(f *testing.F) {
	if data, err := os.ReadFile("testdata/lighthouse.md"); err == nil {
		f.Add(data)
	}
	f.Add([]byte("# A\n\ntext\n\nB\n===\n\n```\ncode\n```\n"))
	tok := testTokenizer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseMarkdown(context.Background(), data)
		checkFuzzResult(t, tok, doc, err)
	})
}

func FuzzParseText(f *testing.F) {
	if os.Getenv("CITEBOOK_CORPUS") != "" {
		data, err := os.ReadFile(corpus.Path(f, "books/mobydick.txt"))
		if err != nil {
			f.Fatal(err)
		}
		f.Add(data[:64<<10])
	}
	f.Add([]byte("Title: X\n*** START OF THE PROJECT GUTENBERG EBOOK X ***\n\nCHAPTER 1. A.\n\nText.\n*** END OF THE PROJECT GUTENBERG EBOOK X ***\n"))
	tok := testTokenizer(f)
	f.Fuzz(func(t *testing.T, data []byte) {
		doc, err := ParseText(context.Background(), data)
		checkFuzzResult(t, tok, doc, err)
	})
}
