//go:build unix

package embedded

import (
	"syscall"
	"unsafe"
)

// mapFloats maps n zeroed float32s anonymously, outside the Go heap; ok is
// false when the mapping failed.
func mapFloats(n int) (f []float32, ok bool) {
	b, err := syscall.Mmap(-1, 0, n*4, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	if err != nil {
		return nil, false
	}
	return unsafe.Slice((*float32)(unsafe.Pointer(&b[0])), n), true
}

// unmapFloats releases a mapping made by mapFloats (f at full capacity).
func unmapFloats(f []float32) {
	syscall.Munmap(unsafe.Slice((*byte)(unsafe.Pointer(unsafe.SliceData(f))), cap(f)*4))
}
