package main

import (
	"bytes"
	"encoding/json"
	"errors"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/hostile"
)

// buildCitebook compiles the command once per test run, so the tests see
// exactly what a user runs, exit codes included.
func buildCitebook(t *testing.T) string {
	t.Helper()
	bin := filepath.Join(t.TempDir(), "citebook")
	cmd := exec.Command("go", "build", "-o", bin, ".")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("go build: %v\n%s", err, out)
	}
	return bin
}

// runCitebook runs the binary and returns stdout, stderr and the exit code.
func runCitebook(t *testing.T, bin string, args ...string) (string, string, int) {
	t.Helper()
	var stdout, stderr bytes.Buffer
	cmd := exec.Command(bin, args...)
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case err == nil:
		return stdout.String(), stderr.String(), 0
	case errors.As(err, &exit):
		return stdout.String(), stderr.String(), exit.ExitCode()
	}
	t.Fatalf("run %v: %v", args, err)
	return "", "", 0
}

func TestParseCommand(t *testing.T) {
	bin := buildCitebook(t)
	empty := filepath.Join(t.TempDir(), "empty.epub")
	if err := os.WriteFile(empty, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	policy, err := os.ReadFile(corpus.Path(t, "books/policy.epub"))
	if err != nil {
		t.Fatal(err)
	}
	truncated := filepath.Join(t.TempDir(), "truncated.epub")
	if err := os.WriteFile(truncated, policy[:len(policy)/3], 0o644); err != nil {
		t.Fatal(err)
	}

	type chunk struct {
		ID           string   `json:"id"`
		ParentID     string   `json:"parent_id"`
		HeadingPath  []string `json:"heading_path"`
		PageStart    *int     `json:"page_start"`
		PageEnd      *int     `json:"page_end"`
		PrintedStart *string  `json:"printed_page_start"`
		CharStart    int      `json:"char_start"`
		CharEnd      int      `json:"char_end"`
		Tokens       int      `json:"tokens"`
		Text         string   `json:"text"`
	}
	type output struct {
		Title    string `json:"title"`
		Format   string `json:"format"`
		Pages    *int   `json:"pages"`
		Language string `json:"language"`
		Outline  []struct {
			Title string `json:"title"`
			Level int    `json:"level"`
			Page  *int   `json:"page"`
		} `json:"outline"`
		Parents []struct {
			ID          string   `json:"id"`
			HeadingPath []string `json:"heading_path"`
		} `json:"parents"`
		Chunks []chunk `json:"chunks"`
	}

	tests := []struct {
		name      string
		args      []string
		code      int
		format    string
		paged     bool
		maxTokens int
		outline   string // an outline title that must be present
		contains  string // text stdout (or stderr on failure) must contain
	}{
		{name: "epub json", args: []string{"parse", "--json", corpus.Path(t, "books/policy.epub")}, format: "epub", maxTokens: 400, outline: "Binary packages"},
		{name: "chinese epub json small budget", args: []string{"parse", "--json", "--max-tokens", "120", corpus.Path(t, "books/debmake-doc.zh-cn.epub")}, format: "epub", maxTokens: 120, outline: "3. 工具的配置"},
		{name: "text table", args: []string{"parse", corpus.Path(t, "books/mobydick.txt")}, contains: "CHAPTER 1. Loomings."},
		{name: "pdf json", args: []string{"parse", "--json", corpus.Path(t, "books/WaldenFull.pdf")}, format: "pdf", paged: true, maxTokens: 400, outline: "Economy"},
		// A statement longer than a chunk: its second chunk shows the column
		// years it is indexed with (the cash flow statement, page 60).
		{name: "filing json index context", args: []string{"parse", "--json", corpus.Path(t, "financebench/pdfs/3M_2018_10K.pdf")},
			contains: `"index_context": "(Millions) 2018 2017 2016"`},
		{name: "empty file", args: []string{"parse", empty}, code: 2, contains: "empty file"},
		{name: "truncated epub", args: []string{"parse", truncated}, code: 2, contains: "not a valid EPUB"},
		{name: "missing file", args: []string{"parse", filepath.Join(t.TempDir(), "nope.txt")}, code: 2, contains: "file not found"},
		{name: "budget too small", args: []string{"parse", "--max-tokens", "5", empty}, code: 2, contains: "--max-tokens"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			stdout, stderr, code := runCitebook(t, bin, tt.args...)
			if code != tt.code {
				t.Fatalf("exit %d, want %d; stderr: %s", code, tt.code, stderr)
			}
			if tt.contains != "" && !strings.Contains(stdout+stderr, tt.contains) {
				t.Errorf("output does not contain %q:\n%.2000s%s", tt.contains, stdout, stderr)
			}
			if tt.format == "" {
				return
			}
			var out output
			if err := json.Unmarshal([]byte(stdout), &out); err != nil {
				t.Fatalf("bad JSON: %v", err)
			}
			if out.Format != tt.format || out.Title == "" || out.Language == "" || len(out.Parents) == 0 || len(out.Chunks) == 0 {
				t.Fatalf("format %q title %q language %q parents %d chunks %d", out.Format, out.Title, out.Language, len(out.Parents), len(out.Chunks))
			}
			if (out.Pages != nil) != tt.paged {
				t.Errorf("pages = %v, paged %v", out.Pages, tt.paged)
			}
			if !tt.paged && !strings.Contains(stdout, `"pages": null`) {
				t.Errorf("reflowable book must print \"pages\": null")
			}
			found := false
			for _, o := range out.Outline {
				found = found || o.Title == tt.outline
				if !tt.paged && o.Page != nil {
					t.Fatalf("outline entry %q has a page in a reflowable book", o.Title)
				}
			}
			if !found {
				t.Errorf("outline lacks %q", tt.outline)
			}
			parents := map[string]bool{}
			for _, p := range out.Parents {
				parents[p.ID] = true
			}
			for _, c := range out.Chunks {
				if c.Tokens > tt.maxTokens || c.Tokens == 0 {
					t.Fatalf("chunk %s has %d tokens (max %d)", c.ID, c.Tokens, tt.maxTokens)
				}
				if !parents[c.ParentID] || len(c.HeadingPath) == 0 || c.CharEnd-c.CharStart != len(c.Text) {
					t.Fatalf("chunk %s inconsistent: parent %v heading %q chars %d-%d len %d", c.ID, parents[c.ParentID], c.HeadingPath, c.CharStart, c.CharEnd, len(c.Text))
				}
				if (c.PageStart != nil) != tt.paged {
					t.Fatalf("chunk %s page_start %v in paged=%v book", c.ID, c.PageStart, tt.paged)
				}
				if tt.paged && *c.PageEnd < *c.PageStart {
					t.Fatalf("chunk %s ends before it starts", c.ID)
				}
			}
		})
	}
}

