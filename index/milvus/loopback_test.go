package milvus

import (
	"encoding/hex"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/stretchr/testify/require"
)

// TestServerListensOnLoopbackOnly (issue 10): the test Milvus that
// scripts/milvus.sh starts must not be reachable from other machines. Every
// listening socket its processes hold in this network namespace is bound to
// a loopback address — Milvus 2.3.5 itself binds ":port", so the script
// keeps it in a namespace of its own and only relays the proxy and health
// ports here — and the proxy port is among them.
func TestServerListensOnLoopbackOnly(t *testing.T) {
	addr, cmd := privateServer(t)
	openWhenReady(t, addr, 5*time.Second)
	_, port, err := net.SplitHostPort(addr)
	require.NoError(t, err)

	// The sockets of the server's processes: the script's and its children.
	pids := []int{cmd.Process.Pid}
	for i := 0; i < len(pids); i++ {
		pids = append(pids, children(pids[i])...)
	}
	owned := map[string]int{}
	for _, pid := range pids {
		fds, _ := os.ReadDir(filepath.Join("/proc", strconv.Itoa(pid), "fd"))
		for _, fd := range fds {
			link, err := os.Readlink(filepath.Join("/proc", strconv.Itoa(pid), "fd", fd.Name()))
			if err == nil && strings.HasPrefix(link, "socket:[") {
				owned[strings.TrimSuffix(strings.TrimPrefix(link, "socket:["), "]")] = pid
			}
		}
	}
	var listening []string
	for _, file := range []string{"/proc/self/net/tcp", "/proc/self/net/tcp6"} {
		data, err := os.ReadFile(file)
		require.NoError(t, err)
		for _, line := range strings.Split(string(data), "\n")[1:] {
			f := strings.Fields(line)
			if len(f) < 10 || f[3] != "0A" { // 0A: LISTEN
				continue
			}
			pid, ok := owned[f[9]]
			if !ok {
				continue
			}
			ip, p := procAddr(t, f[1])
			listening = append(listening, net.JoinHostPort(ip.String(), strconv.Itoa(p)))
			require.True(t, ip.IsLoopback(), "pid %d listens on %s:%d, not loopback", pid, ip, p)
		}
	}
	require.Contains(t, listening, "127.0.0.1:"+port, "the proxy port is served on loopback")
	t.Logf("listening in this namespace: %v", listening)
}

// children lists the direct children of a process, from /proc/*/stat.
func children(pid int) []int {
	entries, _ := os.ReadDir("/proc")
	var out []int
	for _, e := range entries {
		n, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		// pid (comm) state ppid ...; comm may hold spaces, so cut at the last ')'.
		rest := string(stat[strings.LastIndexByte(string(stat), ')')+1:])
		if f := strings.Fields(rest); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, n)
		}
	}
	return out
}

// procAddr decodes a /proc/net/tcp{,6} address: the IP as 32-bit words in
// host (little-endian) order, then the port in hex.
func procAddr(t *testing.T, s string) (net.IP, int) {
	t.Helper()
	h, p, ok := strings.Cut(s, ":")
	require.True(t, ok, s)
	raw, err := hex.DecodeString(h)
	require.NoError(t, err, s)
	for i := 0; i+4 <= len(raw); i += 4 {
		raw[i], raw[i+1], raw[i+2], raw[i+3] = raw[i+3], raw[i+2], raw[i+1], raw[i]
	}
	port, err := strconv.ParseInt(p, 16, 32)
	require.NoError(t, err, s)
	return net.IP(raw), int(port)
}
