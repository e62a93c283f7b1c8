package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"os"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

func parseEPUBFile(t testing.TB, rel string) *Document {
	t.Helper()
	data, err := os.ReadFile(corpus.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseEPUB(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatalf("%s: %v", rel, err)
	}
	return doc
}

// chapters returns the top-level outline titles in order.
func chapters(doc *Document) []string {
	var out []string
	for _, o := range doc.Outline {
		if o.Level == 0 {
			out = append(out, o.Title)
		}
	}
	return out
}

// sectionAfter returns the heading path of the first section below chapter.
func firstSubsection(doc *Document, chapter string) []string {
	for _, s := range doc.Sections {
		if len(s.HeadingPath) > 1 && s.HeadingPath[0] == chapter {
			return s.HeadingPath
		}
	}
	return nil
}

func TestParseEPUBCorpus(t *testing.T) {
	tests := []struct {
		file       string
		title      string
		language   string
		chapters   int
		chapterIdx int // index into top-level outline entries
		chapter    string
		firstSub   string // first section title under that chapter
		bodyHint   string // text the chapter's sections must contain
	}{
		{"books/policy.epub", "Debian Policy Manual", "en", 24, 3, "Binary packages", "The package name", "The Debian distribution is based on the Debian package management"},
		{"books/debmake-doc.zh-cn.epub", "Debian 维护者指南", "zh", 10, 3, "3. 工具的配置", "3.1. 电子邮件地址", "Chapter 3. 工具的配置"},
		{"books/debian-edu-bullseye-manual.epub", "Debian Edu / Skolelinux Bullseye 11 手册", "zh", 28, 2, "结构", "网络", "结构"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			doc := parseEPUBFile(t, tt.file)
			if doc.Title != tt.title || doc.Language != tt.language || doc.Format != citebook.FormatEPUB || doc.Pages != 0 {
				t.Errorf("title %q language %q format %q pages %d", doc.Title, doc.Language, doc.Format, doc.Pages)
			}
			ch := chapters(doc)
			if len(ch) != tt.chapters {
				t.Fatalf("%d chapters, want %d: %q", len(ch), tt.chapters, ch)
			}
			if ch[tt.chapterIdx] != tt.chapter {
				t.Errorf("chapter %d = %q, want %q", tt.chapterIdx, ch[tt.chapterIdx], tt.chapter)
			}
			sub := firstSubsection(doc, tt.chapter)
			if len(sub) != 2 || sub[1] != tt.firstSub {
				t.Errorf("first section of %q = %q, want %q", tt.chapter, sub, tt.firstSub)
			}
			// Reading order follows the table of contents: the sections'
			// chapters appear in outline order.
			pos := map[string]int{}
			for i, c := range ch {
				pos[c] = i
			}
			last := -1
			found := false
			for _, s := range doc.Sections {
				i, ok := pos[s.HeadingPath[0]]
				if !ok {
					continue
				}
				if i < last {
					t.Fatalf("section %q comes after chapter %q", s.HeadingPath, ch[last])
				}
				last = i
				if s.HeadingPath[0] == tt.chapter {
					for _, b := range s.Blocks {
						found = found || strings.Contains(b.Text, tt.bodyHint)
					}
				}
				for _, b := range s.Blocks {
					if b.Text == "" || len(b.Pages) != 0 {
						t.Fatalf("block in %q is empty or has pages", s.HeadingPath)
					}
				}
			}
			if !found {
				t.Errorf("chapter %q does not contain %q", tt.chapter, tt.bodyHint)
			}
		})
	}
}

func TestSplitDebmakeChinese(t *testing.T) {
	doc := parseEPUBFile(t, "books/debmake-doc.zh-cn.epub")
	tok := testTokenizer(t)
	opt := DefaultChunkOptions()
	parents, chunks := Split(doc, "debmake", tok, opt)
	checkChunks(t, doc, tok, opt, parents, chunks)
	zh := 0
	for _, c := range chunks {
		if c.Language == "zh" {
			zh++
		}
	}
	if zh*2 < len(chunks) {
		t.Errorf("only %d of %d chunks detected as Chinese", zh, len(chunks))
	}
}

