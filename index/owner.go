package index

import (
	"errors"

	"github.com/citebook/citebook"
	"os"
	"strconv"
	"strings"
	"syscall"
)

// Owner identifies the process running an index job (citebook.JobOwner).
type Owner = citebook.JobOwner

// ThisProcess is the owner of jobs run by the calling process.
func ThisProcess() Owner {
	host, _ := os.Hostname()
	pid := os.Getpid()
	return Owner{Host: host, PID: pid, Start: procStart(pid)}
}

// ownerAlive reports whether the owner process o still runs, as seen by
// process self; known is false when that cannot be told from here (another
// host: only its lease can say).
func ownerAlive(o, self Owner) (alive, known bool) {
	if o.PID <= 0 {
		return false, true // recorded before jobs had owners
	}
	if o.Host != self.Host {
		return false, false
	}
	if o.PID == self.PID && o.Start == self.Start {
		return true, true
	}
	if err := syscall.Kill(o.PID, 0); errors.Is(err, syscall.ESRCH) {
		return false, true
	}
	if o.Start != 0 {
		if st := procStart(o.PID); st != 0 && st != o.Start {
			return false, true // the PID now belongs to another process
		}
	}
	return true, true
}

// procStart reads a process's start time (field 22 of /proc/PID/stat); 0
// when unavailable.
func procStart(pid int) int64 {
	b, err := os.ReadFile("/proc/" + strconv.Itoa(pid) + "/stat")
	if err != nil {
		return 0
	}
	// The command name (field 2) is parenthesised and may contain spaces.
	s := string(b)
	i := strings.LastIndexByte(s, ')')
	if i < 0 {
		return 0
	}
	f := strings.Fields(s[i+1:])
	if len(f) < 20 {
		return 0
	}
	n, _ := strconv.ParseInt(f[19], 10, 64)
	return n
}
