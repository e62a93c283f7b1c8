package pdf

import (
	"context"
	"math"
	"os"
	"sort"
	"strconv"
	"strings"
	"testing"
	"unicode"

	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/ledongthuc/pdf"
)

// glyphText lays glyphs out simply, by line (Y, top first) then X, so the
// tests check decoding without depending on the layout code.
func glyphText(glyphs []pdf.Text) string {
	g := append([]pdf.Text(nil), glyphs...)
	sort.SliceStable(g, func(i, j int) bool { return g[i].Y > g[j].Y })
	var lines [][]pdf.Text
	for _, t := range g {
		n := len(lines)
		if n > 0 {
			first := lines[n-1][0]
			tol := math.Max(1, 0.4*math.Min(first.FontSize, t.FontSize))
			if math.Abs(first.Y-t.Y) <= tol {
				lines[n-1] = append(lines[n-1], t)
				continue
			}
		}
		lines = append(lines, []pdf.Text{t})
	}
	var b strings.Builder
	for _, line := range lines {
		sort.SliceStable(line, func(i, j int) bool { return line[i].X < line[j].X })
		end := math.Inf(-1)
		for _, t := range line {
			if t.X-end > 0.15*t.FontSize && !math.IsInf(end, -1) {
				b.WriteByte(' ')
			}
			b.WriteString(t.S)
			end = t.X + t.W
		}
		b.WriteByte('\n')
	}
	return b.String()
}

// openExtractor opens a corpus PDF as a parse does and walks its pages.
func openExtractor(t testing.TB, rel string) *pdfExtractor {
	t.Helper()
	f, err := os.Open(corpus.Path(t, rel))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { f.Close() })
	st, err := f.Stat()
	if err != nil {
		t.Fatal(err)
	}
	x, err := newPDFExtractor(f, st.Size())
	if err != nil {
		t.Fatalf("open %s: %v", rel, err)
	}
	return x
}

func TestPageGlyphsText(t *testing.T) {
	tests := []struct {
		name    string
		book    string
		page    int
		want    []string // substrings of the page text
		notWant []string
	}{
		{"fandol CID font without ToUnicode", "books/lshort-zh-cn.pdf", 31,
			[]string{"文档元素", "章节和目录", "交叉引用", "subsubsection"}, []string{"\ufffd"}},
		{"chinese body text", "books/lshort-zh-cn.pdf", 14,
			[]string{"基本概念", "交叉引用、参考文献、目录等", "绝大多数时候"}, nil},
		{"CFF math font without ToUnicode (glyph names)", "books/lshort-zh-cn.pdf", 66,
			[]string{"α \\alpha", "θ \\theta", "ω \\omega", "Γ \\Gamma"}, nil},
		{"type3 T1 ligatures", "books/dtc-paper.pdf", 1,
			[]string{"flattened", "firmware", "“blob”"}, nil},
		{"type3 ff ligature", "books/dtc-paper.pdf", 3,
			[]string{"offset", "flattened tree"}, nil},
		{"pdfTeX type1 with ToUnicode", "books/R-intro.pdf", 10,
			[]string{"“character string”", "It’s", "help.start()"}, nil},
		{"CID TrueType", "books/debian-reference.en.pdf", 20,
			[]string{"Debian Reference"}, nil},
		{"WinAnsi TrueType", "books/WaldenFull.pdf", 20,
			[]string{"bestow it on"}, nil},
	}
	docs := map[string]*pdfExtractor{} // one font cache per book, as in a parse
	for _, tc := range tests {
		x := docs[tc.book]
		if x == nil {
			x = openExtractor(t, tc.book)
			docs[tc.book] = x
		}
		t.Run(tc.name, func(t *testing.T) {
			glyphs, err := x.pageGlyphs(tc.page)
			if err != nil {
				t.Fatalf("pageGlyphs: %v", err)
			}
			text := glyphText(glyphs)
			for _, w := range tc.want {
				if !strings.Contains(text, w) {
					t.Errorf("page %d lacks %q; text:\n%s", tc.page, w, text)
				}
			}
			for _, w := range tc.notWant {
				if strings.Contains(text, w) {
					t.Errorf("page %d has %q", tc.page, w)
				}
			}
			for _, g := range glyphs {
				for _, r := range g.S {
					if unicode.IsControl(r) {
						t.Fatalf("control character %U in glyph %+v", r, g)
					}
				}
				if g.S == "" || g.FontSize <= 0 || g.W < 0 {
					t.Fatalf("bad glyph %+v", g)
				}
			}
		})
	}
}

