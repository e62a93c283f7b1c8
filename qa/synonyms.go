package qa

import (
	"slices"
	"strings"

	"github.com/citebook/citebook/analysis"
)

// DefaultSynonyms is the configured vocabulary questions are expanded with
// besides what the books define: groups of phrases that name the same thing
// in financial statements, where a reader's word ("capital expenditure",
// "the income statement") and the filing's ("Purchases of property, plant
// and equipment", "Consolidated Statements of Operations") share no term.
// It is standard accounting usage (US GAAP and IFRS statement titles and
// line items), not fitted to any question set; a library of other books
// sets Options.Synonyms to its own groups, or to an empty list for none.
// Every phrase of a group expands to the others.
var DefaultSynonyms = [][]string{
	{"cash flow statement", "statement of cash flows"},
	{"income statement", "statement of operations", "statement of income", "statement of earnings",
		"profit and loss statement", "statement of comprehensive income"},
	{"balance sheet", "statement of financial position", "statement of financial condition"},
	{"capital expenditure", "capex", "purchases of property, plant and equipment",
		"payments for property, plant and equipment", "additions to property and equipment", "capital spending"},
	{"cost of goods sold", "cogs", "cost of sales", "cost of revenue"},
	{"property, plant and equipment", "pp&e", "ppne", "fixed assets", "property and equipment"},
	{"revenue", "net sales", "net revenues", "total revenues"},
	{"net income", "net earnings"},
	{"operating income", "operating profit", "income from operations", "earnings from operations"},
	{"gross margin", "gross profit"},
	{"selling, general and administrative", "sg&a"},
	{"depreciation and amortization", "d&a"},
	{"earnings per share", "eps"},
	{"shareholders' equity", "stockholders' equity"},
	{"accounts receivable", "trade receivables"},
	{"accounts payable", "trade payables"},
}

// PageKind is a kind of page a library's pages are titled by, with
// the items it reports: a question that names an item ("gross margin",
// "capital expenditure") asks about a page titled by one of Titles, which
// rank higher (Fusion.Heading) even when the question never names the
// statement.
type PageKind struct {
	Titles []string `json:"titles"`
	Items  []string `json:"items"`
}

// DefaultStatements are the three primary financial statements and the
// line items and ratios computed from them, from standard accounting usage
// (a ratio is listed with the statement its inputs are on, such as the
// quick ratio with the balance sheet). Not fitted to any question set; set
// Options.Statements to an empty list to turn it off.
var DefaultStatements = []PageKind{
	{Titles: []string{"income statement", "statement of operations", "statement of income", "statement of earnings",
		"statement of comprehensive income"},
		Items: []string{"revenue", "net sales", "cost of sales", "cost of goods sold", "cogs", "gross margin", "gross profit",
			"operating income", "operating margin", "operating profit", "net income", "net earnings", "net profit margin",
			"earnings per share", "eps", "effective tax rate", "provision for income taxes", "interest expense",
			"research and development", "selling, general and administrative", "sg&a", "ebit", "ebitda"}},
	{Titles: []string{"balance sheet", "statement of financial position", "statement of financial condition"},
		Items: []string{"total assets", "current assets", "current liabilities", "total liabilities", "working capital",
			"quick ratio", "current ratio", "inventories", "inventory", "accounts receivable", "accounts payable",
			"property, plant and equipment", "pp&e", "ppne", "fixed assets", "long-term debt", "total debt",
			"shareholders' equity", "stockholders' equity", "goodwill", "cash and cash equivalents", "return on assets"}},
	{Titles: []string{"cash flow statement", "statement of cash flows"},
		Items: []string{"capital expenditure", "capex", "free cash flow", "operating activities", "investing activities",
			"financing activities", "dividends paid", "repurchases of common stock", "depreciation and amortization", "d&a"}},
}

// synonymMax bounds the phrases one question gains from the vocabulary.
const synonymMax = 6

// thesaurus is a vocabulary ready for matching: each phrase as its terms,
// space-separated and padded, so a phrase matches a question holding its
// terms in a row ("statements of cash flows" matches "statement of cash
// flow" after stemming).
type thesaurus [][]synonym

type synonym struct {
	phrase, terms string
}