// TestParseCommandDeadline: --parse-timeout bounds the parse and says so.
func TestParseCommandDeadline(t *testing.T) {
	bin := buildCitebook(t)
	_, stderr, code := runCitebook(t, bin, "parse", "--parse-timeout", "1ms", corpus.Path(t, "books/debian-reference.en.pdf"))
	if code == 0 || !strings.Contains(stderr, "did not finish within 1ms") {
		t.Fatalf("exit %d, stderr %q; want the deadline error", code, stderr)
	}
}

// TestParseCommandInterrupt: Ctrl-C stops a long parse at once, with the
// cancellation as the error, instead of when the work is done.
func TestParseCommandInterrupt(t *testing.T) {
	bin := buildCitebook(t)
	path := filepath.Join(t.TempDir(), "slow.pdf")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	if err := hostile.ManyStreams(f, 800, 60000); err != nil { // about a minute of interpreting
		t.Fatal(err)
	}
	f.Close()
	var stderr bytes.Buffer
	cmd := exec.Command(bin, "parse", path)
	cmd.Stderr = &stderr
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(time.Second)
	sent := time.Now()
	cmd.Process.Signal(os.Interrupt)
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		if err == nil || !strings.Contains(stderr.String(), "cancelled") {
			t.Fatalf("exit %v, stderr %q; want the cancellation", err, stderr.String())
		}
		t.Logf("stopped %v after the interrupt", time.Since(sent))
	case <-time.After(10 * time.Second):
		cmd.Process.Kill()
		t.Fatal("parse still running 10 s after Ctrl-C")
	}
}
