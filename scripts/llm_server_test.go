// Package scripts_test checks the shell scripts that start model servers
// for evaluation, with fake servers in place of the models.
package scripts_test

import (
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/stretchr/testify/assert"
	"github.com/stretchr/testify/require"
)

// fakeLlamaServer answers /health on the port its --port names, as
// llama-server does once its model is loaded.
const fakeLlamaServer = `#!/usr/bin/env python3
import sys, http.server
port = int(sys.argv[sys.argv.index('--port') + 1])
class H(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        self.send_response(200 if self.path == '/health' else 404)
        self.end_headers()
    def log_message(self, *a):
        pass
http.server.HTTPServer(('127.0.0.1', port), H).serve_forever()
`

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	require.NoError(t, err)
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func healthy(port int) bool {
	c := http.Client{Timeout: 2 * time.Second}
	r, err := c.Get(fmt.Sprintf("http://127.0.0.1:%d/health", port))
	if err != nil {
		return false
	}
	r.Body.Close()
	return r.StatusCode == http.StatusOK
}

// Two servers on different ports keep their own pid and log files, and
// llm_stop stops only the server of its own port (before, both wrote
// server.pid and server.log in the cache, and the second start clobbered
// the first's pid, so stopping "the" server stopped the wrong one).
func TestLLMServersOnTwoPortsKeepApart(t *testing.T) {
	for _, tool := range []string{"bash", "curl", "python3"} {
		if _, err := exec.LookPath(tool); err != nil {
			if os.Getenv("CI") == "true" {
				t.Fatalf("%s is needed", tool)
			}
			t.Skipf("%s is needed", tool)
		}
	}
	cache := t.TempDir()
	require.NoError(t, os.MkdirAll(filepath.Join(cache, "bin"), 0o755))
	require.NoError(t, os.WriteFile(filepath.Join(cache, "bin", "llama-server"), []byte(fakeLlamaServer), 0o755))
	require.NoError(t, os.MkdirAll(filepath.Join(cache, "models"), 0o755))
	for _, m := range []string{"qwen2.5-coder-0.5b-instruct-q4_k_m", "smollm2-135m-instruct"} {
		require.NoError(t, os.WriteFile(filepath.Join(cache, "models", m+".gguf"), []byte("GGUF fake"), 0o644))
	}
	var started []int
	t.Cleanup(func() {
		for _, pid := range started {
			_ = syscall.Kill(pid, syscall.SIGKILL)
		}
	})
	// source runs the script in a fresh bash with the given port and model,
	// then the commands after it, and returns what they print.
	source := func(port int, model, then string) (string, error) {
		cmd := exec.Command("bash", "-c", ". ./llm-server.sh && "+then) // the test runs in scripts/
		cmd.Env = append(os.Environ(), "LLM_CACHE="+cache, "LLM_PORT="+strconv.Itoa(port), "LLM_MODEL="+model, "LLM_THREADS=1")
		out, err := cmd.CombinedOutput()
		return string(out), err
	}
	start := func(port int, model string) int {
		out, err := source(port, model, `echo "pid=$LLM_PID"`)
		require.NoError(t, err, out)
		i := strings.LastIndex(out, "pid=")
		require.GreaterOrEqual(t, i, 0, out)
		pid, err := strconv.Atoi(strings.TrimSpace(out[i+4:]))
		require.NoError(t, err, out)
		started = append(started, pid)
		return pid
	}
	p1, p2 := freePort(t), freePort(t)
	for p1 == p2 {
		p2 = freePort(t)
	}
	const qwen = "qwen-coder-0.5b"
	a := start(p1, qwen)
	b := start(p2, qwen)
	require.NotEqual(t, a, b)
	require.True(t, healthy(p1) && healthy(p2))
	for port, pid := range map[int]int{p1: a, p2: b} {
		f, err := os.ReadFile(filepath.Join(cache, "run", fmt.Sprintf("%s-%d.pid", qwen, port)))
		require.NoError(t, err)
		assert.Equal(t, strconv.Itoa(pid), strings.TrimSpace(string(f)), "pid file of port %d", port)
		assert.FileExists(t, filepath.Join(cache, "run", fmt.Sprintf("%s-%d.log", qwen, port)))
	}
	assert.Equal(t, a, start(p1, qwen), "sourcing again reuses the port's server")

	out, err := source(p1, "smollm2-135m", "true")
	require.Error(t, err, "another model's server on the port is not taken for this one")
	assert.Contains(t, out, fmt.Sprintf("port %d answers", p1))

	out, err = source(p1, qwen, "llm_stop")
	require.NoError(t, err, out)
	assert.False(t, healthy(p1), "the stopped server still answers")
	assert.True(t, healthy(p2), "llm_stop of port %d stopped the server of port %d", p1, p2)
	assert.NoError(t, syscall.Kill(b, 0))

	out, err = source(p2, qwen, "llm_stop")
	require.NoError(t, err, out)
	assert.False(t, healthy(p2))
}
