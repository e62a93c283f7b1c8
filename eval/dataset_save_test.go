package eval

import (
	"bytes"
	"encoding/json"
	"os"

	"github.com/citebook/citebook"
)

// Save writes questions as JSONL, the form Load reads; only the tests
// write datasets.
func Save(path string, qs []Question) error {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	for i := range qs {
		if err := enc.Encode(&qs[i]); err != nil {
			return citebook.Wrap(err, citebook.EINTERNAL, "cannot encode question %s", qs[i].ID)
		}
	}
	if err := os.WriteFile(path, b.Bytes(), 0o644); err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "cannot write dataset %s", path)
	}
	return nil
}