// zipOf builds an archive from name/content pairs in order.
func zipOf(t testing.TB, entries ...string) []byte {
	t.Helper()
	var buf bytes.Buffer
	w := zip.NewWriter(&buf)
	for i := 0; i+1 < len(entries); i += 2 {
		f, err := w.Create(entries[i])
		if err != nil {
			t.Fatal(err)
		}
		if _, err := f.Write([]byte(entries[i+1])); err != nil {
			t.Fatal(err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatal(err)
	}
	return buf.Bytes()
}

const (
	testContainer = `<?xml version="1.0"?><container xmlns="urn:oasis:names:tc:opendocument:xmlns:container" version="1.0"><rootfiles><rootfile full-path="OPS/book.opf" media-type="application/oebps-package+xml"/></rootfiles></container>`
	testOPF       = `<?xml version="1.0"?><package xmlns="http://www.idpf.org/2007/opf" version="3.0"><metadata xmlns:dc="http://purl.org/dc/elements/1.1/"><dc:title>Tiny</dc:title><dc:language>en</dc:language></metadata><manifest><item id="nav" href="nav.xhtml" media-type="application/xhtml+xml" properties="nav"/><item id="c1" href="c1.xhtml" media-type="application/xhtml+xml"/></manifest><spine><itemref idref="c1"/></spine></package>`
	testNav       = `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body><nav epub:type="toc"><ol><li><a href="c1.xhtml">One</a><ol><li><a href="c1.xhtml#s2">Two</a></li></ol></li></ol></nav></body></html>`
	testC1        = `<html xmlns="http://www.w3.org/1999/xhtml"><body><h1>One</h1><p>First paragraph.</p><h2 id="s2">Two</h2><p>Second paragraph.</p><pre>  code
    indented</pre></body></html>`
)

func TestParseEPUBSynthetic(t *testing.T) {
	data := zipOf(t, "META-INF/container.xml", testContainer, "OPS/book.opf", testOPF, "OPS/nav.xhtml", testNav, "OPS/c1.xhtml", testC1, "mimetype", "application/epub+zip")
	doc, err := ParseEPUB(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	var got []string
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			got = append(got, citebook.HeadingString(s.HeadingPath)+": "+b.Text)
		}
	}
	want := []string{"One: One", "One: First paragraph.", "One > Two: Two", "One > Two: Second paragraph.", "One > Two:   code\n    indented"}
	if strings.Join(got, "|") != strings.Join(want, "|") {
		t.Errorf("blocks\n got %q\nwant %q", got, want)
	}
}

func TestParseEPUBBadInput(t *testing.T) {
	policy, err := os.ReadFile(corpus.Path(t, "books/policy.epub"))
	if err != nil {
		t.Fatal(err)
	}
	bomb := func() []byte {
		var buf bytes.Buffer
		w := zip.NewWriter(&buf)
		f, _ := w.Create("META-INF/container.xml")
		f.Write([]byte(testContainer))
		f, _ = w.Create("OPS/book.opf")
		f.Write(make([]byte, 8<<20)) // 8 MiB of zeros deflate to a few KiB
		w.Close()
		return buf.Bytes()
	}()
	tests := []struct {
		name string
		data []byte
		want string // part of the user-facing message
	}{
		{"zero bytes", nil, "empty file"},
		{"not a zip", []byte("hello, not an archive"), "zip archive cannot be read"},
		{"truncated", policy[:len(policy)/2], "zip archive cannot be read"},
		{"parent path", zipOf(t, "META-INF/container.xml", testContainer, "../evil", "x"), "unsafe path"},
		{"absolute path", zipOf(t, "/etc/evil", "x"), "unsafe path"},
		{"zip bomb", bomb, "zip bomb"},
		{"malformed container", zipOf(t, "META-INF/container.xml", "<container><rootfiles><rootfile full-path=", "OPS/book.opf", testOPF), "malformed META-INF/container.xml"},
		{"no container", zipOf(t, "a.txt", "x"), "no META-INF/container.xml"},
		{"missing package", zipOf(t, "META-INF/container.xml", testContainer), "missing OPS/book.opf"},
		{"malformed package", zipOf(t, "META-INF/container.xml", testContainer, "OPS/book.opf", "<package><spine"), "malformed EPUB package document"},
		{"no text", zipOf(t, "META-INF/container.xml", testContainer, "OPS/book.opf", testOPF, "OPS/c1.xhtml", "<html><body></body></html>"), "has no text"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc, err := ParseEPUB(context.Background(), bytes.NewReader(tt.data), int64(len(tt.data)))
			if citebook.ErrorCode(err) != citebook.EINVALID || doc != nil {
				t.Fatalf("got %v, %v; want an invalid-input error", doc, err)
			}
			if msg := citebook.ErrorMessage(err); !strings.Contains(msg, tt.want) {
				t.Errorf("message %q does not mention %q", msg, tt.want)
			}
		})
	}
}