// TestPageGlyphsAdvance checks that CID widths move the pen: consecutive
// Chinese glyphs on a line must not share an X position, as the library's
// single-byte width lookup made them.
func TestPageGlyphsAdvance(t *testing.T) {
	glyphs, err := openExtractor(t, "books/lshort-zh-cn.pdf").pageGlyphs(31)
	if err != nil {
		t.Fatal(err)
	}
	han, same := 0, 0
	for i := 1; i < len(glyphs); i++ {
		a, b := glyphs[i-1], glyphs[i]
		if !unicode.Is(unicode.Han, []rune(b.S)[0]) || a.Y != b.Y {
			continue
		}
		han++
		if math.Abs(a.X-b.X) < 0.5 {
			same++
		}
		if w := b.W; w < 0.8*b.FontSize || w > 1.2*b.FontSize {
			t.Errorf("glyph %q advance %.2f at size %.2f; a CJK glyph is about 1 em", b.S, w, b.FontSize)
		}
	}
	if han < 100 || same > 0 {
		t.Errorf("%d consecutive Han glyphs, %d at the same X", han, same)
	}
}

func TestPageGlyphsAllPages(t *testing.T) {
	tests := []struct {
		book       string
		minPerPage int // glyphs per page on average, at least
		maxPerPage int
	}{
		{"books/hash_usenix.pdf", 1500, 8000},
		{"books/dtc-paper.pdf", 1500, 8000},
		{"books/R-intro-scan-excerpt.pdf", 0, 0}, // image-only: no text, no error
	}
	for _, tc := range tests {
		book := tc.book
		t.Run(book, func(t *testing.T) {
			x := openExtractor(t, book)
			total := 0
			for i := 1; i <= len(x.pages); i++ {
				g, err := x.pageGlyphs(i)
				if err != nil {
					t.Errorf("page %d: %v", i, err)
				}
				total += len(g)
			}
			if total < tc.minPerPage*len(x.pages) || total > tc.maxPerPage*len(x.pages) {
				t.Errorf("%d glyphs over %d pages", total, len(x.pages))
			}
		})
	}
}

// TestLoadPages checks the extractor's one walk of the page tree (the only
// one citebook has) against the library's own, Reader.Page(i) with the
// resources Page.Resources finds by climbing /Parent: the same pages, in
// order, with the same text.
func TestLoadPages(t *testing.T) {
	for _, book := range []string{"books/lshort-zh-cn.pdf", "books/R-intro.pdf", "books/dtc-paper.pdf"} {
		t.Run(book, func(t *testing.T) {
			x := openExtractor(t, book)
			if len(x.pages) != x.r.NumPage() {
				t.Fatalf("%d pages, NumPage says %d", len(x.pages), x.r.NumPage())
			}
			for _, i := range []int{1, len(x.pages) / 2, len(x.pages)} {
				ref := x.r.Page(i)
				want, _ := newFontCacheBudget(x.budget).pageGlyphsRes(ref, ref.Resources())
				got, _ := x.pageGlyphs(i)
				if glyphText(got) != glyphText(want) {
					t.Errorf("page %d differs from Reader.Page(%d)", i, i)
				}
			}
		})
	}
}

// BenchmarkPageGlyphs reads whole books as the parser does (page tree walk,
// fresh font cache) and reports pages/s; poppler's pdftotext does 300–730.
func BenchmarkPageGlyphs(b *testing.B) {
	for _, book := range []string{"books/lshort-zh-cn.pdf", "books/R-intro.pdf"} {
		b.Run(strings.TrimSuffix(strings.TrimPrefix(book, "books/"), ".pdf"), func(b *testing.B) {
			x := openExtractor(b, book)
			pages := 0
			for b.Loop() {
				x.pages, x.inherited, x.frames = nil, nil, nil
				if err := x.loadPages(); err != nil {
					b.Fatal(err)
				}
				x.budget = newDocBudget(context.Background(), parsing.Limits{})
				x.glyphCache = newFontCacheBudget(x.budget)
				for i := 1; i <= len(x.pages); i++ {
					if _, err := x.pageGlyphs(i); err != nil {
						b.Fatalf("page %d: %v", i, err)
					}
					pages++
				}
			}
			b.ReportMetric(float64(pages)/b.Elapsed().Seconds(), "pages/s")
		})
	}
}

