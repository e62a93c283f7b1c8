//go:build !unix

package lexical

// mapBytes is only implemented on Unix systems; elsewhere the arena's
// blocks come from the heap.
func mapBytes(int) ([]byte, bool) { return nil, false }

func unmapBytes([]byte) {}
