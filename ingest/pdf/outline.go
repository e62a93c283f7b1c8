package pdf

import (
	"context"
	"regexp"
	"strings"

	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/ledongthuc/pdf"
)

// pdfOutlineItem is an outline entry with its ancestry, so sections can carry
// the full heading path.
type pdfOutlineItem struct {
	parsing.OutlineEntry
	path []string
	dest pdfDest // Page is filled from it once the page tree is indexed
}

// pdfDest is the page a destination names, before the page tree is known:
// an object reference ("12 0 R") or, failing that, a 1-based page index.
type pdfDest struct {
	ref   string
	index int
}

// refKey renders the indirect reference an array element or dictionary entry
// holds ("12 0 R"). The library resolves references transparently, so the
// printed form of the unresolved container is the only stable identity of a
// page object that a destination can be matched against.
func refKeys(arr pdf.Value) []string {
	s := arr.String()
	if !strings.HasPrefix(s, "[") {
		return nil
	}
	var keys []string
	f := strings.Fields(strings.Trim(s, "[]"))
	for i := 0; i+2 < len(f); i++ {
		if f[i+2] == "R" && isDecimal(f[i]) && isDecimal(f[i+1]) {
			keys = append(keys, f[i]+" "+f[i+1]+" R")
			i += 2
		}
	}
	return keys
}

// destTarget reads the page a destination array points at.
func destTarget(dest pdf.Value) pdfDest {
	if dest.Kind() == pdf.Dict {
		dest = dest.Key("D")
	}
	if dest.Kind() != pdf.Array || dest.Len() == 0 {
		return pdfDest{}
	}
	// The page is named by reference; reading it off the printed array
	// avoids loading the page object.
	f := strings.Fields(strings.TrimPrefix(dest.String(), "["))
	if len(f) >= 3 && strings.HasPrefix(f[2], "R") {
		return pdfDest{ref: f[0] + " " + f[1] + " R"}
	}
	if first := dest.Index(0); first.Kind() == pdf.Integer { // a page index
		return pdfDest{index: int(first.Int64()) + 1}
	}
	return pdfDest{}
}

// destPage returns the 1-based physical page of a destination, 0 when it
// names no page of the document.
func (x *pdfExtractor) destPage(d pdfDest) int {
	if d.ref != "" {
		return x.pageByRef[d.ref]
	}
	if d.index >= 1 && d.index <= len(x.pages) {
		return d.index
	}
	return 0
}

// namedDest resolves a named destination through the /Names /Dests name
// tree or the catalog's /Dests dictionary (PDF 1.1).
func (x *pdfExtractor) namedDest(name string) pdf.Value {
	if x.names == nil {
		x.names = &nameNode{v: x.root.Key("Names").Key("Dests")}
	}
	if v := x.names.lookup(name, 0, new(int)); !v.IsNull() {
		return v
	}
	if d := x.root.Key("Dests"); d.Kind() == pdf.Dict {
		return d.Key(name)
	}
	return pdf.Value{}
}

// nameNode is a name tree node whose children are loaded when first
// searched. Lookups descend by each child's /Limits, so a book that names
// every label (thousands of leaves, each a load that may inflate an object
// stream) only pays for the branches its outline points into.
type nameNode struct {
	v      pdf.Value
	names  pdf.Value // leaf entries: key, value, key, value…
	kids   []*nameNode
	lo, hi string
	loaded bool
}

// maxNameLoads bounds the nodes one lookup may visit, and the children one
// node may have, in a malformed tree.
const maxNameLoads = 4096

func (n *nameNode) lookup(name string, depth int, visits *int) pdf.Value {
	*visits++
	if depth > 32 || *visits > maxNameLoads || n.v.Kind() != pdf.Dict {
		return pdf.Value{}
	}
	if !n.loaded {
		n.loaded = true
		n.names = n.v.Key("Names")
		kids := n.v.Key("Kids")
		for i := 0; i < kids.Len() && i < maxNameLoads; i++ {
			k := &nameNode{v: kids.Index(i)}
			lim := k.v.Key("Limits")
			if lim.Len() == 2 {
				k.lo, k.hi = lim.Index(0).RawString(), lim.Index(1).RawString()
			}
			n.kids = append(n.kids, k)
		}
	}
	for i := 0; i+1 < n.names.Len(); i += 2 {
		if n.names.Index(i).RawString() == name {
			return n.names.Index(i + 1)
		}
	}
	for _, k := range n.kids {
		// Without limits (malformed) every child has to be searched.
		if k.lo == "" && k.hi == "" || k.lo <= name && name <= k.hi {
			if v := k.lookup(name, depth+1, visits); !v.IsNull() {
				return v
			}
		}
	}
	return pdf.Value{}
}

// itemDest finds the page an outline item points at, through /Dest or a GoTo
// action, following named destinations.
func (x *pdfExtractor) itemDest(item pdf.Value) pdfDest {
	dest := item.Key("Dest")
	if dest.IsNull() {
		a := item.Key("A")
		if a.Key("S").Name() != "GoTo" {
			return pdfDest{}
		}
		dest = a.Key("D")
	}
	switch dest.Kind() {
	case pdf.Name:
		dest = x.namedDest(dest.Name())
	case pdf.String:
		dest = x.namedDest(dest.RawString())
	}
	return destTarget(dest)
}

var outlineLink = regexp.MustCompile(`/(First|Next) (\d+ \d+) R`)

// readOutline flattens the bookmark tree in document order. Every entry is
// visited once, so cycles and shared nodes in malformed files end the walk.
func (x *pdfExtractor) readOutline(ctx context.Context) []pdfOutlineItem {
	var items []pdfOutlineItem
	seen := map[string]bool{}
	// link returns the reference a /First or /Next entry holds, read from the
	// printed dictionary since the library resolves references silently.
	link := func(d pdf.Value, key string) string {
		for _, m := range outlineLink.FindAllStringSubmatch(d.String(), -1) {
			if m[1] == key {
				return m[2]
			}
		}
		return ""
	}
	var walk func(parent pdf.Value, level int, path []string)
	walk = func(parent pdf.Value, level int, path []string) {
		if level > 16 {
			return
		}
		key := "First"
		for it := parent.Key("First"); it.Kind() == pdf.Dict && len(items) < 20000 && ctx.Err() == nil; it = it.Key("Next") {
			if ref := link(parent, key); ref != "" {
				if seen[ref] {
					return
				}
				seen[ref] = true
			}
			parent, key = it, "Next"
			title := strings.TrimSpace(pdfText(it.Key("Title")))
			p := append(append([]string(nil), path...), title)
			items = append(items, pdfOutlineItem{
				OutlineEntry: parsing.OutlineEntry{Title: title, Level: level},
				path:         p,
				dest:         x.itemDest(it),
			})
			walk(it, level+1, p)
		}
	}
	walk(x.root.Key("Outlines"), 0, nil)
	return items
}
