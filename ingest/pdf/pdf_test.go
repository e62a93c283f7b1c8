package pdf

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"unicode"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/hostile"
	"github.com/citebook/citebook/internal/pdftotext"
	"github.com/ledongthuc/pdf"
)

// parsedPDFs caches parsed corpus books: several tests look at the same book
// and the large ones take a second or two each.
var parsedPDFs sync.Map

// parseCorpusPDF parses a book of the corpus, once per test run.
func parseCorpusPDF(t *testing.T, name string) *parsing.Document {
	t.Helper()
	return parseCorpusFile(t, "books/"+name)
}

// parseCorpusFile parses the corpus file at rel, once per test run.
func parseCorpusFile(t *testing.T, rel string) *parsing.Document {
	t.Helper()
	path := corpus.Path(t, rel)
	if d, ok := parsedPDFs.Load(path); ok {
		return d.(*parsing.Document)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	doc, err := parseDefault(context.Background(), f, st.Size())
	if err != nil {
		t.Fatalf("parseDefault(%s): %v", rel, err)
	}
	parsedPDFs.Store(path, doc)
	return doc
}

func topLevel(doc *parsing.Document) []parsing.OutlineEntry {
	var out []parsing.OutlineEntry
	for _, e := range doc.Outline {
		if e.Level == 0 {
			out = append(out, e)
		}
	}
	return out
}

func TestParsePDFOutline(t *testing.T) {
	cases := []struct {
		book        string
		top         int
		first, last string
		firstPage   int
		chapter3    string
		ch3Page     int
	}{
		{"R-intro.pdf", 21, "Preface", "F References", 7, "3 Objects, their modes and attributes", 20},
		{"debian-reference.en.pdf", 13, "GNU/Linux tutorials", "Appendix", 29, "The system initialization", 104},
		{"WaldenFull.pdf", 22, "Cover", "Conclusion", 1, "Reading", 76},
		{"lshort-zh-cn.pdf", 18, "标题页", "索引", 1, "第三章  文档元素", 31},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			top := topLevel(doc)
			if len(top) != c.top {
				t.Fatalf("%d top-level outline entries, want %d", len(top), c.top)
			}
			if top[0].Title != c.first || top[0].Page != c.firstPage {
				t.Errorf("first entry %q p.%d, want %q p.%d", top[0].Title, top[0].Page, c.first, c.firstPage)
			}
			if top[len(top)-1].Title != c.last {
				t.Errorf("last entry %q, want %q", top[len(top)-1].Title, c.last)
			}
			found := false
			for _, e := range top {
				if e.Title == c.chapter3 {
					found = true
					if e.Page != c.ch3Page {
						t.Errorf("%q on page %d, want %d", e.Title, e.Page, c.ch3Page)
					}
				}
			}
			if !found {
				t.Errorf("no top-level entry %q", c.chapter3)
			}
			// Sections follow the top-level outline in order; only entries
			// without text of their own (an image-only cover) may be missing.
			var got []string
			for _, s := range doc.Sections {
				if s.HeadingPath[0] == doc.Title { // front matter
					continue
				}
				if len(got) == 0 || got[len(got)-1] != s.HeadingPath[0] {
					got = append(got, s.HeadingPath[0])
				}
			}
			k := 0
			for _, e := range top {
				if k < len(got) && got[k] == e.Title {
					k++
				}
			}
			if k != len(got) || len(got)*10 < len(top)*9 {
				t.Errorf("section chapters %q do not follow the outline (%d of %d matched)", got, k, len(top))
			}
			// The chapter's section starts on its page.
			for _, s := range doc.Sections {
				if s.HeadingPath[0] == c.chapter3 {
					if p := s.Blocks[0].Pages[0].Page; p != c.ch3Page {
						t.Errorf("section %q starts on page %d, want %d", c.chapter3, p, c.ch3Page)
					}
					return
				}
			}
			t.Errorf("no section under %q", c.chapter3)
		})
	}
}

