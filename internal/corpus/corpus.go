// Package corpus locates the shared test corpus for tests. CI sets
// CITEBOOK_CORPUS (and CI=true); a test that needs the corpus fails there when
// it is missing, and is skipped only on a developer machine without it.
package corpus

import (
	"os"
	"path/filepath"
	"testing"
)

// Dir returns the corpus root (the folder holding MANIFEST.md).
func Dir(t testing.TB) string {
	t.Helper()
	dir := os.Getenv("CITEBOOK_CORPUS")
	if dir != "" {
		if _, err := os.Stat(filepath.Join(dir, "MANIFEST.md")); err == nil {
			return dir
		}
	}
	if os.Getenv("CI") != "" {
		t.Fatalf("CITEBOOK_CORPUS=%q does not hold the corpus (MANIFEST.md); CI must set it", dir)
	}
	t.Skipf("corpus not found (set CITEBOOK_CORPUS); skipped outside CI")
	return ""
}

// Path returns a file inside the corpus, failing the test when it is absent.
func Path(t testing.TB, rel string) string {
	t.Helper()
	p := filepath.Join(Dir(t), rel)
	if _, err := os.Stat(p); err != nil {
		t.Fatalf("corpus file %s: %v", rel, err)
	}
	return p
}
