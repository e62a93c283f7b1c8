package qa

import (
	"testing"

	"github.com/stretchr/testify/require"
)

func TestDefine(t *testing.T) {
	defs := definitions{}
	define(`Purchases of property, plant and equipment (PP&E) were $1,577 million. We use capital expenditures (capex)
as a measure. Days payable outstanding (DPO) rose. The Securities and Exchange Commission (SEC) requires it.
Revenue grew (see Note 3) and (USD) amounts are in millions. Earnings per share (EPS) fell.
Set the kernel's printk level of console logging level (console) and the Linux kernel (Linux).
Groups of users (group), information technology (IT), research and related expenses (R&D), u remount all (umount).`, defs)
	want := map[string]string{
		"pp&e":  "property, plant and equipment",
		"capex": "capital expenditures",
		"dpo":   "days payable outstanding",
		"sec":   "securities and exchange commission",
		"eps":   "earnings per share",
	}
	got := map[string]string{}
	for k, d := range defs {
		got[k] = d.long
	}
	require.Equal(t, want, got)

	require.Equal(t, "What was 3M's capex in FY2018? (capital expenditures)", expand("What was 3M's capex in FY2018?", defs, nil, nil))
	require.Equal(t, "What were the capital expenditures? (capex)", expand("What were the capital expenditures?", defs, nil, nil))
	require.Equal(t, "How does R print?", expand("How does R print?", defs, nil, nil), "nothing defined applies")
	require.Equal(t, "Is DPO (days payable outstanding) up?", expand("Is DPO (days payable outstanding) up?", defs, nil, nil), "already spelled out")
}

// The configured vocabulary names a statement or line item the way filings
// title it, and adds nothing to a question that names none of its groups.
func TestExpandSynonyms(t *testing.T) {
	th := newThesaurus(DefaultSynonyms)
	require.Equal(t,
		"What is 3M's FY2018 capital expenditure per the cash flow statement? (statement of cash flows; capex; purchases of property, plant and equipment; payments for property, plant and equipment; additions to property and equipment; capital spending)",
		expand("What is 3M's FY2018 capital expenditure per the cash flow statement?", nil, th, nil))
	require.Equal(t, "Show the consolidated statements of operations (income statement; statement of income; statement of earnings; profit and loss statement; statement of comprehensive income)",
		expand("Show the consolidated statements of operations", nil, th, nil), "plural and stemmed forms match")
	require.Equal(t, "How does R print a data frame?", expand("How does R print a data frame?", nil, th, nil))
	require.Empty(t, newThesaurus([][]string{{"alone"}, {"", "?"}}), "a group needs two phrases with terms")

	ti := newTitleIndex(DefaultStatements)
	require.Equal(t, "Did Boeing's gross margin improve? (gross profit; income statement; statement of operations; statement of income; statement of earnings; statement of comprehensive income)",
		expand("Did Boeing's gross margin improve?", nil, th, ti), "a line item names its statement")
	require.Equal(t, "Total assets on the balance sheet? (statement of financial position; statement of financial condition)",
		expand("Total assets on the balance sheet?", nil, th, ti), "a statement named by its title is not added again")
}

// A page kind's title matches a heading whatever the PDF did to its
// spacing.
func TestPageKindTitles(t *testing.T) {
	ti := newTitleIndex(DefaultStatements)
	titles := ti.titles(" what is the quick ratio ")
	require.Contains(t, titles, "balancesheet")
	require.Contains(t, squash("Consolidated Balance Shee t"), "balancesheet")
	require.Contains(t, squash("CONSOLIDATED STATEMENTS OF CASH FLOW S"), "statementofcashflow")
	require.Empty(t, ti.titles(" how does r print a data frame "))
}
