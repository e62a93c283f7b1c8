package ingest

import (
	"context"
	"os"
	"strings"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

func testTokenizer(t testing.TB) *Tokenizer {
	t.Helper()
	tok, err := NewTokenizer()
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// checkChunks verifies the invariants every split must hold.
func checkChunks(t *testing.T, doc *Document, tok *Tokenizer, opt ChunkOptions, parents []citebook.Parent, chunks []citebook.Chunk) {
	t.Helper()
	full := FullText(doc)
	if len(parents) == 0 || len(chunks) == 0 {
		t.Fatalf("no parents (%d) or chunks (%d)", len(parents), len(chunks))
	}
	pids := map[string]citebook.Parent{}
	for _, p := range parents {
		if _, dup := pids[p.ID]; dup {
			t.Fatalf("duplicate parent id %s", p.ID)
		}
		pids[p.ID] = p
		if full[p.CharStart:p.CharEnd] != p.Text {
			t.Fatalf("parent %s text does not match its offsets", p.ID)
		}
	}
	ids := map[string]bool{}
	prevEnd := 0
	for i, c := range chunks {
		if ids[c.ID] {
			t.Fatalf("duplicate chunk id %s", c.ID)
		}
		ids[c.ID] = true
		if c.Ordinal != i {
			t.Fatalf("chunk %d has ordinal %d", i, c.Ordinal)
		}
		if c.Tokens > opt.MaxTokens {
			t.Fatalf("chunk %d has %d tokens, over %d: %q", i, c.Tokens, opt.MaxTokens, c.Text)
		}
		// Merged paragraphs are counted as the sum plus one per join.
		if n := tok.Count(c.Text); n > opt.MaxTokens || n > c.Tokens || c.Tokens-n > strings.Count(c.Text, "\n\n") {
			t.Fatalf("chunk %d Tokens=%d but text counts %d (max %d)", i, c.Tokens, n, opt.MaxTokens)
		}
		if full[c.CharStart:c.CharEnd] != c.Text {
			t.Fatalf("chunk %d text does not match offsets %d:%d", i, c.CharStart, c.CharEnd)
		}
		p, ok := pids[c.ParentID]
		if !ok || c.CharStart < p.CharStart || c.CharEnd > p.CharEnd {
			t.Fatalf("chunk %d outside its parent", i)
		}
		if citebook.HeadingString(c.HeadingPath) != citebook.HeadingString(p.HeadingPath) {
			t.Fatalf("chunk %d heading %q differs from parent %q", i, c.HeadingPath, p.HeadingPath)
		}
		if c.CharEnd <= prevEnd && i > 0 {
			t.Fatalf("chunk %d does not advance (%d <= %d)", i, c.CharEnd, prevEnd)
		}
		prevEnd = c.CharEnd
	}
}

func TestSplitMobyDick(t *testing.T) {
	data, err := os.ReadFile(corpus.Path(t, "books/mobydick.txt"))
	if err != nil {
		t.Fatal(err)
	}
	doc, err := ParseText(context.Background(), data)
	if err != nil {
		t.Fatal(err)
	}
	tok := testTokenizer(t)
	for _, opt := range []ChunkOptions{DefaultChunkOptions(), {MinTokens: 40, MaxTokens: 80, Overlap: 10}} {
		parents, chunks := Split(doc, "moby", tok, opt)
		checkChunks(t, doc, tok, opt, parents, chunks)
		if len(parents) != len(doc.Sections) {
			t.Errorf("parents %d, sections %d", len(parents), len(doc.Sections))
		}
		for _, c := range chunks {
			if c.PageStart != 0 || len(c.Pages) != 0 || c.Language != "en" {
				t.Fatalf("reflowable chunk has pages or wrong language: %+v", c)
			}
		}
	}
}

func TestSplitChineseSentences(t *testing.T) {
	var sb strings.Builder
	for i := range 60 {
		sb.WriteString("这是第")
		sb.WriteString(strings.Repeat("很长的", i%5+1))
		sb.WriteString("一句话，用来检查切分是否保持句子完整。")
	}
	para := sb.String()
	doc := &Document{Format: citebook.FormatText, Language: "zh", Sections: []Section{
		{HeadingPath: []string{"第一章"}, Blocks: []Block{{Text: para}, {Text: "短段落。"}}},
	}}
	tok := testTokenizer(t)
	opt := ChunkOptions{MinTokens: 60, MaxTokens: 160, Overlap: 40}
	parents, chunks := Split(doc, "zh", tok, opt)
	checkChunks(t, doc, tok, opt, parents, chunks)
	if len(chunks) < 5 {
		t.Fatalf("expected the long paragraph to be split, got %d chunks", len(chunks))
	}
	for i, c := range chunks {
		if !strings.HasSuffix(c.Text, "。") {
			t.Errorf("chunk %d ends mid-sentence: %q", i, c.Text)
		}
		if i > 0 && !strings.HasPrefix(c.Text, "这是第") && !strings.HasPrefix(c.Text, "短段落") {
			t.Errorf("chunk %d starts mid-sentence: %q", i, c.Text)
		}
		if c.Language != "zh" {
			t.Errorf("chunk %d language %q", i, c.Language)
		}
	}
	// Overlap: a split piece repeats the last sentence of the previous one
	// when that sentence fits the overlap budget.
	overlapped := 0
	for i := 1; i < len(chunks)-1; i++ {
		last := lastSentence(chunks[i-1].Text)
		if strings.HasPrefix(chunks[i].Text, last) {
			overlapped++
		} else if tok.Count(last) <= opt.Overlap {
			t.Errorf("chunk %d lacks the overlap %q", i, last)
		}
	}
	if overlapped == 0 {
		t.Errorf("no chunk carries an overlap")
	}
}

func lastSentence(s string) string {
	s = strings.TrimSuffix(s, "。")
	return s[strings.LastIndex(s, "。")+len("。"):] + "。"
}

func TestSplitOversizeWithoutBoundaries(t *testing.T) {
	tests := []struct {
		name string
		text string
	}{
		{"one long word", strings.Repeat("abcdefghij", 300)},
		{"han without punctuation", strings.Repeat("汉字没有标点", 200)},
		{"long lines of code", strings.Repeat("x := compute(a, b, c) + other(d, e, f) * 3\n", 80)},
		{"english sentences", strings.Repeat("The quick brown fox jumps over the lazy dog. ", 120)},
	}
	tok := testTokenizer(t)
	opt := ChunkOptions{MinTokens: 50, MaxTokens: 100, Overlap: 15}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			doc := &Document{Sections: []Section{{HeadingPath: []string{"A"}, Blocks: []Block{{Text: tt.text}}}}}
			parents, chunks := Split(doc, "b", tok, opt)
			checkChunks(t, doc, tok, opt, parents, chunks)
			if chunks[0].CharStart != 0 || chunks[len(chunks)-1].CharEnd != len(tt.text) {
				t.Errorf("chunks do not cover the paragraph")
			}
			for i := 1; i < len(chunks); i++ {
				if chunks[i].CharStart > chunks[i-1].CharEnd {
					t.Errorf("gap between chunk %d and %d", i-1, i)
				}
			}
		})
	}
}

