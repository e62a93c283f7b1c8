package qa

import (
	"context"
	"strings"
)

// queries returns what to search for: the original question first, then the
// planner's sub-queries when asked for and available. A failing planner only
// costs the split, never the answer.
func (p *Pipeline) queries(ctx context.Context, req Request) []string {
	out := []string{req.Question}
	if !req.Split || p.deps.Planner == nil {
		return out
	}
	subs, err := p.deps.Planner.SubQueries(ctx, req.Question)
	if err != nil {
		p.log.WarnContext(ctx, "sub-query planning failed; searching the question alone", "err", err)
		return out
	}
	seen := map[string]bool{strings.ToLower(strings.TrimSpace(req.Question)): true}
	for _, q := range subs {
		q = strings.TrimSpace(q)
		key := strings.ToLower(q)
		if q == "" || seen[key] {
			continue
		}
		seen[key] = true
		out = append(out, q)
		if len(out) > p.opts.SplitQueries {
			break
		}
	}
	return out
}