func TestParsePDFWaldenChapters(t *testing.T) {
	doc := parseCorpusPDF(t, "WaldenFull.pdf")
	var chapters []string
	for _, s := range doc.Sections {
		if len(chapters) == 0 || chapters[len(chapters)-1] != s.HeadingPath[0] {
			chapters = append(chapters, s.HeadingPath[0])
		}
	}
	// Cover (image only) has no text; Title, Publisher and Contents precede
	// the 18 chapters.
	if len(chapters) < 18 {
		t.Fatalf("sections %q", chapters)
	}
	body := chapters[len(chapters)-18:]
	if body[0] != "Economy" || body[2] != "Reading" || body[17] != "Conclusion" {
		t.Errorf("chapters %q", body)
	}
	for _, s := range doc.Sections {
		if s.HeadingPath[0] == "Reading" {
			sp := s.Blocks[0].Pages[0]
			if sp.Page != 76 || sp.Printed != "72" {
				t.Errorf("Reading starts at %+v, want physical 76 printed 72", sp)
			}
			break
		}
	}
}

func TestParsePDFLabels(t *testing.T) {
	cases := []struct {
		book   string
		labels map[int]string
	}{
		{"R-intro.pdf", map[int]string{3: "i", 7: "1", 20: "14", 37: "31", 112: "106"}},
		{"debian-reference.en.pdf", map[int]string{2: "i", 29: "1", 104: "76", 200: "172"}},
		{"WaldenFull.pdf", map[int]string{5: "1", 76: "72", 200: "196"}},
		{"lshort-zh-cn.pdf", map[int]string{7: "v", 13: "1", 31: "19", 100: "88"}},
		{"dtc-paper.pdf", map[int]string{1: "1", 2: "2", 7: "7"}},
		{"hash_usenix.pdf", map[int]string{1: "1", 2: "2", 14: "14"}},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			if len(doc.Labels) != doc.Pages {
				t.Fatalf("%d labels for %d pages", len(doc.Labels), doc.Pages)
			}
			for p, want := range c.labels {
				if got := doc.Label(p); got != want {
					t.Errorf("page %d label %q, want %q", p, got, want)
				}
			}
		})
	}
}

// TestParsePDFPageSpans takes the longest line pdftotext prints for a page
// and checks it is found in a block whose page span at that offset is the
// same physical page.
func TestParsePDFPageSpans(t *testing.T) {
	cases := []struct {
		book  string
		pages []int
	}{
		{"R-intro.pdf", []int{8, 21, 37, 60, 100}},
		{"debian-reference.en.pdf", []int{29, 104, 200}},
		{"WaldenFull.pdf", []int{6, 76, 200}},
		{"hash_usenix.pdf", []int{2, 6}},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			path := corpus.Path(t, "books/"+c.book)
			for _, p := range c.pages {
				ref := pdftotext.Pages(t, path, "-f", strconv.Itoa(p), "-l", strconv.Itoa(p))
				line := longestLine(ref[0])
				if len(strings.Fields(line)) < 6 {
					t.Fatalf("page %d: no usable line in pdftotext output", p)
				}
				// Drop the edge words: they may be hyphenated or glued to a
				// neighbouring column.
				f := strings.Fields(line)
				probe := strings.Join(f[1:len(f)-1], " ")
				var pagesSeen []int
				for _, s := range doc.Sections {
					for _, b := range s.Blocks {
						if i := strings.Index(b.Text, probe); i >= 0 {
							got, _ := citebook.PageAt(b.Pages, i)
							pagesSeen = append(pagesSeen, got)
						}
					}
				}
				if !slices.Contains(pagesSeen, p) {
					t.Errorf("page %d: %q found on pages %v", p, probe, pagesSeen)
				}
			}
		})
	}
}

// longestLine picks the longest line of prose (mostly letters) on a page.
func longestLine(s string) string {
	best := ""
	for _, l := range strings.Split(s, "\n") {
		l = strings.Join(strings.Fields(l), " ")
		letters := 0
		for _, r := range l {
			if unicode.IsLetter(r) || r == ' ' {
				letters++
			}
		}
		if len(l) > len(best) && letters*10 >= len(l)*9 {
			best = l
		}
	}
	return best
}

func TestParsePDFDebianStructure(t *testing.T) {
	doc := parseCorpusPDF(t, "debian-reference.en.pdf")
	deep := 0
	running := regexp.MustCompile(`Debian Reference\s+\d+\s*/\s*233`)
	for _, s := range doc.Sections {
		if len(s.HeadingPath) >= 4 {
			deep++
		}
		for _, b := range s.Blocks {
			if running.MatchString(b.Text) {
				t.Fatalf("running header left in text: %q", b.Text)
			}
		}
	}
	if deep == 0 {
		t.Error("no four-level heading path")
	}
}

