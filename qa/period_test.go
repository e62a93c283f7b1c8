package qa

import (
	"context"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest"
	"github.com/citebook/citebook/internal/corpus"
)

// TestCoverPeriod reads the period every FinanceBench dev filing states on
// its cover, as routing reads it: the filing parsed and chunked by ingest,
// its first page's chunks and their headings (cover, coverText). Every filing of the corpus is
// listed, so a new one without an expectation fails the test.
func TestCoverPeriod(t *testing.T) {
	dir := corpus.Path(t, "financebench/pdfs")
	want := map[string]string{
		"3M_2018_10K":                              "10-K FY2018 2018-12-31",
		"3M_2022_10K":                              "10-K FY2022 2022-12-31",
		"ACTIVISIONBLIZZARD_2019_10K":              "10-K FY2019 2019-12-31",
		"AMAZON_2017_10K":                          "10-K FY2017 2017-12-31",
		"AMAZON_2019_10K":                          "10-K FY2019 2019-12-31",
		"AMERICANEXPRESS_2022_10K":                 "10-K FY2022 2022-12-31",
		"BESTBUY_2017_10K":                         "10-K FY2017 2017-01-28", // a retailer's year ending in January
		"BESTBUY_2019_10K":                         "10-K FY2019 2019-02-02",
		"BESTBUY_2023_10K":                         "10-K FY2023 2023-01-28",
		"BESTBUY_2024Q2_10Q":                       "10-Q FY2023/2024 2023-07-29", // fiscal Q2 2024: quarter unknown
		"BOEING_2018_10K":                          "10-K FY2018 2018-12-31",
		"BOEING_2022_10K":                          "10-K FY2022 2022-12-31",
		"COCACOLA_2017_10K":                        "10-K FY2017 2017-12-31",
		"COSTCO_2021_10K":                          "10-K FY2021 2021-08-29",
		"GENERALMILLS_2019_10K":                    "10-K FY2019 2019-05-26",
		"GENERALMILLS_2020_10K":                    "10-K FY2020 2020-05-31",
		"GENERALMILLS_2022_10K":                    "10-K FY2022 2022-05-29",
		"JOHNSON_JOHNSON_2022Q4_EARNINGS":          "quarterly Q4 FY2022",    // a release of results, no form
		"JOHNSON_JOHNSON_2022_10K":                 "10-K FY2022 2023-01-01", // a 52-week year ending on January 1
		"JOHNSON_JOHNSON_2023Q2_EARNINGS":          "quarterly Q2 FY2023",
		"JOHNSON_JOHNSON_2023_8K_dated-2023-08-30": "8-K FY2023 2023-08-30",
		"LOCKHEEDMARTIN_2020_10K":                  "10-K FY2020 2020-12-31",
		"LOCKHEEDMARTIN_2021_10K":                  "10-K FY2021 2021-12-31",
		"LOCKHEEDMARTIN_2022_10K":                  "10-K FY2022 2022-12-31",
		"MICROSOFT_2016_10K":                       "10-K FY2016 2016-06-30",
		"MICROSOFT_2023_10K":                       "10-K FY2023 2023-06-30",
		"PFIZER_2021_10K":                          "10-K FY2021 2021-12-31",
		"Pfizer_2023Q2_10Q":                        "10-Q Q2 FY2023/2024 2023-07-02",
		"VERIZON_2021_10K":                         "annual FY2021 2021-12-31", // its "FORM 10-K" is not read from the first two pages alone
		"VERIZON_2022_10K":                         "10-K FY2022 2022-12-31",
	}
	files, err := filepath.Glob(filepath.Join(dir, "*.pdf"))
	require.NoError(t, err)
	require.NotEmpty(t, files)
	tok, err := ingest.NewTokenizer()
	require.NoError(t, err)
	// The first two pages are all routing reads of a filing.
	first2 := ingest.ParseOptions{Limits: ingest.Limits{MaxPages: 2}}
	got := map[string]string{}
	var mu sync.Mutex
	var wg sync.WaitGroup
	sem := make(chan struct{}, 2)
	for _, f := range files {
		wg.Add(1)
		go func() {
			defer wg.Done()
			sem <- struct{}{}
			defer func() { <-sem }()
			id := strings.TrimSuffix(filepath.Base(f), ".pdf")
			doc, err := first2.ParseFile(context.Background(), f)
			if err != nil {
				t.Errorf("%s: %v", id, err)
				return
			}
			_, chunks := ingest.Split(doc, id, tok, ingest.ChunkOptions{})
			p, _ := coverPeriod(coverText(cover(chunks)))
			mu.Lock()
			got[id] = p.String()
			mu.Unlock()
		}()
	}
	wg.Wait()
	var ids []string
	for id := range got {
		ids = append(ids, id)
	}
	sort.Strings(ids)
	for _, id := range ids {
		w, ok := want[id]
		if !ok {
			t.Errorf("%s: no expectation (read %q)", id, got[id])
			continue
		}
		if got[id] != w {
			t.Errorf("%s: read %q, want %q", id, got[id], w)
		}
	}
}

