package main

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/citebook/citebook/index/embedder"
	"github.com/citebook/citebook/index/milvus"
	"github.com/citebook/citebook/index/storetest"
	"github.com/citebook/citebook/internal/corpus"
	"github.com/citebook/citebook/internal/dbtest"
	"github.com/citebook/citebook/qa"
)

// benchLib is a library for the benchmark: R-intro indexed, a reader
// token, and servers started on demand.
type benchLib struct {
	b     *testing.B
	args  []string
	token string
}

func newBenchLib(b *testing.B, meta, milvusAddr, collection string) *benchLib {
	data := b.TempDir()
	lib := []string{"--data", data}
	if meta != "" {
		lib = append(lib, "--meta", meta)
	}
	l := &benchLib{b: b, args: append(slices.Clone(lib), "--store", "milvus", "--milvus-addr", milvusAddr, "--milvus-collection", collection)}
	out, code := runBench(b, append([]string{"tokens", "create", "--tenant", "acme", "--user", "load"}, lib...))
	if code != 0 {
		b.Fatalf("tokens create: %s", out)
	}
	l.token = strings.TrimSpace(out)
	if out, code := runBench(b, append([]string{"index", corpus.Path(b, "books/R-intro.pdf"), "--book", "rintro", "--tenant", "acme"}, l.args...)); code != 0 {
		b.Fatalf("index: %s", out)
	}
	return l
}

// runBench runs the CLI in a child process to its end.
func runBench(b *testing.B, args []string) (string, int) {
	cmd := exec.Command(os.Args[0], args...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	var out bytes.Buffer
	cmd.Stdout = &out
	cmd.Stderr = io.Discard
	if err := cmd.Run(); err != nil {
		if ee, ok := err.(*exec.ExitError); ok {
			return out.String(), ee.ExitCode()
		}
		b.Fatal(err)
	}
	return out.String(), 0
}

// serve starts a server on the library and returns its URL and process.
func (l *benchLib) serve() (string, *exec.Cmd) {
	addr := freeAddr(l.b)
	cmd := exec.Command(os.Args[0], append([]string{"serve", "--addr", addr, "--index-workers", "0", "--rate", "0"}, l.args...)...)
	cmd.Env = append(os.Environ(), childEnv+"=1")
	cmd.Stderr = io.Discard
	if err := cmd.Start(); err != nil {
		l.b.Fatal(err)
	}
	l.b.Cleanup(func() { stop(cmd) })
	base := "http://" + addr
	deadline := time.Now().Add(60 * time.Second)
	for {
		res, err := http.Get(base + "/readyz")
		if err == nil {
			res.Body.Close()
			if res.StatusCode == 200 {
				break
			}
		}
		if time.Now().After(deadline) {
			l.b.Fatal("server did not start")
		}
		time.Sleep(50 * time.Millisecond)
	}
	return base, cmd
}

// benchQuestions are books-dev's R-intro questions' kind of text.
var benchQuestions = []string{
	"How can I send everything R prints into a file?",
	"How do I read data from a file into a data frame?",
	"What does the function attach do?",
	"How are missing values represented?",
	"How do I write my own function?",
	"What is a factor?",
}

// load sends /v1/search requests from conc clients, spread over bases,
// for d, and returns requests per second and the mean latency.
func load(b *testing.B, bases []string, token string, conc int, d time.Duration) (rps float64, mean time.Duration) {
	var n, fails atomic.Int64
	var total atomic.Int64
	stopAt := time.Now().Add(d)
	var wg sync.WaitGroup
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: conc}}
	t0 := time.Now()
	for i := range conc {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for k := i; time.Now().Before(stopAt); k++ {
				body, _ := json.Marshal(qa.Request{Question: benchQuestions[k%len(benchQuestions)]})
				req, _ := http.NewRequest("POST", bases[k%len(bases)]+"/v1/search", bytes.NewReader(body))
				req.Header.Set("Authorization", "Bearer "+token)
				req.Header.Set("Content-Type", "application/json")
				s := time.Now()
				res, err := client.Do(req)
				if err != nil {
					fails.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				if res.StatusCode != 200 {
					fails.Add(1)
					continue
				}
				total.Add(int64(time.Since(s)))
				n.Add(1)
			}
		}()
	}
	wg.Wait()
	if fails.Load() > 0 {
		b.Fatalf("%d failed requests", fails.Load())
	}
	if n.Load() == 0 {
		b.Fatal("no request succeeded")
	}
	return float64(n.Load()) / time.Since(t0).Seconds(), time.Duration(total.Load() / n.Load())
}

// cpuMS is a process's user+system CPU time in ms (/proc), so CPU per
// request can be told apart from waiting on shared cores.
func cpuMS(pid int) float64 {
	raw, err := os.ReadFile(filepath.Join("/proc", strconv.Itoa(pid), "stat"))
	if err != nil {
		return 0
	}
	s := string(raw)
	f := strings.Fields(s[strings.LastIndexByte(s, ')')+1:])
	u, _ := strconv.ParseFloat(f[11], 64)
	k, _ := strconv.ParseFloat(f[12], 64)
	return (u + k) * 1000 / 100 // USER_HZ is 100 on Linux
}

