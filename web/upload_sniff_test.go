package web

import (
	"os"
	"path/filepath"
	"testing"

	"github.com/stretchr/testify/require"
)

// TestUploadSniff: plainly bad files are refused at once with 400 (they used
// to answer 202 and fail in the job), and nothing is stored or queued.
func TestUploadSniff(t *testing.T) {
	e := newEnv(t, envOpts{})
	encrypted := "%PDF-1.4\n1 0 obj\n<< /Type /Catalog /Pages 2 0 R >>\nendobj\nxref\n0 2\n0000000000 65535 f \n0000000009 00000 n \n" +
		"trailer\n<< /Size 2 /Root 1 0 R /Encrypt << /Filter /Standard /V 1 /R 2 /O <00> /U <00> /P -4 >> /ID [<0102> <0102>] >>\nstartxref\n58\n%%EOF\n"
	cases := []struct {
		name    string
		content []byte
		msg     string
	}{
		{"empty.pdf", []byte{}, "empty"},
		{"utf32.txt", []byte("a\x00\x00\x00b\x00\x00\x00c\x00\x00\x00"), "binary file"},
		{"photo.pdf", []byte("\xff\xd8\xff\xe0 JFIF"), "not a PDF"},
		{"locked.pdf", []byte(encrypted), "encrypted"},
		{"book.epub", []byte("PK\x03\x04 broken"), "EPUB"},
	}
	for _, c := range cases {
		body, ctype := multipartBody(t, nil, c.name, c.content)
		res, data := e.do(t, "admin", "POST", "/v1/books", body, "Content-Type", ctype)
		require.Equal(t, 400, res.StatusCode, "%s: %s", c.name, data)
		require.Contains(t, string(data), c.msg, c.name)
	}
	require.Empty(t, e.builds, "no job queued for a refused upload")
	stored, _ := filepath.Glob(filepath.Join(e.dataDir, "books", "*"))
	for _, f := range stored {
		st, err := os.Stat(f)
		require.NoError(t, err)
		require.False(t, st.Mode().IsRegular() && filepath.Ext(f) != "", "refused upload stored as %s", f)
	}
}
