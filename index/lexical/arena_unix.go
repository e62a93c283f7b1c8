//go:build unix

package lexical

import "syscall"

// mapBytes maps n zeroed bytes anonymously, outside the Go heap; ok is
// false when the mapping failed.
func mapBytes(n int) ([]byte, bool) {
	b, err := syscall.Mmap(-1, 0, n, syscall.PROT_READ|syscall.PROT_WRITE, syscall.MAP_ANON|syscall.MAP_PRIVATE)
	return b, err == nil
}

// unmapBytes releases a mapping made by mapBytes.
func unmapBytes(b []byte) { _ = syscall.Munmap(b) }
