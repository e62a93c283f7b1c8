package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/internal/corpus"
)

// TestIndexAndAskScannedPDF indexes the image-only excerpt of R-intro with
// OCR (tesseract and pdftoppm on PATH, as .ci/run installs them) and asks
// about it: the answer cites a page, with boxes on that page and ocr=true.
func TestIndexAndAskScannedPDF(t *testing.T) {
	for _, tool := range []string{"tesseract", "pdftoppm"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") != "" {
				t.Fatalf("%s not installed; CI must install tesseract-ocr, tesseract-ocr-eng and poppler-utils", tool)
			}
			t.Skipf("%s not installed", tool)
		}
	}
	data := t.TempDir()
	out, err := run(t, "index", corpus.Path(t, "books/R-intro-scan-excerpt.pdf"), "--data", data, "--tenant", "acme", "--book", "scan", "--json")
	require.NoError(t, err, out)
	var res struct {
		JobID int64 `json:"job_id"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &res), out)

	out, err = run(t, "jobs", "--data", data, "--book", "scan", "--json")
	require.NoError(t, err, out)
	require.Contains(t, out, `"ocr"`)
	require.Contains(t, out, `"read": 4`)

	out, err = run(t, "ask", "What is R an integrated suite of software facilities for?", "--data", data,
		"--tenant", "acme", "--user", "ann", "--json")
	require.NoError(t, err, out)
	var ans struct {
		Refused   bool                `json:"refused"`
		Citations []citebook.Citation `json:"citations"`
	}
	require.NoError(t, json.Unmarshal([]byte(out), &ans))
	require.False(t, ans.Refused, out)
	require.NotEmpty(t, ans.Citations)
	c := ans.Citations[0]
	t.Logf("cited page %d (printed %q): %q, %d boxes, ocr=%v", c.Page, c.PrintedPage, c.Quote, len(c.Boxes), c.OCR)
	require.Positive(t, c.Page)
	require.True(t, c.OCR)
	require.NotEmpty(t, c.Boxes)
	for _, b := range c.Boxes {
		require.GreaterOrEqual(t, b.Page, c.Page)
		require.True(t, 0 <= b.X0 && b.X0 < b.X1 && b.X1 <= 1 && 0 <= b.Y0 && b.Y0 < b.Y1 && b.Y1 <= 1, "%+v", b)
	}
}
