package index

import (
	"strings"
	"testing"

	"github.com/citebook/citebook"
)

// TestPlanReembedsChangedIndexContext: a chunk whose text is unchanged but
// whose index-only context changed (a table header the chunker now repeats)
// keeps its ID, so the plan must rewrite its store records — the vector and
// the postings are built from the context too — while an unchanged chunk is
// kept as it is.
func TestPlanReembedsChangedIndexContext(t *testing.T) {
	c := func(id, ctx string) citebook.Chunk {
		return citebook.Chunk{ID: id, BookID: "b", Version: 1, ParentID: "p", HeadingPath: []string{"Consolidated Balance Sheet"},
			Text: "Long-term debt 13,411 12,096", IndexContext: ctx, Tenant: "t", Embedding: "builtin"}
	}
	prev := []citebook.Chunk{c("same", "(Millions) 2018 2017"), c("new", "")}
	next := []citebook.Chunk{c("same", "(Millions) 2018 2017"), c("new", "(Millions) 2018 2017")}
	p := plan(prev, next, 2, nil)
	if len(p.kept) != 1 || p.kept[0] != "same" {
		t.Errorf("kept %v, want [same]", p.kept)
	}
	if len(p.embed) != 1 || p.embed[0].ID != "new" || p.embed[0].IndexContext != "(Millions) 2018 2017" {
		t.Errorf("embedded %+v, want the chunk whose context changed", p.embed)
	}
}

// TestEmbedText: a chunk without index context embeds exactly as before (a
// vector cache keyed on the text keeps serving it); a continued table's
// context comes between its headings and its text.
func TestEmbedText(t *testing.T) {
	ch := citebook.Chunk{HeadingPath: []string{"3M", "Consolidated Statement of Cash Flows"}, Text: "Purchases of PP&E (1,577) (1,373)"}
	if got, want := EmbedText(ch), "3M > Consolidated Statement of Cash Flows\n\nPurchases of PP&E (1,577) (1,373)"; got != want {
		t.Errorf("EmbedText = %q, want %q", got, want)
	}
	ch.IndexContext = "(Millions) 2018 2017"
	got := EmbedText(ch)
	if !strings.HasPrefix(got, "3M > Consolidated Statement of Cash Flows\n\n(Millions) 2018 2017\n\n") || !strings.HasSuffix(got, ch.Text) {
		t.Errorf("EmbedText with context = %q", got)
	}
	ch.HeadingPath = nil
	if got := EmbedText(ch); got != "(Millions) 2018 2017\n\n"+ch.Text {
		t.Errorf("EmbedText without headings = %q", got)
	}
}
