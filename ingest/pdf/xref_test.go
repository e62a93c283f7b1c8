package pdf

import (
	"bytes"
	"os"
	"reflect"
	"strconv"
	"testing"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/ledongthuc/pdf"
	"github.com/stretchr/testify/require"
)

// TestCheckXrefNesting holds the guard against object streams nested in
// object streams: the library's unexported table must still be readable
// (else the guard would silently pass everything), and the file the fuzzer
// found — whose stream cycle overflowed the stack — is refused as invalid.
func TestCheckXrefNesting(t *testing.T) {
	rd := &pdf.Reader{}
	table := reflect.ValueOf(rd).Elem().FieldByName("xref")
	require.True(t, table.IsValid(), "pdf.Reader keeps its cross-reference table in field xref")
	entry := table.Type().Elem()
	for _, f := range []string{"inStream", "stream"} {
		_, ok := entry.FieldByName(f)
		require.True(t, ok, "xref entries have field %s", f)
	}

	raw, err := os.ReadFile("testdata/fuzz/FuzzDecryptAES256/2fb450d6679e0a48")
	require.NoError(t, err)
	// The corpus file format is: a header line, then []byte("...") in Go syntax.
	data := fuzzCorpusBytes(t, raw)
	_, err = decryptAES256(bytes.NewReader(data), int64(len(data)))
	require.Error(t, err)
	_, err = openPDFChecked(bytes.NewReader(data), int64(len(data)), newDocBudget(t.Context(), parsing.DefaultLimits()), true)
	require.Equal(t, citebook.EINVALID, citebook.ErrorCode(err), "%v", err)
}

// fuzzCorpusBytes decodes a one-value "go test fuzz v1" corpus file.
func fuzzCorpusBytes(t *testing.T, raw []byte) []byte {
	t.Helper()
	lines := bytes.SplitN(raw, []byte("\n"), 2)
	require.Len(t, lines, 2)
	require.Equal(t, "go test fuzz v1", string(lines[0]))
	lit := bytes.TrimSpace(lines[1])
	require.True(t, bytes.HasPrefix(lit, []byte("[]byte(")) && bytes.HasSuffix(lit, []byte(")")))
	s, err := strconv.Unquote(string(lit[len("[]byte(") : len(lit)-1]))
	require.NoError(t, err)
	return []byte(s)
}