func TestCSLexer(t *testing.T) {
	tests := []struct {
		name string
		in   string
		want []string // operators with their operands, as "op:operand|operand"
	}{
		{"text ops", "BT /F1 12 Tf 72 -7.5 Td (Hi) Tj ET",
			[]string{"BT:", "Tf:F1|12", "Td:72|-7.5", "Tj:Hi", "ET:"}},
		{"escapes and nesting", `(a\(b\)\101\n(c)) Tj <48 65 6C6C 6F> Tj`,
			[]string{"Tj:a(b)A\n(c)", "Tj:Hello"}},
		{"TJ array", "[(A) -250 (B)] TJ",
			[]string{"TJ:[A -250 B]"}},
		{"dict operand and comment", "/Span <</ActualText (x) /MCID 3>> BDC % note\nEMC",
			[]string{"BDC:Span|<<>>", "EMC:"}},
		{"inline image skipped", "BI /W 2 /H 1 ID \x00EI\xff EI Q (t) Tj",
			[]string{"BI:", "ID:W|2|H|1", "Q:", "Tj:t"}},
		{"odd hex and stray delimiters", ") ] <4> Tj", []string{"Tj:@"}},
		{"unterminated string", "(abc", nil},
		{"name escape", "/A#20B Tf", []string{"Tf:A B"}},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			l := &csLexer{buf: []byte(tc.in)}
			var got []string
			for {
				op, ok := l.next()
				if !ok {
					break
				}
				var ops []string
				for _, o := range l.stack {
					ops = append(ops, operandString(l, o))
				}
				got = append(got, string(op)+":"+strings.Join(ops, "|"))
				if string(op) == "ID" {
					l.skipInlineImage()
				}
				l.reset()
			}
			if strings.Join(got, "\n") != strings.Join(tc.want, "\n") {
				t.Errorf("got %q, want %q", got, tc.want)
			}
		})
	}
}

func operandString(l *csLexer, o csOperand) string {
	switch o.kind {
	case csNum:
		return strconv.FormatFloat(o.num, 'g', -1, 64)
	case csName, csStr:
		return string(o.b)
	case csDict:
		return "<<>>"
	case csArr:
		var parts []string
		for _, e := range l.arr[o.from:o.to] {
			parts = append(parts, operandString(l, e))
		}
		return "[" + strings.Join(parts, " ") + "]"
	}
	return "?"
}

func TestParseCMap(t *testing.T) {
	cm := parseCMap([]byte(`/CIDInit /ProcSet findresource begin 12 dict begin begincmap
1 begincodespacerange <00> <80> endcodespacerange
1 begincodespacerange <8140> <FEFE> endcodespacerange
2 beginbfchar <41> <0041> <0C> <00660069> endbfchar
2 beginbfrange <8140> <8142> <4E00> <8150> <8151> [<0061> <D835DC00>] endbfrange
1 beginbfrange <9000> <9FFF> <5000> endbfrange
1 begincidrange <8140> <817E> 633 endcidrange
endcmap CMapName currentdict /CMap defineresource pop end end`))
	codes := []struct {
		in   string
		code uint32
		n    int
		text string
	}{
		{"A", 0x41, 1, "A"},
		{"\x0c", 0x0c, 1, "fi"},
		{"\x81\x41", 0x8141, 2, "丁"},
		{"\x81\x51", 0x8151, 2, "𝐀"},
		{"\x95\x80", 0x9580, 2, string(rune(0x5580))},
		{"\xff\x00", 0xff, 1, ""},
	}
	for _, c := range codes {
		code, n := cm.space.next([]byte(c.in))
		if code != c.code || n != c.n {
			t.Errorf("next(%q) = %#x,%d want %#x,%d", c.in, code, n, c.code, c.n)
		}
		if got := cm.uni.lookup(code); got != c.text {
			t.Errorf("lookup(%#x) = %q want %q", code, got, c.text)
		}
	}
	if cid := cm.cid[0x8141]; cid != 634 {
		t.Errorf("CID of 8141 = %d want 634", cid)
	}
}

func TestCIDToUnicode(t *testing.T) {
	tests := []struct {
		collection string
		cid        int
		want       rune
	}{
		{"Adobe-GB1", 34, 'A'},   // proportional Latin starts at CID 1 (space)
		{"Adobe-GB1", 3795, '文'}, // GB 2312 hanzi
		{"Adobe-Japan1", 34, 'A'},
		{"Adobe-Korea1", 34, 'A'},
		{"Adobe-CNS1", 34, 'A'},
	}
	for _, tc := range tests {
		tab := cidToUnicode(tc.collection)
		if tc.cid >= len(tab) || rune(tab[tc.cid]) != tc.want {
			got := rune(0)
			if tc.cid < len(tab) {
				got = rune(tab[tc.cid])
			}
			t.Errorf("%s CID %d = %q want %q", tc.collection, tc.cid, got, tc.want)
		}
	}
	if cidToUnicode("Adobe-Identity") != nil {
		t.Error("Identity ordering must have no table")
	}
}
