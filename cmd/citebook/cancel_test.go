package main

import (
	"bytes"
	"os"
	"os/exec"
	"path/filepath"
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
