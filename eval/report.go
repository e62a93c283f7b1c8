package eval

import (
	"bytes"
	"encoding/json"
	"fmt"
	"html/template"
	"os"
	"path/filepath"
	"sort"
	"strings"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/citation"
)

// Report file names inside the output directory.
const (
	ResultsFile  = "results.json"
	MarkdownFile = "report.md"
	HTMLFile     = "report.html"
)

// WriteReport writes the results JSON, a Markdown report and a
// self-contained HTML report (no external assets) into dir.
func WriteReport(dir string, res *Results) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "cannot create report directory %s", dir)
	}
	var js bytes.Buffer
	enc := json.NewEncoder(&js)
	enc.SetIndent("", "  ")
	enc.SetEscapeHTML(false)
	if err := enc.Encode(res); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "cannot encode results")
	}
	var h bytes.Buffer
	if err := htmlReport.Execute(&h, newView(res)); err != nil {
		return citebook.Wrap(err, citebook.EINTERNAL, "cannot render the HTML report")
	}
	for name, data := range map[string][]byte{
		ResultsFile:  js.Bytes(),
		MarkdownFile: []byte(Markdown(res)),
		HTMLFile:     h.Bytes(),
	} {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o644); err != nil {
			return citebook.Wrap(err, citebook.EINVALID, "cannot write %s", p)
		}
	}
	return nil
}

// metricRow is one line of the summary table.
type metricRow struct {
	Name  string
	Value string
}

func summaryRows(s Summary) []metricRow {
	f := func(x float64) string { return fmt.Sprintf("%.3f", x) }
	pf := f
	if s.PageGold == 0 {
		pf = func(float64) string { return "n/a" }
	}
	rf := f
	if s.Unanswerable == 0 {
		rf = func(float64) string { return "n/a" }
	}
	gf := func(x float64) string { return fmt.Sprintf("%.3f of %d", x, s.GoldAnswered) }
	if s.GoldAnswered == 0 {
		gf = func(float64) string { return "n/a" }
	}
	rows := []metricRow{
		{"Questions (answerable / unanswerable / errors)", fmt.Sprintf("%d (%d / %d / %d)", s.Questions, s.Answerable, s.Unanswerable, s.Errors)},
		{"Recall@1 / @5 / @10", f(s.RecallAtK["1"]) + " / " + f(s.RecallAtK["5"]) + " / " + f(s.RecallAtK["10"])},
		{"MRR@10", f(s.MRRAt10)},
		{"nDCG@10", f(s.NDCGAt10)},
		{"Hit rate@10", f(s.HitRate)},
		{"Hit@1 / @5 / @10", f(s.HitAtK["1"]) + " / " + f(s.HitAtK["5"]) + " / " + f(s.HitAtK["10"])},
		{"Page Recall@1 / @5 / @10", pf(s.PageRecallAtK["1"]) + " / " + pf(s.PageRecallAtK["5"]) + " / " + pf(s.PageRecallAtK["10"])},
		{"Citation page accuracy", pf(s.CitationPageAccuracy)},
		{"Citation precision / recall", f(s.CitationPrecision) + " / " + f(s.CitationRecall)},
		{"Refusal accuracy", rf(s.RefusalAccuracy)},
		{"Answered coverage", f(s.AnsweredCoverage)},
		{"Answers holding the gold answer", gf(s.GoldAnswerHeld)},
		{"Latency P50 / P95 (ms)", fmt.Sprintf("%.0f / %.0f", s.LatencyMS["p50"], s.LatencyMS["p95"])},
		{"Context duplication rate", f(s.ContextDuplication)},
		{"Context tokens per question", fmt.Sprintf("%.0f", s.TokensPerQuestion)},
		{"Supported-citation precision", f(s.SupportedCitationPrecision)},
		{"Citations shown / unsupported / fabricated", fmt.Sprintf("%d / %d / %d", s.CitationsShown, s.UnsupportedCitationsShown, s.FabricatedCitationsShown)},
		{"Answer sentences removed (unsupported quote)", fmt.Sprintf("%d (%d)", s.StatementsDropped, s.NotSupported)},
		{"Refusals by reason", reasonList(s.RefusalReasons)},
		{"Citations rejected by reason", reasonList(s.RejectedCitations)},
		{"Model calls / constrained retries / fallbacks (extractive, refusal) / example echoes", fmt.Sprintf("%d / %d / %d, %d / %d",
			s.Guards.ModelCalls, s.Guards.ConstrainedRetries, s.Guards.FallbackExtractive, s.Guards.FallbackRefusal, s.Guards.ExampleEchoes)},
		{"Model's own answers shown", fmt.Sprintf("%d", s.Guards.ModelAnswers)},
		{"Quotes snapped to the book's text (kept / shown) / left rejected", fmt.Sprintf("%d (%d / %d) / %d",
			s.Guards.QuotesSnapped, s.Guards.SnappedKept, s.Guards.SnappedShown, s.RejectedCitations[string(citation.QuoteNotFound)])},
	}
	for _, sig := range Signals {
		x, ok := s.Signals[sig.Name]
		if !ok {
			continue
		}
		rows = append(rows, metricRow{"Signal " + sig.Name + ": Hit@1 / MRR@10 / Recall@5 / Page Recall@1 / @5",
			f(x.HitAtK["1"]) + " / " + f(x.MRRAt10) + " / " + f(x.RecallAtK["5"]) + " / " +
				pf(x.PageRecallAtK["1"]) + " / " + pf(x.PageRecallAtK["5"])})
	}
	return rows
}

