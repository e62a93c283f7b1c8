package embedded

import (
	"sync"
	"unsafe"
)

// arena hands out the store's vector memory outside the Go heap (anonymous
// mappings, on Unix): the collector neither scans it nor counts it towards
// its next goal, so 300 MB of vectors at 100k chunks (row- and
// dimension-major) do not let the heap grow by another 300 MB before a
// collection, as a GOGC=100 heap would. Where mapping is unavailable or
// fails it falls back to the heap. It remembers its mappings so it never
// unmaps memory the heap owns.
type arena struct {
	mu     sync.Mutex
	mapped map[unsafe.Pointer]struct{}
}

func (a *arena) alloc(n int) []float32 {
	if n == 0 {
		return nil
	}
	f, ok := mapFloats(n)
	if !ok {
		return make([]float32, n)
	}
	a.mu.Lock()
	defer a.mu.Unlock()
	if a.mapped == nil {
		a.mapped = map[unsafe.Pointer]struct{}{}
	}
	a.mapped[unsafe.Pointer(unsafe.SliceData(f))] = struct{}{}
	return f
}

// free releases what alloc returned; f must keep its original capacity.
// Nothing may use f afterwards.
func (a *arena) free(f []float32) {
	if cap(f) == 0 {
		return
	}
	p := unsafe.Pointer(unsafe.SliceData(f))
	a.mu.Lock()
	_, ok := a.mapped[p]
	delete(a.mapped, p)
	a.mu.Unlock()
	if ok {
		unmapFloats(f[:cap(f)])
	}
}

// grow returns f extended to length n, moving it to a block half as large
// again when its capacity is short.
func (a *arena) grow(f []float32, n int) []float32 {
	if n <= cap(f) {
		return f[:n]
	}
	nf := a.alloc(max(n, cap(f)+cap(f)/2, 1<<16))
	copy(nf, f)
	a.free(f[:cap(f)])
	return nf[:n]
}