// TestParsePDFTwoColumns checks sentences that run from the foot of the left
// column to the top of the right one (read off pdftotext -layout) come out
// whole.
func TestParsePDFTwoColumns(t *testing.T) {
	cases := []struct{ book, sentence string }{
		{"dtc-paper.pdf", "there are a number of extra features that dtc could include to make creating device trees more convenient:"},
		{"hash_usenix.pdf", "so we select an overflow page addressing algorithm that can be expressed in 16 bits and which allows quick retrieval."},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			for _, s := range doc.Sections {
				for _, b := range s.Blocks {
					if strings.Contains(b.Text, c.sentence) {
						return
					}
				}
			}
			t.Errorf("sentence not found whole: %q", c.sentence)
		})
	}
}

func TestParsePDFNumberedHeadings(t *testing.T) {
	doc := parseCorpusPDF(t, "dtc-paper.pdf")
	if doc.Title != "Device trees everywhere" || doc.Pages != 7 || len(doc.Outline) != 0 {
		t.Errorf("title %q pages %d outline %d", doc.Title, doc.Pages, len(doc.Outline))
	}
	want := [][]string{
		{"1 Introduction", "1.2 The bad old days"},
		{"2 The Flattened Tree", "2.2 Format of the device tree blob"},
		{"3 The Device Tree Compiler", "3.2 Source format"},
	}
	for _, w := range want {
		found := false
		for _, s := range doc.Sections {
			if strings.Join(s.HeadingPath, "|") == strings.Join(w, "|") {
				found = true
			}
		}
		if !found {
			t.Errorf("no section %q", w)
		}
	}
}

func TestParsePDFInvalid(t *testing.T) {
	rintro, err := os.ReadFile(corpus.Path(t, "books/R-intro.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	scan, err := os.ReadFile(corpus.Path(t, "books/R-intro-scan-excerpt.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	// Damage a copy inside the body: the xref still parses, objects do not.
	damaged := bytes.Clone(rintro)
	for i := len(damaged) / 4; i < len(damaged)/2; i++ {
		damaged[i] = 'x'
	}
	cases := []struct {
		name, msg string
		data      []byte
	}{
		{"scan", "no text layer", scan},
		{"empty", "empty", nil},
		{"truncated", "truncated", rintro[:len(rintro)/2]},
		{"garbage", "not a PDF", []byte("this is not a PDF at all, just words\n")},
		{"header only", "truncated", []byte("%PDF-1.4\n%%EOF\n")},
		{"damaged body", "", damaged},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := parseDefault(context.Background(), bytes.NewReader(c.data), int64(len(c.data)))
			if c.name == "damaged body" && err == nil {
				// Pages before the damage may still be readable; what
				// matters is that there was no panic and a usable result.
				if len(doc.Sections) == 0 {
					t.Fatal("no error and no sections")
				}
				return
			}
			if err == nil {
				t.Fatalf("no error, doc with %d sections", len(doc.Sections))
			}
			if citebook.ErrorCode(err) != citebook.EINVALID {
				t.Errorf("code %q, want invalid: %v", citebook.ErrorCode(err), err)
			}
			if !strings.Contains(citebook.ErrorMessage(err), c.msg) {
				t.Errorf("message %q does not mention %q", citebook.ErrorMessage(err), c.msg)
			}
		})
	}
}

func TestParsePDFCancelled(t *testing.T) {
	f, err := os.Open(corpus.Path(t, "books/hash_usenix.pdf"))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	st, _ := f.Stat()
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := parseDefault(ctx, f, st.Size()); err == nil {
		t.Fatal("cancelled parse returned no error")
	}
}