// TestAskedPeriod reads the period a question asks about: the latest year
// it names, with the quarter or date written with it, and the kind of
// filing it names; amounts are not years, and forecast years point to the
// filing of the year before.
func TestAskedPeriod(t *testing.T) {
	for _, tc := range []struct{ q, want string }{
		{"What is the FY2018 capital expenditure amount (in USD millions) for 3M?", "FY2018"},
		{"What was revenue in fiscal year 2018 ended June 30, 2018?", "FY2018 2018-06-30"},
		{"Has Verizon increased its debt between 2022 and the 2021 fiscal period?", "FY2022"},
		{"What was the change between 2019 and 2021?", "FY2021"},
		{"What is the FY2017 - FY2019 3 year average of capex?", "FY2019"},
		{"Did Pfizer grow its PPNE between FY20 and FY21?", "FY2021"},
		{"Was revenue in FY 2021 above FY'20?", "FY2021"},
		{"What was General Mills' free cash flow in fiscal 2020?", "FY2020"},
		{"What are the geographies American Express operates in as of 2022?", "FY2022"},
		// Amounts are not years.
		{"Did revenue exceed $2018 million in 2017?", "FY2017"},
		{"Was capex 2,018 or 2018.5 or 2019 million?", ""},
		{"Did the company have more than 2019 employees?", ""},
		{"Were USD 2020 paid?", ""},
		// Quarters, however written.
		{"Was there any drop in Cash & Cash equivalents between FY 2023 and Q2 of FY2024?", "Q2 FY2024"},
		{"Was there any change in the number of stores between Q2 of FY2024 and FY2023?", "Q2 FY2024"},
		{"Which region had the biggest drop in Q22023 year over year revenues?", "Q2 FY2023"},
		{"As of Q2'2023, is Pfizer spinning off any segments?", "Q2 FY2023"},
		{"What were sales in the second quarter of fiscal 2023?", "Q2 FY2023"},
		{"What were sales in the 2023 third-quarter?", "Q3 FY2023"},
		{"What was the margin in FY23 Q4?", "Q4 FY2023"},
		{"How did 3Q23 revenue compare with 1Q FY2024?", "Q1 FY2024"},
		{"Did net earnings increase in Q2 of FY2023 compared to Q2 of FY2022?", "Q2 FY2023"},
		// Dates; a date after "will" is a fact, not a forecast.
		{"What is the gain as of August 30, 2023?", "FY2023 2023-08-30"},
		{"Which segment will be treated as discontinued from August 30, 2023 onward?", "FY2023 2023-08-30"},
		{"What were total assets as of 31 December 2021?", "FY2021 2021-12-31"},
		// Forecasts are stated by the filing of the year before.
		{"Is growth in adjusted EPS expected to accelerate in FY2023?", "FY2022"},
		{"What production rate changes is Boeing forecasting for FY2023?", "FY2022"},
		{"As of FY 2021, how much did Verizon expect to pay for its retirees in 2024?", "FY2021"},
		// Forms.
		{"What are three companies acquired by Pfizer mentioned in this 10K report?", "annual"},
		{"What does the 10-Q say about Q1 2024?", "quarterly Q1 FY2024"},
		{"Which events does the 8-K report?", "current"},
		// No period.
		{"How do I write a function in R 4.2?", ""},
		{"What is the revenue?", ""},
		{"Is Boeing's business subject to cyclicality?", ""},
		// Years in Chinese are years; books without a period are not
		// ranked by them (see TestRouteByPeriod).
		{"2017年4月，罗保铭担任什么职务？", "FY2017"},
	} {
		require.Equal(t, tc.want, askedPeriod(tc.q).String(), tc.q)
	}
}

