// Package jsonl decodes JSON-lines data — one JSON value a line — the one
// way citebook reads its line files (eval datasets, FinanceBench, index
// manifests): blank lines are skipped, no line is too long, and a line
// that does not decode, or that check refuses, is named by its number.
package jsonl

import (
	"bytes"
	"encoding/json"

	"github.com/citebook/citebook"
)

// Decode decodes every non-blank line of data as a T and passes it to
// check (nil: none). what names the data in errors ("dataset q.jsonl");
// every error is EINVALID.
func Decode[T any](data []byte, what string, check func(*T) error) ([]T, error) {
	var out []T
	for n, line := range bytes.Split(data, []byte("\n")) {
		line = bytes.TrimSpace(line)
		if len(line) == 0 {
			continue
		}
		var v T
		if err := json.Unmarshal(line, &v); err != nil {
			return nil, citebook.Wrap(err, citebook.EINVALID, "%s line %d is not valid JSON", what, n+1)
		}
		if check != nil {
			if err := check(&v); err != nil {
				return nil, citebook.Wrap(err, citebook.EINVALID, "%s line %d: %s", what, n+1, err)
			}
		}
		out = append(out, v)
	}
	return out, nil
}
