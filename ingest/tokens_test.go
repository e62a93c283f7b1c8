package ingest

import (
	"os"
	"testing"

	"github.com/citebook/citebook/internal/corpus"
)

func TestTokenizerCount(t *testing.T) {
	tok, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		in   string
		want int
	}{
		{"", 0},
		{"hello world", 2},
		{"Call me Ishmael.", 6},
		{"<|endoftext|>", 7}, // special tokens in book text are ordinary text
		// Pieces of cl100k's split pattern, where a reimplementation would
		// drift first: digit runs, contractions, whitespace runs, code, CJK.
		{"12345678", 3},
		{"I'LL don't WE'RE", 7},
		{"    \n\t\n", 2},
		{"x <- c(1, 2, 3)\n\n\n  y", 14},
		{"$ sudo apt-get install -y poppler-utils\n", 11},
		{"naïve café — “quoted”", 8},
		{"电子邮件地址", 5},
	}
	for _, tt := range tests {
		if got := tok.Count(tt.in); got != tt.want {
			t.Errorf("Count(%q) = %d, want %d", tt.in, got, tt.want)
		}
	}
	// Chinese costs roughly one token per character or more, never zero.
	if n := tok.Count("电子邮件地址"); n < 3 || n > 12 {
		t.Errorf("Count(Chinese) = %d, want 3..12", n)
	}
}

func BenchmarkTokenizerCount(b *testing.B) {
	data, err := os.ReadFile(corpus.Path(b, "books/mobydick.txt"))
	if err != nil {
		b.Fatal(err)
	}
	text := string(data[:200000])
	tok, err := NewTokenizer()
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(text)))
	for b.Loop() {
		tok.Count(text)
	}
}
