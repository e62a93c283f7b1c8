package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"unicode/utf16"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/hostile"
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
		{name: "binary.txt", data: []byte("\x00\x01\x02binary"), code: citebook.EINVALID, msg: "binary file"},
		{name: "nul.txt", data: []byte("Text\x00 with a NUL byte in it\n"), code: citebook.EINVALID, msg: "binary file"},
		{name: "late-nul.txt", data: append(bytes.Repeat([]byte("Plain words. "), 200), 0, 1, 2), code: citebook.EINVALID, msg: "binary file"},
		{name: "binary.md", data: []byte("\x7fELF\x02\x01\x01\x00\x00\x00"), code: citebook.EINVALID, msg: "binary file"},
		{name: "utf16le.txt", data: utf16Text(false, "Chapter 1\n\nCafé au lait, naïve façade.\n"), format: citebook.FormatText},
		{name: "utf16be.txt", data: utf16Text(true, "Chapter 1\n\nCafé au lait, naïve façade.\n"), format: citebook.FormatText},
		{name: "utf16.md", data: utf16Text(false, "# Café\n\nNaïve façade.\n"), format: citebook.FormatMarkdown},
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

// utf16Text encodes s as UTF-16 with a byte-order mark, as Windows
// Notepad saves "Unicode" text.
func utf16Text(bigEndian bool, s string) []byte {
	var b []byte
	put := func(u uint16) {
		if bigEndian {
			b = append(b, byte(u>>8), byte(u))
		} else {
			b = append(b, byte(u), byte(u>>8))
		}
	}
	put(0xfeff)
	for _, u := range utf16.Encode([]rune(s)) {
		put(u)
	}
	return b
}

func TestParseUTF16Text(t *testing.T) {
	for _, be := range []bool{false, true} {
		data := utf16Text(be, "Chapter 1\n\nCafé au lait, naïve façade.\n")
		doc, err := Parse(context.Background(), "u.txt", bytes.NewReader(data), int64(len(data)))
		if err != nil {
			t.Fatal(err)
		}
		if got := FullText(doc); !strings.Contains(got, "Café au lait, naïve façade.") {
			t.Errorf("big endian %v: text %q", be, got)
		}
	}
}

// TestSniff: plainly bad uploads are refused by the cheap check with the
// error the parse would end with; good books pass it.
func TestSniff(t *testing.T) {
	text := "BT /F1 12 Tf 72 700 Td (A page.) Tj ET"
	page := []string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		"<< /Length " + strconv.Itoa(len(text)) + " >>\nstream\n" + text + "\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	good := hostile.PDF(page, "")
	cases := []struct {
		name string
		data []byte
		code string
		msg  string
	}{
		{"book.pdf", good, "", ""},
		{"notes.md", []byte("# Notes\n\nSome text.\n"), "", ""},
		{"u.txt", utf16Text(false, "Hello\n"), "", ""},
		{"empty.pdf", nil, citebook.EINVALID, "empty"},
		{"image.png", []byte("\x89PNG\r\n\x1a\n\x00\x00"), citebook.EINVALID, "unsupported format"},
		{"b.txt", []byte("a\x00b\x00c\x00"), citebook.EINVALID, "binary file"},
		{"fake.pdf", []byte("hello"), citebook.EINVALID, "not a PDF"},
		{"truncated.pdf", good[:len(good)/2], citebook.EINVALID, "truncated"},
		{"locked.pdf", hostile.PDF(page, "/Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >> /ID [<0102> <0102>]"), citebook.EINVALID, "encrypted"},
		{"archive.zip", zipOf(t, "a.txt", "hello"), citebook.EINVALID, "not an EPUB"},
		{"broken.epub", []byte("PK\x03\x04 not really a zip"), citebook.EINVALID, "EPUB"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			err := Sniff(context.Background(), c.name, bytes.NewReader(c.data), int64(len(c.data)))
			if c.code == "" {
				if err != nil {
					t.Fatal(err)
				}
				return
			}
			if citebook.ErrorCode(err) != c.code || !strings.Contains(citebook.ErrorMessage(err), c.msg) {
				t.Fatalf("err %v, want %s mentioning %q", err, c.code, c.msg)
			}
		})
	}
}

// TestParsePDFLanguage: the language of a PDF is detected from its text,
// as for every format.
func TestParsePDFLanguage(t *testing.T) {
	cases := []struct{ book, lang string }{
		{"R-intro.pdf", "en"},
		{"hash_usenix.pdf", "en"},
		{"lshort-zh-cn.pdf", "zh"},
	}
	for _, c := range cases {
		doc, err := ParseFile(context.Background(), corpus.Path(t, "books/"+c.book))
		if err != nil {
			t.Fatal(err)
		}
		if got := doc.Language; got != c.lang {
			t.Errorf("%s: language %q, want %q", c.book, got, c.lang)
		}
	}
}