// TestParsePDFFidelity compares all block text with pdftotext's output
// (running heads and folios stripped on both sides) as a bag of words; the
// Chinese book is compared by character bigrams.
func TestParsePDFFidelity(t *testing.T) {
	cases := []struct {
		book    string
		bigrams bool
	}{
		{"R-intro.pdf", false},
		{"debian-reference.en.pdf", false},
		{"WaldenFull.pdf", false},
		{"dtc-paper.pdf", false},
		{"hash_usenix.pdf", false},
		{"lshort-zh-cn.pdf", true},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			ref := pdftotext.StripRunning(pdftotext.Pages(t, corpus.Path(t, "books/"+c.book)))
			var sb strings.Builder
			for _, s := range doc.Sections {
				for _, b := range s.Blocks {
					sb.WriteString(b.Text)
					sb.WriteByte('\n')
				}
			}
			bag := pdftotext.WordBag
			if c.bigrams {
				bag = pdftotext.BigramBag
			}
			p, r, f1 := pdftotext.BagF1(bag(sb.String()), bag(ref))
			t.Logf("%s: precision %.4f recall %.4f F1 %.4f", c.book, p, r, f1)
			if f1 < 0.95 {
				t.Errorf("F1 %.4f < 0.95", f1)
			}
		})
	}
}

func TestParsePDFBuilt(t *testing.T) {
	page := func(content string) []string {
		return []string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
			"<< /Length " + strconv.Itoa(len(content)) + " >>\nstream\n" + content + "\nendstream",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		}
	}
	text := "BT /F1 12 Tf 72 700 Td (A hand-made page of plain prose.) Tj ET"
	cases := []struct {
		name, msg string
		data      []byte
	}{
		{"encrypted", "encrypted", hostile.PDF(page(text), "/Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >> /ID [<0102> <0102>]")},
		{"no pages", "no pages", hostile.PDF([]string{"<< /Type /Catalog /Pages 2 0 R >>", "<< /Type /Pages /Kids [] /Count 0 >>"}, "")},
		{"no text", "no text layer", hostile.PDF(page("0 0 m 100 100 l S"), "")},
		{"cyclic page tree", "", hostile.PDF([]string{
			"<< /Type /Catalog /Pages 2 0 R >>",
			"<< /Type /Pages /Kids [2 0 R 3 0 R 2 0 R] /Count 1 >>",
			"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
			"<< /Length " + strconv.Itoa(len(text)) + " >>\nstream\n" + text + "\nendstream",
			"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
		}, "")},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			doc, err := parseDefault(context.Background(), bytes.NewReader(c.data), int64(len(c.data)))
			if c.msg == "" {
				if err != nil {
					t.Fatal(err)
				}
				if doc.Pages != 1 || len(doc.Sections) != 1 || doc.Sections[0].Blocks[0].Text != "A hand-made page of plain prose." {
					t.Fatalf("pages %d sections %+v", doc.Pages, doc.Sections)
				}
				return
			}
			if citebook.ErrorCode(err) != citebook.EINVALID || !strings.Contains(citebook.ErrorMessage(err), c.msg) {
				t.Fatalf("err %v, want invalid mentioning %q", err, c.msg)
			}
		})
	}
}

// TestParsePDFPageBreak checks a paragraph running over a page break is one
// block whose second page span starts exactly where the new page's text does
// (R-intro: "…have been implemented. A few of these are built" ends physical
// page 8, "into the base R environment" opens page 9).
func TestParsePDFPageBreak(t *testing.T) {
	doc := parseCorpusPDF(t, "R-intro.pdf")
	const before, after = "A few of these are built ", "into the base R environment"
	for _, s := range doc.Sections {
		for _, b := range s.Blocks {
			i := strings.Index(b.Text, before+after)
			if i < 0 {
				continue
			}
			at := i + len(before)
			if p, label := citebook.PageAt(b.Pages, at-1); p != 8 || label != "2" {
				t.Errorf("text before the break on page %d (%q), want 8 (\"2\")", p, label)
			}
			if p, label := citebook.PageAt(b.Pages, at); p != 9 || label != "3" {
				t.Errorf("text after the break on page %d (%q), want 9 (\"3\")", p, label)
			}
			if b.Pages[0].Offset != 0 {
				t.Errorf("first span at offset %d", b.Pages[0].Offset)
			}
			return
		}
	}
	t.Fatalf("no block holds %q", before+after)
}

