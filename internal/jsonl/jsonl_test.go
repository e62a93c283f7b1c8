package jsonl

import (
	"errors"
	"strings"
	"testing"

	"github.com/stretchr/testify/require"

	"github.com/citebook/citebook"
)

type rec struct {
	ID string `json:"id"`
}

func TestDecode(t *testing.T) {
	needID := func(r *rec) error {
		if r.ID == "" {
			return errors.New("needs an id")
		}
		return nil
	}
	long := `{"id":"x","pad":"` + strings.Repeat("a", 2<<20) + `"}` // beyond bufio.Scanner's 64 KiB
	for _, tc := range []struct {
		name, data string
		want       []rec
		err        string
	}{
		{"lines, blank and CRLF ones skipped", "{\"id\":\"a\"}\r\n\n  \n{\"id\":\"b\"}", []rec{{"a"}, {"b"}}, ""},
		{"a line longer than a scanner's buffer", long, []rec{{"x"}}, ""},
		{"a bad line is named", "{\"id\":\"a\"}\nnot json\n", nil, "q.jsonl line 2 is not valid JSON"},
		{"check refuses a line", "{\"id\":\"a\"}\n\n{}\n", nil, "q.jsonl line 3: needs an id"},
		{"empty", "", nil, ""},
	} {
		t.Run(tc.name, func(t *testing.T) {
			got, err := Decode([]byte(tc.data), "q.jsonl", needID)
			if tc.err != "" {
				require.ErrorContains(t, err, tc.err)
				require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err))
				return
			}
			require.NoError(t, err)
			require.Equal(t, tc.want, got)
		})
	}
}