func newThesaurus(groups [][]string) thesaurus {
	out := make(thesaurus, 0, len(groups))
	for _, g := range groups {
		var set []synonym
		for _, ph := range g {
			ts := analysis.Terms(ph)
			if len(ts) == 0 {
				continue
			}
			set = append(set, synonym{phrase: ph, terms: " " + strings.Join(ts, " ") + " "})
		}
		if len(set) > 1 {
			out = append(out, set)
		}
	}
	return out
}

// aliases lists, for each group the question names, every other phrase of
// the group as a stand-in for the named phrase's content terms. Terms and
// phrases are content terms (analysis.ContentTerms), as key terms are.
func (th thesaurus) aliases(question string) []Alias {
	qterms := " " + strings.Join(analysis.Terms(question), " ") + " "
	var out []Alias
	for _, g := range th {
		for _, named := range g {
			if !strings.Contains(qterms, named.terms) {
				continue
			}
			own := analysis.ContentTerms(strings.Fields(named.terms))
			for _, s := range g {
				if s.terms == named.terms {
					continue
				}
				if ph := analysis.ContentTerms(strings.Fields(s.terms)); len(ph) > 0 && len(own) > 0 {
					out = append(out, Alias{Terms: own, Phrase: ph})
				}
			}
		}
	}
	return out
}

// related lists the phrases of the groups the question names (by any of
// their phrases) that the question does not already hold, in vocabulary
// order.
func (th thesaurus) related(qterms string) []string {
	var add []string
	for _, g := range th {
		named := false
		for _, s := range g {
			if strings.Contains(qterms, s.terms) {
				named = true
				break
			}
		}
		if !named {
			continue
		}
		for _, s := range g {
			if !strings.Contains(qterms, s.terms) {
				add = append(add, s.phrase)
				if len(add) == synonymMax {
					return add
				}
			}
		}
	}
	return add
}

// titleIndex is Options.Statements ready for matching: per statement its
// items as padded term strings and its titles squashed (see squash).
type titleIndex []titled

type titled struct {
	items, titles []string
	// written and titleTerms are the titles as configured and as padded
	// term strings.
	written, titleTerms []string
}

func newTitleIndex(sts []PageKind) titleIndex {
	out := make(titleIndex, 0, len(sts))
	for _, st := range sts {
		var e titled
		for _, it := range append(slices.Clone(st.Titles), st.Items...) {
			if ts := analysis.Terms(it); len(ts) > 0 {
				e.items = append(e.items, " "+strings.Join(ts, " ")+" ")
			}
		}
		for _, t := range st.Titles {
			if sq := squash(t); sq != "" {
				e.titles = append(e.titles, sq)
				e.written = append(e.written, t)
				e.titleTerms = append(e.titleTerms, " "+strings.Join(analysis.Terms(t), " ")+" ")
			}
		}
		if len(e.items) > 0 && len(e.titles) > 0 {
			out = append(out, e)
		}
	}
	return out
}

// named returns the titles (as written) of the statements the question
// names by an item but not by a title, which the expanded query adds so
// their pages reach the candidates.
func (ti titleIndex) named(qterms string) []string {
	var out []string
	for _, e := range ti {
		if slices.ContainsFunc(e.titleTerms, func(t string) bool { return strings.Contains(qterms, t) }) {
			continue
		}
		if slices.ContainsFunc(e.items, func(t string) bool { return strings.Contains(qterms, t) }) {
			out = append(out, e.written...)
		}
	}
	return out
}

// written returns the titles as configured of the page kinds the question
// names, by title or by item.
func (ti titleIndex) written(qterms string) []string {
	var out []string
	for _, e := range ti {
		if slices.ContainsFunc(e.items, func(t string) bool { return strings.Contains(qterms, t) }) {
			out = append(out, e.written...)
		}
	}
	return out
}

// titles returns the squashed titles of the statements the question names,
// by title or by item.
func (ti titleIndex) titles(qterms string) []string {
	var out []string
	for _, e := range ti {
		for _, it := range e.items {
			if strings.Contains(qterms, it) {
				out = append(out, e.titles...)
				break
			}
		}
	}
	return out
}

// squash joins a text's terms without spaces, so a heading matches a title
// whatever its spacing: PDFs print titles letter-spaced, and the text layer
// can split a word ("Consolidated Balance Shee t", "Cash Flow s").
func squash(s string) string { return strings.Join(analysis.Terms(s), "") }