// TestParsePDFFootnotes: a sentence running on to the next page reads on
// past the footnotes at the foot of its page, and each footnote stays in the
// text, on its page (liftFootnotes).
func TestParsePDFFootnotes(t *testing.T) {
	cases := []struct {
		book, before, after string
		page                int // of before; after is on the next
		footnote            string
	}{
		{"R-intro.pdf", "but it can ", "be quite hard to decide", 12, "The leading “dot” in this file name"},
		{"dtc-paper.pdf", "So, when kexec() comes ", "to boot another kernel", 1, "Well, mostly."},
		{"hash_usenix.pdf", "Logically, we chain overflow ", "pages to the buckets", 5, "This is not strictly true."},
		{"lshort-zh-cn.pdf", "文字密一些的地方，", "单词间距就略窄", 27, "中文排版实现汉字间断行"},
	}
	for _, c := range cases {
		t.Run(c.book, func(t *testing.T) {
			doc := parseCorpusPDF(t, c.book)
			ran, noted := false, false
			for _, s := range doc.Sections {
				for _, b := range s.Blocks {
					if i := strings.Index(b.Text, c.before+c.after); i >= 0 {
						ran = true
						at := i + len(c.before)
						if p, _ := citebook.PageAt(b.Pages, at-1); p != c.page {
							t.Errorf("%q on page %d, want %d", c.before, p, c.page)
						}
						if p, _ := citebook.PageAt(b.Pages, at); p != c.page+1 {
							t.Errorf("%q on page %d, want %d", c.after, p, c.page+1)
						}
					}
					if i := strings.Index(b.Text, c.footnote); i >= 0 {
						noted = true
						if p, _ := citebook.PageAt(b.Pages, i); p != c.page {
							t.Errorf("footnote %q on page %d, want %d", c.footnote, p, c.page)
						}
					}
				}
			}
			if !ran {
				t.Errorf("no block reads %q", c.before+c.after)
			}
			if !noted {
				t.Errorf("footnote %q lost", c.footnote)
			}
		})
	}
}

// TestParsePDFAccents: an accent TeX strikes as a glyph of its own over a
// letter is joined to it (composeAccents); one printed beside a letter, as
// in the code that types an accent, stays.
func TestParsePDFAccents(t *testing.T) {
	for _, c := range []struct {
		book      string
		want, not []string
	}{
		{"R-intro.pdf", []string{"suggested by François Pinard"}, []string{"Fran¸cois"}},
		// lshort-zh-cn's table of accents: each printed accent, then the
		// command that types it.
		{"lshort-zh-cn.pdf", []string{"ò \\`o", "ó \\'o", "ô \\^o"}, []string{"`o \\`o"}},
	} {
		t.Run(c.book, func(t *testing.T) {
			text := fullText(parseCorpusPDF(t, c.book))
			for _, w := range c.want {
				if !strings.Contains(text, w) {
					t.Errorf("no %q in the text", w)
				}
			}
			for _, n := range c.not {
				if strings.Contains(text, n) {
					t.Errorf("%q in the text", n)
				}
			}
		})
	}
}

// TestComposeAccents: the accent's middle must be printed over the letter
// drawn next to it, before or after; the letter keeps its box.
func TestComposeAccents(t *testing.T) {
	g := func(s string, x float64) pdf.Text { return pdf.Text{S: s, X: x, W: 5, Y: 100, FontSize: 10} }
	for _, c := range []struct {
		name   string
		glyphs []pdf.Text
		want   string
		at     []float64 // where the glyphs out are drawn, when checked
	}{
		{"cedilla before its letter", []pdf.Text{g("n", 0), g("\u00B8", 5), g("c", 5), g("o", 10)}, "nço", []float64{0, 5, 10}},
		{"acute after its letter", []pdf.Text{g("e", 0), g("\u00B4", 0.5), g("t", 5)}, "ét", nil},
		{"accent beside a letter", []pdf.Text{g("\u00A8", 0), g("o", 8)}, "\u00A8o", nil},
		{"grave over a digit", []pdf.Text{g("`", 0), g("1", 0)}, "`1", nil},
		{"no accent", []pdf.Text{g("a", 0), g("b", 5)}, "ab", nil},
	} {
		var got strings.Builder
		var at []float64
		out := composeAccents(c.glyphs)
		for _, o := range out {
			got.WriteString(o.S)
			at = append(at, o.X)
		}
		if got.String() != c.want {
			t.Errorf("%s: %q, want %q", c.name, got.String(), c.want)
		}
		if c.at != nil && !slices.Equal(at, c.at) {
			t.Errorf("%s: drawn at %v, want %v", c.name, at, c.at)
		}
	}
}

