package pdf

import (
	"bytes"
	"errors"
	"io"
	"reflect"

	"github.com/citebook/citebook"
	"github.com/ledongthuc/pdf"
)

// checkXrefNesting refuses a file whose cross-reference table stores an
// object stream inside an object stream, which ISO 32000-1 §7.5.7 forbids.
// The PDF library follows such a chain recursively, so a cycle (a stream
// said to be inside itself, or two inside each other) overflows the stack —
// a fatal error no recover catches, found by FuzzDecryptAES256. It must run
// right after pdf.NewReader, before any value is resolved. The library keeps
// the table unexported, so it is read (never written) through reflection;
// TestCheckXrefNesting fails if the library's fields change.
func checkXrefNesting(rd *pdf.Reader) error {
	if rd == nil {
		return nil
	}
	table := reflect.ValueOf(rd).Elem().FieldByName("xref")
	if !table.IsValid() || table.Kind() != reflect.Slice {
		return nil
	}
	n := table.Len()
	for i := range n {
		e := table.Index(i)
		if !e.FieldByName("inStream").Bool() {
			continue
		}
		id := e.FieldByName("stream").FieldByName("id").Uint()
		if id < uint64(n) && table.Index(int(id)).FieldByName("inStream").Bool() {
			return citebook.Errorf(citebook.EINVALID, "PDF file is corrupt: an object stream is stored inside an object stream")
		}
	}
	return nil
}

// checkEncryptedXref runs checkXrefNesting for an encrypted file, whose
// pdf.NewReader resolves the encryption dictionary (and so may follow a
// nested object stream) before any check could run: it opens an in-memory
// copy with /Encrypt renamed to /NoCrypt (same length, nothing moves), so
// the library only builds its table. Files above maxDecryptCopy are left to
// the library, as decryptAES256 leaves them.
func checkEncryptedXref(r io.ReaderAt, size int64) error {
	if size > maxDecryptCopy {
		return nil
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil // the real open reports it
	}
	data = encryptKey.ReplaceAll(data, []byte("/NoCrypt$1"))
	rd, err := pdf.NewReader(bytes.NewReader(data), size)
	if err != nil {
		return nil // the real open reports it
	}
	return checkXrefNesting(rd)
}
