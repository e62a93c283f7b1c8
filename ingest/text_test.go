package ingest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

func TestParseTextMobyDick(t *testing.T) {
	data, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseText(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "Moby Dick; or The Whale" {
		t.Errorf("title = %q", doc.Title)
	}
	if doc.Language != "en" || doc.Format != citebook.FormatText || doc.Pages != 0 {
		t.Errorf("language %q format %q pages %d", doc.Language, doc.Format, doc.Pages)
	}
	var chapters []string
	front := map[string]bool{}
	for _, s := range doc.Sections {
		h := s.HeadingPath[0]
		if strings.HasPrefix(h, "CHAPTER ") || h == "Epilogue" {
			chapters = append(chapters, h)
		} else if len(chapters) == 0 {
			front[h] = true
		} else {
			t.Errorf("section %q after chapter 1 is not a chapter", h)
		}
	}
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"chapters incl. Epilogue", len(chapters), 136},
		{"chapter 1", chapters[0], "CHAPTER 1. Loomings."},
		{"chapter 3", chapters[2], "CHAPTER 3. The Spouter-Inn."},
		{"chapter 135", chapters[134], "CHAPTER 135. The Chase.--Third Day."},
		{"last", chapters[135], "Epilogue"},
		{"ETYMOLOGY front matter", front["ETYMOLOGY."], true},
		{"EXTRACTS front matter", front["EXTRACTS."], true},
	}
	for _, tt := range tests {
		if tt.got != tt.want {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
	full := FullText(doc)
	for _, banned := range []string{"Project Gutenberg-tm", "\r", "\uFEFF", "*** START OF", "*** END OF"} {
		if strings.Contains(full, banned) {
			t.Errorf("full text still contains %q", banned)
		}
	}
	// Lines inside a paragraph are joined with spaces.
	if !strings.Contains(full, "Call me Ishmael. Some years ago--never mind how long precisely--having little or no money") {
		t.Errorf("first paragraph of chapter 1 not joined into one line")
	}
}

func TestParseTextPlain(t *testing.T) {
	tests := []struct {
		name      string
		in        string
		title     string
		headings  []string
		blocks    int
		wantError bool
	}{
		{name: "no headings", in: "A title line\n\nFirst para\nwraps here.\n\nSecond.", title: "A title line", headings: []string{"A title line"}, blocks: 3},
		{name: "chapters", in: "Book\n\n\nChapter I\n\nOne.\n\nChapter II\n\nTwo.\n", title: "Book", headings: []string{"Book", "Chapter I", "Chapter II"}, blocks: 5},
		{name: "chapter word inside paragraph", in: "Intro\nChapter 2 is cited here\n", headings: []string{"Front matter"}, blocks: 1},
		{name: "chinese", in: "第一段。\n\n第二段。", title: "第一段。", headings: []string{"第一段。"}, blocks: 2},
		{name: "latin-1", in: "Caf\xe9 cr\xe8me\n\nna\xefve text.", title: "Café crème", headings: []string{"Café crème"}, blocks: 2},
		{name: "empty", in: "", wantError: true},
		{name: "blank only", in: "\n\n  \n", wantError: true},
		{name: "binary", in: "\x00\x01\x02\x03\xff\xfe", wantError: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseText(context.Background(), []byte(tt.in))
			if tt.wantError {
				if citebook.ErrorCode(err) != citebook.EINVALID {
					t.Fatalf("err = %v, want invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Title != tt.title {
				t.Errorf("title = %q, want %q", doc.Title, tt.title)
			}
			var heads []string
			n := 0
			for _, s := range doc.Sections {
				heads = append(heads, citebook.HeadingString(s.HeadingPath))
				n += len(s.Blocks)
			}
			if strings.Join(heads, "|") != strings.Join(tt.headings, "|") || n != tt.blocks {
				t.Errorf("headings %q blocks %d, want %q %d", heads, n, tt.headings, tt.blocks)
			}
		})
	}
}

func TestJoinLines(t *testing.T) {
	tests := []struct {
		in   []string
		want string
	}{
		{[]string{"one", "two"}, "one two"},
		{[]string{"the royal-", "mast"}, "the royal-mast"},
		{[]string{"precisely--", "having"}, "precisely--having"},
		{[]string{"a word -", "spaced"}, "a word - spaced"},
		{[]string{"-", "x"}, "- x"},
		{[]string{"single"}, "single"},
	}
	for _, tt := range tests {
		if got := joinLines(tt.in); got != tt.want {
			t.Errorf("joinLines(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}
