package ingest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/citebook/citebook"
)

func TestParseMarkdownFixture(t *testing.T) {
	data, err := os.ReadFile("testdata/lighthouse.md")
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseMarkdown(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	if doc.Title != "The Keeper's Log" || doc.Format != citebook.FormatMarkdown || doc.Language != "en" {
		t.Errorf("title %q format %q language %q", doc.Title, doc.Format, doc.Language)
	}
	var got []string
	for _, s := range doc.Sections {
		got = append(got, citebook.HeadingString(s.HeadingPath))
	}
	want := []string{"The Keeper's Log", "Arrival", "Arrival > The Lamp Room", "Arrival > Storms", "Second Book", "Second Book > Deep Heading"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("sections\n got %q\nwant %q", got, want)
	}
	var outline []string
	for _, o := range doc.Outline {
		outline = append(outline, strings.Repeat("  ", o.Level)+o.Title)
	}
	wantOutline := []string{"Arrival", "  The Lamp Room", "  Storms", "Second Book", "  Deep Heading"}
	if strings.Join(outline, "|") != strings.Join(wantOutline, "|") {
		t.Errorf("outline %q, want %q", outline, wantOutline)
	}
	lamp := doc.Sections[2].Blocks
	texts := make([]string, len(lamp))
	for i, b := range lamp {
		texts[i] = b.Text
	}
	wantLamp := []string{
		"The Lamp Room",
		"The lamp is cleaned every morning before the fog comes in.",
		"- Trim the wick.", "- Polish the lens.", "- Record the oil level.",
		"```sh\n# the oil check, as a script\n\n    level=$(read_gauge)\necho \"$level\"\n```",
	}
	if strings.Join(texts, "|") != strings.Join(wantLamp, "|") {
		t.Errorf("lamp room blocks\n got %q\nwant %q", texts, wantLamp)
	}
	if s := doc.Sections[1].Blocks[1].Text; s != "The boat left me on the rocks at noon. The tower was taller than the letters had promised, and the stairs were narrower." {
		t.Errorf("paragraph lines not joined: %q", s)
	}
}

func TestParseMarkdownCases(t *testing.T) {
	tests := []struct {
		name     string
		in       string
		title    string
		sections []string
		wantErr  bool
	}{
		{name: "first h1 is title", in: "intro\n\n# Real Title\n\ntext\n\n# Other\n\nmore", title: "Real Title", sections: []string{"Front matter", "Real Title", "Other"}},
		{name: "thematic break is not a heading", in: "# A\n\n---\n\ntext", title: "A", sections: []string{"A"}},
		{name: "hash without space is text", in: "#hashtag\n", sections: []string{"Front matter"}},
		{name: "unclosed fence keeps rest", in: "# A\n\n```\ncode\n# not a heading", title: "A", sections: []string{"A"}},
		{name: "unclosed front matter", in: "---\ntitle: x\n\nbody", sections: []string{"Front matter"}},
		{name: "empty", in: "", wantErr: true},
		{name: "only blank", in: "\n\n", wantErr: true},
		{name: "invalid utf8", in: "\xff\xfe", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseMarkdown(context.Background(), []byte(tt.in))
			if tt.wantErr {
				if citebook.ErrorCode(err) != citebook.EINVALID {
					t.Fatalf("err = %v, want invalid", err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			var got []string
			for _, s := range doc.Sections {
				got = append(got, citebook.HeadingString(s.HeadingPath))
			}
			if doc.Title != tt.title || strings.Join(got, "|") != strings.Join(tt.sections, "|") {
				t.Errorf("title %q sections %q, want %q %q", doc.Title, got, tt.title, tt.sections)
			}
		})
	}
}
