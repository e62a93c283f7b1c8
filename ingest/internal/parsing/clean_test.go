package parsing

import "testing"

func TestClean(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"empty", "", ""},
		{"crlf", "a\r\nb\rc", "a\nb\nc"},
		{"bom", "\uFEFFTitle", "Title"},
		{"tabs and nbsp", "a\tb\u00a0c\u2009d", "a b c d"},
		{"space runs", "a    b  \n  c", "a b\nc"},
		{"blank runs", "a\n\n\n\n\nb", "a\n\nb"},
		{"blank lines of spaces", "a\n \n\t\n\nb", "a\n\nb"},
		{"trim ends", "\n\n a \n\n", "a"},
		{"hyphen join", "an exam-\nple of it", "an example\nof it"},
		{"hyphen join whole line", "exam-\nple", "example"},
		{"hyphen chain", "a co-\nop-\neration b", "a cooperation\nb"},
		{"hyphen kept before capital", "pre-\nWar", "pre-\nWar"},
		{"hyphen kept before digit", "ISO-\n8859", "ISO-\n8859"},
		{"dash kept", "word -\nnext", "word -\nnext"},
		{"nfc", "e\u0301", "\u00e9"},
		{"control stripped", "a\x00b\x07c\x1bd", "abcd"},
		{"zero width", "a\u200bb", "ab"},
		{"ideographic space", "中文\u3000文本", "中文 文本"},
		{"chinese untouched", "第一章。你好！", "第一章。你好！"},
		{"idempotent input", "already clean\n\ntext", "already clean\n\ntext"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := Clean(tt.in)
			if got != tt.want {
				t.Fatalf("Clean(%q) = %q, want %q", tt.in, got, tt.want)
			}
			if again := Clean(got); again != got {
				t.Fatalf("Clean not idempotent: %q -> %q", got, again)
			}
		})
	}
}

func TestCleanPreformatted(t *testing.T) {
	tests := []struct {
		name, in, want string
	}{
		{"keeps indentation", "func f() {\r\n\treturn 1  \r\n}", "func f() {\n\treturn 1\n}"},
		{"keeps blank lines", "a\n\n\n\nb", "a\n\n\n\nb"},
		{"strips control", "\n\na\x00b\n\n", "ab"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := CleanPreformatted(tt.in); got != tt.want {
				t.Fatalf("CleanPreformatted(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
}