func BenchmarkParseEPUB(b *testing.B) {
	data, err := os.ReadFile(corpus.Path(b, "books/policy.epub"))
	if err != nil {
		b.Fatal(err)
	}
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		if _, err := ParseEPUB(context.Background(), bytes.NewReader(data), int64(len(data))); err != nil {
			b.Fatal(err)
		}
	}
}

func TestParseEPUBPageList(t *testing.T) {
	nav := `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>
<nav epub:type="toc"><ol><li><a href="c1.xhtml">One</a><ol><li><a href="c1.xhtml#s2">Two</a></li></ol></li></ol></nav>
<nav epub:type="page-list" hidden=""><ol><li><a href="c1.xhtml#p1">ix</a></li><li><a href="c1.xhtml#p2">x</a></li><li><a href="c1.xhtml#p3">11</a></li></ol></nav>
</body></html>`
	c1 := `<html xmlns="http://www.w3.org/1999/xhtml" xmlns:epub="http://www.idpf.org/2007/ops"><body>
<span epub:type="pagebreak" id="p1" title="ix"/>
<h1>One</h1>
<p>Words on the first page <span epub:type="pagebreak" id="p2" title="x"/> continue on the second page.</p>
<span epub:type="pagebreak" id="p3"/>
<h2 id="s2">Two</h2><p>Third page text.</p></body></html>`
	data := zipOf(t, "META-INF/container.xml", testContainer, "OPS/book.opf", testOPF, "OPS/nav.xhtml", nav, "OPS/c1.xhtml", c1)
	doc, err := ParseEPUB(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 3 || strings.Join(doc.Labels, ",") != "ix,x,11" {
		t.Fatalf("pages %d labels %q", doc.Pages, doc.Labels)
	}
	if doc.Outline[1].Title != "Two" || doc.Outline[1].Page != 3 {
		t.Errorf("outline %+v", doc.Outline)
	}
	para := doc.Sections[0].Blocks[1]
	if para.Text != "Words on the first page continue on the second page." {
		t.Errorf("page mark left traces in %q", para.Text)
	}
	_, chunks := Split(doc, "paged", testTokenizer(t), DefaultChunkOptions())
	tests := []struct {
		quote   string
		page    int
		printed string
	}{
		{"Words on the first page", 1, "ix"},
		{"continue on the second", 2, "x"},
		{"Third page text", 3, "11"},
	}
	for _, tt := range tests {
		found := false
		for _, c := range chunks {
			if i := strings.Index(c.Text, tt.quote); i >= 0 {
				found = true
				if p, pr := citebook.PageAt(c.Pages, i); p != tt.page || pr != tt.printed {
					t.Errorf("%q on page %d (%q), want %d (%q)", tt.quote, p, pr, tt.page, tt.printed)
				}
			}
		}
		if !found {
			t.Errorf("%q not in any chunk", tt.quote)
		}
	}
}
