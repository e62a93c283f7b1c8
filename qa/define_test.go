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

	require.Equal(t, "What was 3M's capex in FY2018? (capital expenditures)", expand("What was 3M's capex in FY2018?", defs))
	require.Equal(t, "What were the capital expenditures? (capex)", expand("What were the capital expenditures?", defs))
	require.Equal(t, "How does R print?", expand("How does R print?", defs), "nothing defined applies")
	require.Equal(t, "Is DPO (days payable outstanding) up?", expand("Is DPO (days payable outstanding) up?", defs), "already spelled out")
}