// BenchmarkSeveralServers measures /v1/search on the shared stores
// (PostgreSQL metadata, one Milvus collection, loopback): throughput with
// one server and with two splitting the same load, and the cost of the
// PostgreSQL metadata path per request beside SQLite (same Milvus, same
// book), printed as ratios from the same run. BENCH_SECONDS sets each
// phase's length (default 8, in one-second rounds), BENCH_CONC the clients
// (default 8).
//
//	. scripts/milvus.sh; . scripts/postgres.sh
//	go test -run '^$' -bench SeveralServers -benchtime 1x ./cmd/citebook
func BenchmarkSeveralServers(b *testing.B) {
	dsn := dbtest.DSN(b)
	addr := storetest.MilvusAddr(b)
	emb, err := embedder.New(embedder.Config{Provider: "builtin"})
	if err != nil {
		b.Fatal(err)
	}
	d := 8 * time.Second
	if s, err := strconv.Atoi(os.Getenv("BENCH_SECONDS")); err == nil && s > 0 {
		d = time.Duration(s) * time.Second
	}
	conc := 8
	if c, err := strconv.Atoi(os.Getenv("BENCH_CONC")); err == nil && c > 0 {
		conc = c
	}
	collection := func(kind string) string {
		name := fmt.Sprintf("citebook_bench_%s_%d_%d", kind, os.Getpid(), time.Now().UnixNano())
		b.Cleanup(func() {
			if s, err := milvus.Open(context.Background(), milvus.Config{Addr: addr, Collection: name, Dim: emb.Version().Dimension}); err == nil {
				s.Drop(context.Background())
				s.Close()
			}
		})
		return name
	}
	pg := newBenchLib(b, dsn, addr, collection("pg"))
	lite0 := newBenchLib(b, "", addr, collection("sqlite"))
	a, acmd := pg.serve()
	b2, bcmd := pg.serve()
	s, scmd := lite0.serve()
	for _, base := range []string{a, b2, s} { // warm caches and connections
		load(b, []string{base}, map[string]string{a: pg.token, b2: pg.token, s: lite0.token}[base], 2, time.Second)
	}
	b.ResetTimer()
	// Phases alternate in one-second slices (rounds of each), so load from
	// other work on the machine falls on both sides of every ratio alike.
	rounds := int(d / time.Second)
	type tally struct {
		n   float64
		lat time.Duration
		sec float64
		cpu float64
	}
	measure := func(t *tally, bases []string, token string, clients int, pids ...int) {
		c0 := 0.0
		for _, p := range pids {
			c0 -= cpuMS(p)
		}
		t0 := time.Now()
		rps, mean := load(b, bases, token, clients, time.Second)
		sec := time.Since(t0).Seconds()
		for _, p := range pids {
			c0 += cpuMS(p)
		}
		t.n += rps * sec
		t.lat += time.Duration(rps * sec * float64(mean))
		t.sec += sec
		t.cpu += c0
	}
	for range b.N {
		var lite, pgm, one, two tally
		for range rounds {
			// Metadata path: one client, so latency is the request's own.
			measure(&lite, []string{s}, lite0.token, 1, scmd.Process.Pid)
			measure(&pgm, []string{a}, pg.token, 1, acmd.Process.Pid)
			measure(&one, []string{a}, pg.token, conc, acmd.Process.Pid)
			measure(&two, []string{a, b2}, pg.token, conc, acmd.Process.Pid, bcmd.Process.Pid)
		}
		liteLat, pgLat := lite.lat/time.Duration(lite.n), pgm.lat/time.Duration(pgm.n)
		oneRPS, twoRPS := one.n/one.sec, two.n/two.sec
		b.ReportMetric(oneRPS, "rps-1server")
		b.ReportMetric(twoRPS, "rps-2servers")
		b.ReportMetric(twoRPS/oneRPS, "x-2servers/1")
		b.ReportMetric(float64(pgLat.Microseconds())/1000, "ms-latency-pg")
		b.ReportMetric(float64(liteLat.Microseconds())/1000, "ms-latency-sqlite")
		b.ReportMetric(float64(pgLat)/float64(liteLat), "x-pg/sqlite-latency")
		b.ReportMetric(pgm.cpu/pgm.n, "cpu-ms/req-pg")
		b.ReportMetric(lite.cpu/lite.n, "cpu-ms/req-sqlite")
		b.Logf("/v1/search, R-intro (297 chunks), Milvus vectors, %d clients, %d alternating 1 s rounds: 1 server %.0f req/s (%.2f server CPU-ms/req), 2 servers %.0f req/s (%.2fx, %.2f server CPU-ms/req)",
			conc, rounds, oneRPS, one.cpu/one.n, twoRPS, twoRPS/oneRPS, two.cpu/two.n)
		b.Logf("one client: PostgreSQL metadata %.2f ms/req (%.2f server CPU-ms), SQLite %.2f ms/req (%.2f CPU-ms): PostgreSQL costs %.2f ms more a request (%.2fx)",
			float64(pgLat.Microseconds())/1000, pgm.cpu/pgm.n, float64(liteLat.Microseconds())/1000, lite.cpu/lite.n,
			float64((pgLat-liteLat).Microseconds())/1000, float64(pgLat)/float64(liteLat))
	}
}