func TestSplitPageMapping(t *testing.T) {
	first := "The first paragraph sits on page ten."
	cross := "This paragraph starts on page ten and runs over the break onto page eleven where it ends."
	breakAt := strings.Index(cross, "onto")
	doc := &Document{
		Format: citebook.FormatPDF,
		Pages:  12,
		Labels: []string{"i", "ii", "", "", "", "", "", "", "", "8", "9", "10"},
		Sections: []Section{{HeadingPath: []string{"Ch"}, Blocks: []Block{
			{Text: first, Pages: []citebook.PageSpan{{Offset: 0, Page: 10}}},
			{Text: cross, Pages: []citebook.PageSpan{{Offset: 0, Page: 10}, {Offset: breakAt, Page: 11}}},
			{Text: "Last words on page twelve.", Pages: []citebook.PageSpan{{Offset: 0, Page: 12, Printed: "x"}}},
		}}},
	}
	tok := testTokenizer(t)
	parents, chunks := Split(doc, "p", tok, DefaultChunkOptions())
	if len(chunks) != 1 || len(parents) != 1 {
		t.Fatalf("got %d chunks, %d parents", len(chunks), len(parents))
	}
	c := chunks[0]
	tests := []struct {
		quote       string
		page        int
		printed     string
		description string
	}{
		{"first paragraph", 10, "8", "first block"},
		{"starts on page ten", 10, "8", "before the break"},
		{"onto page eleven", 11, "9", "after the break"},
		{"Last words", 12, "x", "printed label from the span wins"},
	}
	for _, tt := range tests {
		off := strings.Index(c.Text, tt.quote)
		page, printed := citebook.PageAt(c.Pages, off)
		if page != tt.page || printed != tt.printed {
			t.Errorf("%s: %q maps to %d/%q, want %d/%q", tt.description, tt.quote, page, printed, tt.page, tt.printed)
		}
	}
	if c.PageStart != 10 || c.PageEnd != 12 || c.PrintedStart != "8" || c.PrintedEnd != "x" {
		t.Errorf("range %d-%d (%q-%q)", c.PageStart, c.PageEnd, c.PrintedStart, c.PrintedEnd)
	}
	p := parents[0]
	if p.PageStart != 10 || p.PageEnd != 12 || len(p.Pages) != 3 {
		t.Errorf("parent pages %d-%d %v", p.PageStart, p.PageEnd, p.Pages)
	}
}

