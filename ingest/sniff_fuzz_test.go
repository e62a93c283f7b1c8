package ingest

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"testing"

	"github.com/citebook/citebook"
)

// testdataFile finds a test file of ingest or of the PDF reader's.
func testdataFile(name string) string {
	if filepath.Ext(name) == ".pdf" {
		return filepath.Join("pdf", "testdata", name)
	}
	return filepath.Join("testdata", name)
}

// FuzzSniff: whatever an upload holds, the cheap check returns nil or a
// coded error, never panics.
func FuzzSniff(f *testing.F) {
	for _, name := range []string{"aes256.pdf", "aes128.pdf", "lighthouse.md"} {
		if data, err := os.ReadFile(testdataFile(name)); err == nil {
			f.Add(name, data)
		}
	}
	f.Add("a.txt", []byte("\xff\xfeh\x00i\x00"))
	f.Add("b.epub", []byte("PK\x03\x04"))
	f.Fuzz(func(t *testing.T, name string, data []byte) {
		err := Sniff(context.Background(), name, bytes.NewReader(data), int64(len(data)))
		if err != nil && citebook.ErrorCode(err) == citebook.EINTERNAL {
			t.Fatalf("uncoded error: %v", err)
		}
	})
}
