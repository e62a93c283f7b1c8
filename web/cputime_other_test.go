//go:build !unix

package web

import "time"

// cpuTime is not measured off Unix; the benchmark reports 0 CPU time.
func cpuTime() time.Duration { return 0 }