func TestPDFPageLabelTree(t *testing.T) {
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /PageLabels << /Kids [8 0 R] >> >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R 5 0 R 6 0 R 7 0 R] /Count 5 >>",
	}
	for range 5 {
		objs = append(objs, "<< /Type /Page /Parent 2 0 R >>")
	}
	objs = append(objs, "<< /Nums [0 << /S /r >> 2 << /S /D /St 5 >> 3 << /S /A /P (App-) /St 26 >>] >>")
	data := hostile.PDF(objs, "")
	x, err := newPDFExtractor(bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	got := pageLabels(x.root, len(x.pages))
	want := []string{"i", "ii", "5", "App-Z", "App-AA"}
	if !slices.Equal(got, want) {
		t.Errorf("labels %q, want %q", got, want)
	}
}

func TestPDFFolio(t *testing.T) {
	cases := []struct{ line, folio string }{
		{"76", "76"},
		{"Debian Reference 76 / 233", "76"},
		{"Chapter 3: Objects, their modes and attributes 15", "15"},
		{"USENIX − Winter ’91 − Dallas, TX 3", "3"},
		{"xiv", "xiv"},
		{"Preface iii", "iii"},
		{"– 12 –", "12"},
		{"Seltzer & Yigit A New Hashing Package for UNIX", ""},
		{"in 1990.", ""},
	}
	for _, c := range cases {
		if got := folio(c.line); got != c.folio {
			t.Errorf("folio(%q) = %q, want %q", c.line, got, c.folio)
		}
	}
}

func TestPDFLabelsFromFolios(t *testing.T) {
	cases := []struct {
		folios, labels []string
	}{
		// Walden-like: cover and front pages without folios, then N-4.
		{[]string{"", "", "", "", "", "2", "3", "", "5"}, []string{"", "", "", "", "1", "2", "3", "4", "5"}},
		// Roman front matter, then decimal from 1.
		{[]string{"i", "ii", "", "2", "3"}, []string{"i", "ii", "1", "2", "3"}},
		// A stray number on one page is not an offset.
		{[]string{"", "", "17", "", ""}, []string{"", "", "", "", ""}},
	}
	for _, c := range cases {
		if got := labelsFromFolios(c.folios); !slices.Equal(got, c.labels) {
			t.Errorf("labelsFromFolios(%q) = %q, want %q", c.folios, got, c.labels)
		}
	}
}

// TestPDFOutlineDestinations builds a two-page PDF whose bookmarks use an
// explicit /Dest, a GoTo action and a named destination, and whose last
// bookmark links back to the first (a cycle the reader must survive).
func TestPDFOutlineDestinations(t *testing.T) {
	text := func(s string) string {
		c := "BT /F1 12 Tf 72 700 Td (" + s + ") Tj ET"
		return "<< /Length " + strconv.Itoa(len(c)) + " >>\nstream\n" + c + "\nendstream"
	}
	objs := []string{
		"<< /Type /Catalog /Pages 2 0 R /Outlines 7 0 R /Names << /Dests << /Kids [11 0 R] >> >> >>",
		"<< /Type /Pages /Kids [3 0 R 4 0 R] /Count 2 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 12 0 R >> >> /Contents 5 0 R >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 12 0 R >> >> /Contents 6 0 R >>",
		text("One"),
		text("Two"),
		"<< /Type /Outlines /First 8 0 R /Last 10 0 R >>",
		"<< /Title (First) /Parent 7 0 R /Next 9 0 R /Dest [3 0 R /Fit] >>",
		"<< /Title (Second) /Parent 7 0 R /Next 10 0 R /A << /S /GoTo /D [4 0 R /XYZ 0 0 0] >> >>",
		"<< /Title (Named) /Parent 7 0 R /Next 8 0 R /Dest (sec.two) >>",
		"<< /Limits [(sec.one) (sec.two)] /Names [(sec.one) [3 0 R /Fit] (sec.two) << /D [4 0 R /Fit] >>] >>",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}
	data := hostile.PDF(objs, "")
	doc, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	want := []parsing.OutlineEntry{{Title: "First", Page: 1}, {Title: "Second", Page: 2}, {Title: "Named", Page: 2}}
	if !slices.Equal(doc.Outline, want) {
		t.Errorf("outline %+v, want %+v", doc.Outline, want)
	}
}
