package main

import (
	"bytes"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// sharedStreamPDF writes a PDF of pages that all draw one large content
// stream, the shape of issue 10's 20,000-page file: small on disk, slow to
// parse.
func sharedStreamPDF(t *testing.T, pages, streamBytes int) string {
	t.Helper()
	var content bytes.Buffer
	for content.Len() < streamBytes {
		fmt.Fprintf(&content, "BT /F1 12 Tf 72 %d Td (the same words on every page) Tj ET\n", 100+content.Len()%600)
	}
	var b bytes.Buffer
	offsets := []int{}
	obj := func(body string) {
		offsets = append(offsets, b.Len())
		fmt.Fprintf(&b, "%d 0 obj\n%s\nendobj\n", len(offsets), body)
	}
	b.WriteString("%PDF-1.4\n")
	obj("<< /Type /Catalog /Pages 2 0 R >>")
	var kids strings.Builder
	for i := range pages {
		fmt.Fprintf(&kids, "%d 0 R ", 5+i)
	}
	obj(fmt.Sprintf("<< /Type /Pages /Kids [%s] /Count %d >>", kids.String(), pages))
	obj("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	obj(fmt.Sprintf("<< /Length %d >>\nstream\n%sendstream", content.Len(), content.String()))
	for range pages {
		obj("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R /Resources << /Font << /F1 3 0 R >> >> >>")
	}
	xref := b.Len()
	fmt.Fprintf(&b, "xref\n0 %d\n0000000000 65535 f \n", len(offsets)+1)
	for _, o := range offsets {
		fmt.Fprintf(&b, "%010d 00000 n \n", o)
	}
	fmt.Fprintf(&b, "trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n", len(offsets)+1, xref)
	p := filepath.Join(t.TempDir(), "shared-stream.pdf")
	require.NoError(t, os.WriteFile(p, b.Bytes(), 0o644))
	return p
}

// TestIndexCtrlC is issue 10 item 2 for the CLI: Ctrl-C while a huge PDF
// parses stops `citebook index` promptly with a clear message, and no job
// is left recorded as running.
func TestIndexCtrlC(t *testing.T) {
	bin := buildCitebook(t)
	data := t.TempDir()
	pdf := sharedStreamPDF(t, 3000, 1<<20)
	cmd := exec.Command(bin, "index", pdf, "--data", data, "--book", "huge")
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	require.NoError(t, cmd.Start())
	time.Sleep(1500 * time.Millisecond)
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.Error(t, err, "a cancelled index exits non-zero")
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("citebook index ignored Ctrl-C for 20 s\n%s", stderr.String())
	}
	t.Logf("exited %s after Ctrl-C", time.Since(t0).Round(time.Millisecond))
	require.Less(t, time.Since(t0), 10*time.Second)
	require.Contains(t, stderr.String(), "cancelled")

	out, errOut, code := runCitebook(t, bin, "jobs", "--data", data)
	require.Zero(t, code, errOut)
	require.NotContains(t, out, "running")
}
