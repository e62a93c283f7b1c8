// Command loadgen drives a bounded load against one citebook endpoint: a
// fixed number of workers send POSTs for a fixed duration, cycling through
// questions, and it prints requests per second and latency percentiles.
// It exists so `bench/load.sh` needs nothing beyond Go.
package main

import (
	"bufio"
	"bytes"
	"encoding/json"
	"flag"
	"fmt"
	"io"
	"log"
	"net/http"
	"os"
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

func main() {
	url := flag.String("url", "http://127.0.0.1:8080/v1/search", "endpoint to POST to")
	token := flag.String("token", os.Getenv("CITEBOOK_TOKEN"), "bearer token (env CITEBOOK_TOKEN)")
	qfile := flag.String("questions", "", "file of questions, one per line")
	workers := flag.Int("c", 16, "concurrent workers")
	dur := flag.Duration("d", 15*time.Second, "duration")
	k := flag.Int("k", 0, "k sent with each request (0: server default)")
	flag.Parse()

	qs, err := readLines(*qfile)
	if err != nil || len(qs) == 0 {
		log.Fatalf("questions: %v (need -questions FILE with at least one line)", err)
	}
	bodies := make([][]byte, len(qs))
	for i, q := range qs {
		bodies[i], _ = json.Marshal(map[string]any{"question": q, "k": *k})
	}
	client := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *workers}, Timeout: time.Minute}

	var (
		next, errs atomic.Int64
		mu         sync.Mutex
		lat        []time.Duration
		wg         sync.WaitGroup
		codes      sync.Map
	)
	deadline := time.Now().Add(*dur)
	start := time.Now()
	for range *workers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			var mine []time.Duration
			for time.Now().Before(deadline) {
				body := bodies[next.Add(1)%int64(len(bodies))]
				req, _ := http.NewRequest(http.MethodPost, *url, bytes.NewReader(body))
				req.Header.Set("Content-Type", "application/json")
				if *token != "" {
					req.Header.Set("Authorization", "Bearer "+*token)
				}
				t0 := time.Now()
				res, err := client.Do(req)
				if err != nil {
					errs.Add(1)
					continue
				}
				io.Copy(io.Discard, res.Body)
				res.Body.Close()
				mine = append(mine, time.Since(t0))
				if res.StatusCode != http.StatusOK {
					errs.Add(1)
					n, _ := codes.LoadOrStore(res.StatusCode, new(atomic.Int64))
					n.(*atomic.Int64).Add(1)
				}
			}
			mu.Lock()
			lat = append(lat, mine...)
			mu.Unlock()
		}()
	}
	wg.Wait()
	elapsed := time.Since(start)
	slices.Sort(lat)
	pct := func(p float64) time.Duration {
		if len(lat) == 0 {
			return 0
		}
		return lat[min(len(lat)-1, int(p*float64(len(lat))))]
	}
	fmt.Printf("%s: %d requests in %s with %d workers: %.0f req/s, p50 %s, p95 %s, p99 %s, errors %d\n",
		*url, len(lat), elapsed.Round(time.Millisecond), *workers, float64(len(lat))/elapsed.Seconds(),
		pct(.50).Round(time.Microsecond), pct(.95).Round(time.Microsecond), pct(.99).Round(time.Microsecond), errs.Load())
	codes.Range(func(k, v any) bool {
		fmt.Printf("  status %v: %d\n", k, v.(*atomic.Int64).Load())
		return true
	})
}

func readLines(path string) ([]string, error) {
	f, err := os.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	var out []string
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		if l := bytes.TrimSpace(sc.Bytes()); len(l) > 0 {
			out = append(out, string(l))
		}
	}
	return out, sc.Err()
}
