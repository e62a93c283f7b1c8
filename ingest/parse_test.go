package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

func TestParseDispatch(t *testing.T) {
	md, err := os.ReadFile("testdata/lighthouse.md")
	if err != nil {
		t.Fatal(err)
	}
	tests := []struct {
		name   string
		rel    string // corpus file, or "" to use data
		data   []byte
		format citebook.Format
		code   string
		msg    string
	}{
		{name: "moby.txt", rel: "books/mobydick.txt", format: citebook.FormatText},
		{name: "book.epub", rel: "books/policy.epub", format: citebook.FormatEPUB},
		{name: "renamed.bin", rel: "books/debmake-doc.zh-cn.epub", format: citebook.FormatEPUB}, // EPUB mimetype wins over the name
		{name: "notes.md", data: md, format: citebook.FormatMarkdown},
		{name: "notes.markdown", data: md, format: citebook.FormatMarkdown},
		{name: "pdf-notes.md", data: []byte("# Notes\n\nA PDF file starts with %PDF-1.7 and a binary comment."), format: citebook.FormatMarkdown},
		{name: "README", data: []byte("Just text\n\nwith paragraphs."), format: citebook.FormatText},
		{name: "empty.txt", data: []byte{}, code: citebook.EINVALID, msg: "empty file"},
		{name: "image.png", data: []byte("\x89PNG\r\n\x1a\n\x00\x00"), code: citebook.EINVALID, msg: "citebook reads PDF, EPUB"},
		{name: "fake.pdf", data: []byte("not really"), code: citebook.EINVALID, msg: "not a PDF"},
		{name: "fake.epub", data: []byte("not really"), code: citebook.EINVALID, msg: "not a zip"},
		{name: "archive.zip", data: zipOf(t, "a.txt", "hello"), code: citebook.EINVALID, msg: "not an EPUB"},
		{name: "binary.txt", data: []byte("\x00\x01\x02binary"), code: citebook.EINVALID, msg: "unsupported format"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			data := tt.data
			if tt.rel != "" {
				var err error
				if data, err = os.ReadFile(corpus.Path(t, tt.rel)); err != nil {
					t.Fatal(err)
				}
			}
			doc, err := Parse(context.Background(), tt.name, bytes.NewReader(data), int64(len(data)))
			if tt.code != "" {
				if citebook.ErrorCode(err) != tt.code || !strings.Contains(citebook.ErrorMessage(err), tt.msg) {
					t.Fatalf("err = %v, want %s mentioning %q", err, tt.code, tt.msg)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if doc.Format != tt.format {
				t.Errorf("format %q, want %q", doc.Format, tt.format)
			}
		})
	}
}

func TestParseFile(t *testing.T) {
	doc, err := ParseFile(context.Background(), corpus.Path(t, "books/debian-edu-bullseye-manual.epub"))
	if err != nil {
		t.Fatal(err)
	}
	if n := len(chapters(doc)); n != 28 || chapters(doc)[2] != "结构" {
		t.Errorf("%d chapters, third %q", n, chapters(doc)[2])
	}
	if _, err := ParseFile(context.Background(), filepath.Join(t.TempDir(), "missing.txt")); citebook.ErrorCode(err) != citebook.ENOTFOUND {
		t.Errorf("missing file: %v", err)
	}
	if _, err := ParseFile(context.Background(), t.TempDir()); citebook.ErrorCode(err) != citebook.EINVALID {
		t.Errorf("directory: %v", err)
	}
}
