package index

import (
	"bytes"
	"encoding/json"
	"slices"

	"github.com/citebook/citebook"
)

// buildPlan is what a new version changes relative to the active one.
//
// Stores hold one record per chunk ID, so a chunk kept from the active
// version keeps its record (and its older Version, staying visible to
// readers of both versions). The metadata database keeps one row per
// lifespan, so a kept chunk whose placement moved (ordinal, offsets, pages)
// gets a new row for the new version without touching the stores.
type buildPlan struct {
	embed      []citebook.Chunk // to embed and upsert, with the Version their store record carries
	kept       []string         // in both versions, store record untouched
	removed    []string         // in the active version only: retired, then deleted
	rows       []citebook.Chunk // metadata rows starting at the new version
	retireRows []string         // metadata rows of the active version ending at the new one
}

// plan compares the active version's chunks with the new build's. force
// names chunks whose store records must be rewritten even if unchanged.
func plan(prev, next []citebook.Chunk, version int, force map[string]bool) buildPlan {
	var p buildPlan
	old := make(map[string]citebook.Chunk, len(prev))
	for _, c := range prev {
		old[c.ID] = c
	}
	seen := make(map[string]bool, len(next))
	for _, c := range next {
		seen[c.ID] = true
		row := c
		row.Version, row.Retired = version, 0
		o, ok := old[c.ID]
		switch {
		case !ok:
			p.embed = append(p.embed, row)
			p.rows = append(p.rows, row)
		case force[c.ID] || !sameSearch(o, c):
			// Rewritten in place: the record stays visible to the active
			// version, with the new access groups or parent.
			rec := row
			rec.Version = o.Version
			p.embed = append(p.embed, rec)
			p.rows = append(p.rows, row)
			p.retireRows = append(p.retireRows, c.ID)
		default:
			p.kept = append(p.kept, c.ID)
			if !samePlacement(o, c) {
				p.rows = append(p.rows, row)
				p.retireRows = append(p.retireRows, c.ID)
			}
		}
	}
	for _, c := range prev {
		if !seen[c.ID] {
			p.removed = append(p.removed, c.ID)
			p.retireRows = append(p.retireRows, c.ID)
		}
	}
	return p
}

// sameSearch reports whether a store record of o serves c: same text (the
// ID guarantees it), index-only context, parent, headings, access and
// embedding model.
func sameSearch(o, c citebook.Chunk) bool {
	return o.Text == c.Text && o.IndexContext == c.IndexContext && o.ParentID == c.ParentID && slices.Equal(o.HeadingPath, c.HeadingPath) &&
		o.Tenant == c.Tenant && slices.Equal(normGroups(o.Groups), normGroups(c.Groups)) &&
		o.Embedding == c.Embedding && o.Language == c.Language
}

// samePlacement reports whether c sits where o did in the book.
func samePlacement(o, c citebook.Chunk) bool {
	return o.Ordinal == c.Ordinal && o.CharStart == c.CharStart && o.CharEnd == c.CharEnd &&
		o.PageStart == c.PageStart && o.PageEnd == c.PageEnd && o.PrintedStart == c.PrintedStart &&
		o.PrintedEnd == c.PrintedEnd && o.Tokens == c.Tokens && slices.Equal(o.Pages, c.Pages)
}

// planParents returns the parent rows the new version needs (new or
// changed) and the IDs whose active rows end (changed or removed).
func planParents(prev, next []citebook.Parent) (rows []citebook.Parent, retire []string) {
	old := make(map[string][]byte, len(prev))
	for _, p := range prev {
		b, _ := json.Marshal(p)
		old[p.ID] = b
	}
	seen := make(map[string]bool, len(next))
	for _, p := range next {
		seen[p.ID] = true
		b, _ := json.Marshal(p)
		o, ok := old[p.ID]
		if ok && bytes.Equal(o, b) {
			continue
		}
		rows = append(rows, p)
		if ok {
			retire = append(retire, p.ID)
		}
	}
	for _, p := range prev {
		if !seen[p.ID] {
			retire = append(retire, p.ID)
		}
	}
	return rows, retire
}