// reasonList renders refusal counts by reason, most frequent first.
func reasonList(m map[string]int) string {
	if len(m) == 0 {
		return "none"
	}
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Slice(keys, func(i, j int) bool {
		if m[keys[i]] != m[keys[j]] {
			return m[keys[i]] > m[keys[j]]
		}
		return keys[i] < keys[j]
	})
	parts := make([]string, len(keys))
	for i, k := range keys {
		parts[i] = fmt.Sprintf("%s %d", k, m[k])
	}
	return strings.Join(parts, ", ")
}

func setupLine(s Setup) string {
	return fmt.Sprintf("dataset %s, scope %s, embedder %s, store %s, answerer %s, fusion %s, relevance bar %.2f, answerability bar %.2f (CJK %.2f), %s",
		s.Dataset, s.Scope, s.Embedder, s.Store, s.Answerer, s.Fusion, s.MinScore, s.AnswerCoverage, s.AnswerCoverageCJK, s.Date)
}

// outcome is a short verdict for the per-question tables.
func outcome(r *QuestionResult) string {
	switch {
	case r.Error != "":
		return "error: " + r.Error
	case !r.Answerable && r.Refused:
		return "refused (correct): " + refusalWhy(r)
	case !r.Answerable:
		return "answered an unanswerable question"
	case r.Refused:
		return "refused an answerable question: " + refusalWhy(r)
	case r.ranked() && r.Hit == 0:
		return "answered; nothing relevant in top 10"
	}
	return "answered"
}

// refusalWhy is the pipeline's reason for a refusal.
func refusalWhy(r *QuestionResult) string {
	if r.Answerability.Reason != "" {
		return r.Answerability.Reason
	}
	if r.Answerability.Code != "" {
		return r.Answerability.Code
	}
	return "no reason recorded"
}

func firstRelevantRank(r *QuestionResult) string {
	for i, h := range r.Ranked {
		if h.Relevant {
			return fmt.Sprint(i + 1)
		}
	}
	return "–"
}

// Markdown renders the report as Markdown, failures first.
func Markdown(res *Results) string {
	var b strings.Builder
	s := res.Summary
	fmt.Fprintf(&b, "# citebook evaluation: %s\n\n%s\n\n", s.Setup.Dataset, setupLine(s.Setup))
	b.WriteString("| metric | value |\n|---|---|\n")
	for _, m := range summaryRows(s) {
		fmt.Fprintf(&b, "| %s | %s |\n", m.Name, m.Value)
	}
	b.WriteString("\nRecall@K, K = 1..10: ")
	for k, v := range s.RecallCurve {
		if k > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "%.3f", v)
	}
	b.WriteString("\n\n## Questions (failures first)\n\n| id | outcome | first relevant rank | R@10 | citations (supporting) | ms |\n|---|---|---|---|---|---|\n")
	for _, r := range failuresFirst(res.Questions) {
		sup := 0
		for _, c := range r.Citations {
			if c.Supports {
				sup++
			}
		}
		r10 := "–"
		if r.ranked() {
			r10 = fmt.Sprintf("%.2f", r.RecallAt[MaxK-1])
		}
		fmt.Fprintf(&b, "| %s | %s | %s | %s | %d (%d) | %.0f |\n", mdCell(r.ID), mdCell(outcome(&r)),
			firstRelevantRank(&r), r10, len(r.Citations), sup, r.LatencyMS)
	}
	return b.String()
}

func mdCell(s string) string {
	return strings.ReplaceAll(strings.ReplaceAll(s, "|", `\|`), "\n", " ")
}

// view is what the HTML template reads.
type view struct {
	Title   string
	Setup   string
	Rows    []metricRow
	Curve   template.HTML
	Results []qView
}

type qView struct {
	ID, Question, Outcome, Answer, GoldAnswer, FirstRank, Recall10 string
	Bad                                                            bool
	Citations                                                      []CitationResult
	LatencyMS                                                      float64
}

