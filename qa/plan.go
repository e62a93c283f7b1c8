package qa

import (
	"context"
	"regexp"
	"strings"
)

// queries returns what to search for: the original question first, then the
// planner's sub-queries when asked for and available. A failing planner only
// costs the split, never the answer.
func (p *Pipeline) queries(ctx context.Context, req Request) []string {
	out := []string{req.Question}
	if !req.Split || p.deps.Planner == nil {
		// Without a model, a question that plainly asks two things is
		// also searched as its parts: one search for both finds the
		// passages that hold a little of each, not the one for each.
		if parts := coordinated(req.Question, p.deps.Terms); len(parts) > 1 {
			out = append(out, parts...)
		}
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

// coordination marks where a question plainly asks a second thing: a
// question mark followed by more text, "and then", a semicolon, or ", and"
// before a question word ("…, and how do I keep the shutdown …"). A bare
// "and" is left alone: it joins the things one question asks about far
// more often ("the length of an object and its mode") than two questions.
var coordination = regexp.MustCompile(`(?i)[?？]\s*|;\s+|；|,?\s+and\s+then\s+|,\s+and\s+(how|what|which|where|when|why|who|can|could|should|is|are|do|does)\b`)

// leadIn is the statement sentences that set the scene before a question
// ("I have to shut down a shared server over SSH."): kept with the whole
// question, dropped from its parts.
var leadIn = regexp.MustCompile(`^(?:[^.?!。？！]*[.!。！]\s+)+`)

// minPartTerms is the key terms each part of a split question must have;
// with fewer, a part is a fragment ("and then?"), and the question is
// searched and judged whole.
const minPartTerms = 2

// coordinated splits a question into the parts it plainly asks (see
// coordination), in order, without a model; nil unless there are two or
// three parts, each with at least minPartTerms key terms. It is
// conservative on purpose: a part is searched, judged and answered on its
// own only when the whole question is not answerable as one.
func coordinated(question string, terms func(string) []string) []string {
	var parts []string
	start := 0
	cut := func(end int, mark bool) {
		part := strings.TrimSpace(leadIn.ReplaceAllString(strings.TrimSpace(question[start:end]), ""))
		if part != "" && (mark || asks(part)) {
			parts = append(parts, part) // a statement part sets the scene: not searched alone
		}
	}
	for _, m := range coordination.FindAllStringSubmatchIndex(question, -1) {
		cut(m[0], strings.ContainsAny(question[m[0]:m[1]], "?？"))
		start = m[1]
		if m[2] >= 0 {
			start = m[2] // the question word starts the next part
		}
	}
	cut(len(question), false)
	if len(parts) < 2 || len(parts) > 3 {
		return nil
	}
	for _, part := range parts {
		if len(questionTerms(part, terms)) < minPartTerms {
			return nil
		}
	}
	return parts
}

// questionStart matches the words an English question starts with, and
// the Chinese words that make a clause a question.
var questionStart = regexp.MustCompile(`(?i)^(how|what|which|where|when|why|who|whom|whose|can|could|should|would|will|is|are|was|were|do|does|did|has|have)\b|吗|呢|什么|哪|怎|如何|几|多少|能不能|是否|为什么|为何`)

// asks reports whether a part of a question is itself a question, not a
// statement setting the scene ("I defined my own function called t") or
// the second verb of one ("… and then multiply the inverse by b").
func asks(part string) bool {
	if hasCJK(part) {
		return questionStart.MatchString(part) || strings.ContainsAny(part, "?？")
	}
	return questionStart.MatchString(part)
}