// TestCoverPeriodForms covers what the FinanceBench filings do not: other
// forms and annual reports without one, dates written day first, a fiscal
// year named on the cover, and text that states no period.
func TestCoverPeriodForms(t *testing.T) {
	for _, tc := range []struct{ cover, want string }{
		{"FORM 20-F ANNUAL REPORT PURSUANT TO SECTION 13 OR 15(d) For the fiscal year ended 31 March 2022", "20-F FY2022 2022-03-31"},
		{"FORM 10-K For the fiscal year ended February 3, 2018 (fiscal 2017)", "10-K FY2017 2018-02-03"},
		{"FORM 10-K For the fiscal year ended January 2, 2021", "10-K FY2020 2021-01-02"},
		{"FORM 10-Q For the quarterly period ended September 30, 2023", "10-Q Q3 FY2023/2024 2023-09-30"},
		{"FORM 10-Q For the quarterly period ended September 30, 2023. Fiscal year 2024", "10-Q FY2024 2023-09-30"},
		{"FORM 6-K Report of Foreign Private Issuer. Date of Report: March 3, 2022", "6-K FY2022 2022-03-03"},
		{"Acme plc Annual Report and Accounts 2021/22", "annual FY2022"},
		{"Contoso 2019 Annual Report", "annual FY2019"},
		{"Contoso reports third-quarter fiscal 2024 results", "quarterly Q3 FY2024"},
		{"Amcor reports fourth quarter and fiscal 2023 results", "quarterly Q4 FY2023"},
		{"Q4 and full year 2022 results", "quarterly Q4 FY2022"},
		{"Contoso results for the quarter ended March 31, 2024", "quarterly Q1 FY2024/2025 2024-03-31"},
		{"An Introduction to R. Version 4.2.1 (2022-06-23)", ""},
		{"In the second quarter of 2019 we moved offices.", ""}, // a quarter, but no results released
		{"LaTeX2ε 入门 2018年", ""},
	} {
		p, ok := coverPeriod(tc.cover)
		require.Equal(t, tc.want != "", ok, tc.cover)
		require.Equal(t, tc.want, p.String(), tc.cover)
	}
}

