package qa

import (
	"regexp"
	"slices"
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/analysis"
)

// A book's table of contents names every chapter, so it shares words with
// any broad question ("What animals lived near the pond?" matched Walden's
// contents page through "Brute Neighbors", "Winter Animals", "The Pond In
// Winter") and was quoted as the answer; a back-of-book index ("attach …
// 32") likewise. They are navigation, not evidence: retrieval drops them
// (reason "contents") before the context is taken,
// unless the question asks about the book's layout (asksStructure).

// asksStructure matches a question about the book's layout ("What are the
// chapters of the book?", "Which section covers …?"): its contents page is
// evidence then, and stays a candidate like any chunk.
var asksStructure = regexp.MustCompile(`(?i)\b(chapters?|sections?|contents)\b|目录|章节`)

// contentsHeadings are the titles of a contents page, as the outline or
// the page's own heading names it.
var contentsHeadings = []string{"contents", "table of contents", "目录", "目 录", "目次"}

// leaderEntry is an entry of a contents or index page: a title, a leader
// and its page number ("5.1 Arrays … 20", "1.1 概述 … 1", "%*% … 24").
// A page number stands alone: "Two casks of lime … 2.40" in Walden's
// accounts is a price.
var leaderEntry = regexp.MustCompile(`(?:…|\. \.)\s*(?:\d+|[ivxlc]+)(?:\s|$)`)

// minLeaders is how many leader entries make a chunk a contents page when
// its heading does not say so (R-intro's contents sits under the manual's
// title); a passage rarely holds three "… 20".
const minLeaders = 3

// isContents reports whether a chunk is a table of contents (or an index
// set with leaders): it holds minLeaders entries with leaders and page
// numbers, or its heading path names one and it holds minLeaders leaders
// or no sentence of prose (10-K filings repeat "Table of Contents" above
// every page of body text).
func isContents(c *citebook.Chunk) bool {
	leaders := strings.Count(c.Text, "…") + strings.Count(c.Text, ". .")
	if leaders >= minLeaders && len(leaderEntry.FindAllStringIndex(c.Text, minLeaders)) >= minLeaders {
		return true
	}
	named := slices.ContainsFunc(c.HeadingPath, func(h string) bool {
		return slices.ContainsFunc(contentsHeadings, func(t string) bool { return strings.EqualFold(strings.TrimSpace(h), t) })
	})
	if !named {
		return false
	}
	if leaders >= minLeaders {
		return true // entries whose page numbers the layout moved ("示例。 … 1.2 3在…")
	}
	for _, s := range analysis.Sentences(c.Text) {
		if proseSentence(s) {
			return false
		}
	}
	return true
}

// proseSentence reports a sentence of running text, not a contents entry
// ("Item 1A. Risk Factors.", "Lockheed Martin Corporation Form 10-K For
// the Year Ended December 31, 2022 Table of Contents PART I Page ITEM
// 1."): it ends as a sentence ends and holds six words or more, most of
// them in lower case, or ten CJK characters ending with a CJK full stop.
func proseSentence(s string) bool {
	r, _ := utf8.DecodeLastRuneInString(s)
	switch {
	case strings.ContainsRune("。！？", r):
		n := 0
		for _, c := range s {
			if analysis.IsCJK(c) {
				n++
			}
		}
		return n >= 10
	case !strings.ContainsRune(".!?", r):
		return false
	}
	words := strings.Fields(s)
	lower := 0
	for _, w := range words {
		if c, _ := utf8.DecodeRuneInString(w); unicode.IsLower(c) {
			lower++
		}
	}
	return len(words) >= 6 && 2*lower >= len(words)
}