func newView(res *Results) view {
	s := res.Summary
	v := view{Title: "citebook evaluation: " + s.Setup.Dataset, Setup: setupLine(s.Setup),
		Rows: summaryRows(s), Curve: recallSVG(s.RecallCurve)}
	for _, r := range failuresFirst(res.Questions) {
		r10 := "–"
		if r.ranked() {
			r10 = fmt.Sprintf("%.2f", r.RecallAt[MaxK-1])
		}
		v.Results = append(v.Results, qView{ID: r.ID, Question: r.Question, Outcome: outcome(&r),
			Answer: r.Answer, GoldAnswer: r.GoldAnswer, FirstRank: firstRelevantRank(&r), Recall10: r10,
			Bad: severity(&r) > 0, Citations: r.Citations, LatencyMS: r.LatencyMS})
	}
	return v
}

// recallSVG draws Recall@K for K = 1..len(curve) as an inline SVG line
// chart, so the report needs no script or external file.
func recallSVG(curve []float64) template.HTML {
	const w, h, pad = 420.0, 240.0, 36.0
	n := len(curve)
	if n == 0 {
		return ""
	}
	x := func(k int) float64 {
		if n == 1 {
			return pad
		}
		return pad + float64(k)*(w-2*pad)/float64(n-1)
	}
	y := func(v float64) float64 { return h - pad - v*(h-2*pad) }
	var b strings.Builder
	fmt.Fprintf(&b, `<svg xmlns="http://www.w3.org/2000/svg" width="%.0f" height="%.0f" role="img" aria-label="Recall at K">`, w, h)
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#888"/>`, pad, y(0), w-pad, y(0))
	fmt.Fprintf(&b, `<line x1="%.0f" y1="%.1f" x2="%.0f" y2="%.1f" stroke="#888"/>`, pad, y(0), pad, y(1))
	for _, t := range []float64{0, 0.5, 1} {
		fmt.Fprintf(&b, `<text x="%.0f" y="%.1f" font-size="10" text-anchor="end">%.1f</text>`, pad-4, y(t)+3, t)
	}
	var pts []string
	for k, v := range curve {
		pts = append(pts, fmt.Sprintf("%.1f,%.1f", x(k), y(v)))
		fmt.Fprintf(&b, `<circle cx="%.1f" cy="%.1f" r="3" fill="#1f6feb"><title>Recall@%d = %.3f</title></circle>`, x(k), y(v), k+1, v)
		fmt.Fprintf(&b, `<text x="%.1f" y="%.0f" font-size="10" text-anchor="middle">%d</text>`, x(k), h-pad+14, k+1)
	}
	fmt.Fprintf(&b, `<polyline fill="none" stroke="#1f6feb" stroke-width="2" points="%s"/>`, strings.Join(pts, " "))
	fmt.Fprintf(&b, `<text x="%.0f" y="%.0f" font-size="11" text-anchor="middle">K</text>`, w/2, h-4)
	b.WriteString(`</svg>`)
	return template.HTML(b.String())
}

var htmlReport = template.Must(template.New("report").Parse(`<!doctype html>
<html lang="en"><head><meta charset="utf-8"><title>{{.Title}}</title>
<style>
body{font:14px/1.45 system-ui,sans-serif;margin:2em;max-width:70em}
table{border-collapse:collapse;margin:1em 0}td,th{border:1px solid #ccc;padding:.3em .6em;vertical-align:top;text-align:left}
tr.bad td:first-child{border-left:4px solid #d1242f}.q{max-width:28em}.muted{color:#666}
</style></head><body>
<h1>{{.Title}}</h1>
<p class="muted">{{.Setup}}</p>
<table><tr><th>metric</th><th>value</th></tr>
{{range .Rows}}<tr><td>{{.Name}}</td><td>{{.Value}}</td></tr>
{{end}}</table>
<h2>Recall@K</h2>
{{.Curve}}
<h2>Questions (failures first)</h2>
<table><tr><th>id</th><th>question</th><th>outcome</th><th>first relevant rank</th><th>R@10</th><th>answer / gold</th><th>citations</th><th>ms</th></tr>
{{range .Results}}<tr{{if .Bad}} class="bad"{{end}}><td>{{.ID}}</td><td class="q">{{.Question}}</td><td>{{.Outcome}}</td><td>{{.FirstRank}}</td><td>{{.Recall10}}</td>
<td class="q">{{.Answer}}{{if .GoldAnswer}}<br><span class="muted">gold: {{.GoldAnswer}}</span>{{end}}</td>
<td class="q">{{range .Citations}}<div>{{.BookID}} p.{{.Page}}{{if .Supports}} ✓{{else}} ✗{{end}}: “{{.Quote}}”</div>{{end}}</td>
<td>{{printf "%.0f" .LatencyMS}}</td></tr>
{{end}}</table>
</body></html>
`))