// TestRouteByPeriod ranks the filing of the period asked above the same
// company's other filings, leaves questions without a period and books
// without one as names rank them, and lists each book's period and fit.
func TestRouteByPeriod(t *testing.T) {
	s := shelf{titles: map[string]string{}, covers: map[string]string{}}
	var f citebook.Filter
	add := s.adder(&f)
	tenK := "FORM 10-K ANNUAL REPORT PURSUANT TO SECTION 13 For the fiscal year ended "
	add("a", "3M annual report", tenK+"December 31, 2018. 3M COMPANY")
	add("b", "3M annual report", tenK+"December 31, 2022. 3M COMPANY")
	add("c", "Best Buy annual report", tenK+"January 28, 2023. BEST BUY CO., INC.")
	add("d", "Best Buy quarterly report", "FORM 10-Q For the quarterly period ended July 29, 2023. BEST BUY CO., INC.")
	add("e", "Boeing annual report", tenK+"December 31, 2022. The Boeing Company")
	add("f", "Boeing", "The Boeing Company history and fleet")
	add("r", "An Introduction to R", "Notes on R: A Programming Environment for Data Analysis and Graphics, Version 4.2.1")
	for _, x := range []string{"g", "h", "i", "j"} {
		add(x, "Other "+x, "A book about other things")
	}
	p := &Pipeline{deps: Deps{Library: s, Books: s}}
	for _, tc := range []struct {
		q, period string
		routed    []string
	}{
		{"What drove 3M's operating margin change as of FY2022?", "FY2022", []string{"b"}},
		{"What was 3M's net PPNE at year end FY2018?", "FY2018", []string{"a"}},
		{"How did 3M's revenue change?", "", []string{"a", "b"}},
		{"Which Best Buy category performed best during Q2 of FY2024?", "Q2 FY2024", []string{"d"}},
		{"What acquisitions did Best Buy make in FY2023?", "FY2023", []string{"c", "d"}}, // the 10-Q (fit 0.7) still routed, below
		{"Best Buy's revenue in the 10-Q?", "quarterly", []string{"d"}},
		// A book without a period keeps its score beside a filing.
		{"What was Boeing's backlog in FY2022?", "FY2022", []string{"e", "f"}},
		{"How do I write a function in R 4.2 (2022)?", "FY2022", []string{"r"}},
	} {
		t.Run(tc.q, func(t *testing.T) {
			scores, period, err := p.route(context.Background(), tc.q, f)
			require.NoError(t, err)
			require.Equal(t, tc.period, period)
			var got []string
			for _, s := range scores {
				if s.Routed {
					got = append(got, s.BookID)
				}
				if s.BookID == "a" {
					require.Equal(t, "10-K FY2018 2018-12-31", s.Period)
				}
				if s.BookID == "r" {
					require.Empty(t, s.Period)
					require.Zero(t, s.PeriodFit)
				}
			}
			require.Equal(t, tc.routed, got, "%+v", scores)
		})
	}
}

// FuzzPeriod: any question or cover text is read without panicking, and
// what is read is a plausible period — years of four digits, quarters 1–4,
// a fit in (0, 1] — so routing can only reorder books, never fail.
func FuzzPeriod(f *testing.F) {
	for _, s := range []string{
		"Q2 of FY2024", "Q22023", "Q2'23", "FY20 and FY21", "$2018 million", "2,018", "August 30, 2023",
		"31 December 2021", "For the fiscal year ended January 1, 2023", "For the quarterly period ended July 29, 2023",
		"Date of report: May 3, 2022", "Annual Report and Accounts 1999/00", "results for fourth quarter and fiscal 2023",
		"FY'", "Q5 2023", "Feb 30, 2023", "Q0", "2017年4月", "fiscal year 2018 ended June 30, 2018", "expected in FY2023",
	} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		a := askedPeriod(s)
		if a.fy != 0 && (a.fy < 1899 || a.fy > 2099) || a.quarter < 0 || a.quarter > 4 {
			t.Fatalf("%q: asked %+v", s, a)
		}
		p, ok := coverPeriod(s)
		if ok != (p.kind != kindNone) || p.fy != 0 && (p.fy < 1899 || p.fy > 2100) || p.quarter < 0 || p.quarter > 4 {
			t.Fatalf("%q: cover %+v", s, p)
		}
		if fit := a.fit(p); ok && !a.empty() && (fit <= 0 || fit > 1) {
			t.Fatalf("%q: fit %v", s, fit)
		}
	})
}

// BenchmarkAskedPeriod: reading a question's period, for one that writes
// a year and one that writes none (the common case, kept cheap).
func BenchmarkAskedPeriod(b *testing.B) {
	for name, q := range map[string]string{
		"year": "Basing your judgment by information plainly provided in the balance sheet and the P&L statement, what is Lockheed Martin's FY2020 asset turnover ratio?",
		"none": "How do I reshape a data frame in R with the reshape function and keep the id columns?",
	} {
		b.Run(name, func(b *testing.B) {
			for i := 0; i < b.N; i++ {
				askedPeriod(q)
			}
		})
	}
}
