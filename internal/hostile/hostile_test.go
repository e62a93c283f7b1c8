package hostile

import (
	"bytes"
	"compress/zlib"
	"io"
	"testing"
)

// TestDeflate checks the shortcut stream inflates to exactly what it claims,
// checksum included.
func TestDeflate(t *testing.T) {
	for _, c := range []struct {
		n    int64
		unit string
	}{{5<<20 + 123, ""}, {3 << 20, "0 0 m 10 10 l S\n"}, {5 << 20, "1 0 0 1 0.5 0 cm 0 0 m 10 10 l S\n"}, {100, ""}} {
		data := deflate("BT ET\n", c.n, []byte(c.unit), "")
		zr, err := zlib.NewReader(bytes.NewReader(data))
		if err != nil {
			t.Fatal(err)
		}
		got, err := io.ReadAll(zr)
		if err != nil {
			t.Fatalf("n=%d: %v", c.n, err)
		}
		want := []byte("BT ET\n")
		for int64(len(want)) < c.n+6 {
			if c.unit == "" {
				want = append(want, 0)
			} else {
				want = append(want, c.unit...)
			}
		}
		if !bytes.Equal(got, want[:c.n+6]) {
			t.Fatalf("n=%d: inflated %d bytes, want %d", c.n, len(got), c.n+6)
		}
	}
}
