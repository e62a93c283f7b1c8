package main

import (
	"bufio"
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook/internal/hostile"
)

// TestIndexCtrlC is issue 10 item 2 for the CLI: Ctrl-C while issue 10's
// 20,000-page shared-stream PDF is being indexed stops `citebook index` promptly with a clear message, and no job
// is left recorded as running.
func TestIndexCtrlC(t *testing.T) {
	bin := buildCitebook(t)
	data := t.TempDir()
	pdf := filepath.Join(t.TempDir(), "shared-stream.pdf")
	f, err := os.Create(pdf)
	require.NoError(t, err)
	require.NoError(t, hostile.SharedStream(f, 20000, 16<<20))
	require.NoError(t, f.Close())
	cmd := exec.Command(bin, "index", pdf, "--data", data, "--book", "huge")
	pipe, err := cmd.StderrPipe()
	require.NoError(t, err)
	require.NoError(t, cmd.Start())
	// Ctrl-C as soon as the job has started, while the 20,000 pages are being
	// parsed: a fixed sleep raced the parse, which takes about a second on an
	// idle machine, so the job could complete before the signal.
	var stderr bytes.Buffer
	started := make(chan struct{})
	copied := make(chan struct{})
	go func() {
		defer close(copied)
		lines := bufio.NewScanner(pipe)
		once := false
		for lines.Scan() {
			stderr.Write(append(lines.Bytes(), '\n'))
			if !once && strings.Contains(lines.Text(), "index job started") {
				once = true
				close(started)
			}
		}
	}()
	select {
	case <-started:
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatal("citebook index did not start its job within 20 s")
	}
	require.NoError(t, cmd.Process.Signal(syscall.SIGINT))
	t0 := time.Now()
	done := make(chan error, 1)
	go func() { <-copied; done <- cmd.Wait() }()
	select {
	case err := <-done:
		require.Error(t, err, "a cancelled index exits non-zero\n%s", stderr.String())
	case <-time.After(20 * time.Second):
		cmd.Process.Kill()
		t.Fatalf("citebook index ignored Ctrl-C for 20 s")
	}
	t.Logf("exited %s after Ctrl-C", time.Since(t0).Round(time.Millisecond))
	require.Less(t, time.Since(t0), 10*time.Second)
	require.Contains(t, stderr.String(), "cancelled")

	out, errOut, code := runCitebook(t, bin, "jobs", "--data", data)
	require.Zero(t, code, errOut)
	require.NotContains(t, out, "running")
}