func TestSplitStableIDs(t *testing.T) {
	para := func(n int) string {
		return strings.Repeat("Sentence number "+strings.Repeat("x", n%7)+" of a paragraph. ", 25)
	}
	build := func(edit bool) *Document {
		doc := &Document{}
		for s := range 3 {
			sec := Section{HeadingPath: []string{"Chapter", string(rune('A' + s))}}
			for b := range 4 {
				text := para(s*4 + b)
				if edit && s == 1 && b == 2 {
					text = "An edited paragraph. " + text
				}
				sec.Blocks = append(sec.Blocks, Block{Text: text})
			}
			doc.Sections = append(doc.Sections, sec)
		}
		// The same text twice under one heading must still get two IDs.
		repeated := strings.Repeat("The same words again and again. ", 20)
		doc.Sections[2].Blocks = append(doc.Sections[2].Blocks, Block{Text: repeated}, Block{Text: repeated})
		return doc
	}
	tok := testTokenizer(t)
	opt := ChunkOptions{MinTokens: 100, MaxTokens: 200, Overlap: 10}
	p1, c1 := Split(build(false), "book", tok, opt)
	p2, c2 := Split(build(true), "book", tok, opt)
	checkChunks(t, build(true), tok, opt, p2, c2)
	if len(c1) != len(c2) {
		t.Fatalf("edit changed chunk count %d -> %d", len(c1), len(c2))
	}
	for i := range p1 {
		if p1[i].ID != p2[i].ID {
			t.Errorf("parent %d id changed", i)
		}
	}
	full := FullText(build(true))
	editStart := strings.Index(full, "An edited paragraph.")
	editEnd := editStart + len(build(true).Sections[1].Blocks[2].Text)
	changed := 0
	for i := range c1 {
		edited := c2[i].CharStart < editEnd && c2[i].CharEnd > editStart
		switch {
		case edited && c1[i].ID == c2[i].ID:
			t.Errorf("edited chunk %d kept id %s", i, c1[i].ID)
		case edited:
			changed++
		case c1[i].ID != c2[i].ID:
			t.Errorf("unchanged chunk %d got a new id", i)
		}
	}
	if changed == 0 {
		t.Errorf("no chunk covers the edit")
	}
	if n := len(c1); c1[n-1].Text != c1[n-2].Text || c1[n-1].ID == c1[n-2].ID {
		t.Errorf("identical paragraphs under one heading must be two chunks with two IDs")
	}
	// Different books never share chunk IDs.
	_, other := Split(build(false), "other", tok, opt)
	if other[0].ID == c1[0].ID {
		t.Errorf("chunk id does not depend on the book")
	}
}

func BenchmarkSplitMobyDick(b *testing.B) {
	data, err := os.ReadFile(corpus.Path(b, "books/mobydick.txt"))
	if err != nil {
		b.Fatal(err)
	}
	tok := testTokenizer(b)
	b.SetBytes(int64(len(data)))
	for b.Loop() {
		doc, err := ParseText(context.Background(), data)
		if err != nil {
			b.Fatal(err)
		}
		Split(doc, "moby", tok, DefaultChunkOptions())
	}
}
