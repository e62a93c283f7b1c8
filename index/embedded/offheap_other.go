//go:build !unix

package embedded

// mapFloats is only implemented on Unix systems; elsewhere the arena
// allocates on the heap.
func mapFloats(n int) ([]float32, bool) { return nil, false }

func unmapFloats(f []float32) {}
