package sqlitefile

import (
	"bufio"
	"context"
	"database/sql"
	"encoding/binary"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
)

// A snapshot is a store's in-memory index saved in a file next to its
// database, so that a restart reads it back instead of decoding and
// re-analysing every row. The database stays the only durable copy: a
// snapshot records the database generation and a format string (the store's
// layout version, plus whatever analysis it depends on), and is used only
// when both still match; otherwise the store rebuilds from the database as
// before and saves a fresh snapshot. A snapshot is written to a temporary
// file and renamed into place, so a crash leaves the old one or the new one,
// never half of one — and an old one only ever fails the generation check.

const snapMagic = "citebook snapshot 1\n"

// SaveSnapshot writes the snapshot name in dir for generation gen and the
// given format; body writes the payload.
func SaveSnapshot(dir, name string, gen uint64, format string, body func(w *bufio.Writer) error) (err error) {
	tmp, err := os.CreateTemp(dir, name+".tmp*")
	if err != nil {
		return err
	}
	defer func() {
		if err != nil {
			tmp.Close()
			os.Remove(tmp.Name())
		}
	}()
	w := bufio.NewWriterSize(tmp, 1<<20)
	w.WriteString(snapMagic)
	binary.Write(w, binary.LittleEndian, gen)
	binary.Write(w, binary.LittleEndian, uint32(len(format)))
	w.WriteString(format)
	if err = body(w); err != nil {
		return err
	}
	if err = w.Flush(); err != nil {
		return err
	}
	if err = tmp.Sync(); err != nil {
		return err
	}
	if err = tmp.Close(); err != nil {
		return err
	}
	return os.Rename(tmp.Name(), filepath.Join(dir, name))
}

// ErrStale says a snapshot is missing or does not match the database.
var ErrStale = errors.New("no current snapshot")

// LoadSnapshot opens the snapshot name in dir and calls body with its
// payload when it was saved at the database's current generation with the
// same format; otherwise it returns ErrStale without calling body. size is
// the file's length, an upper bound for anything the payload claims to hold.
func LoadSnapshot(ctx context.Context, db *sql.DB, dir, name, format string, body func(r *bufio.Reader, size int64) error) error {
	f, err := os.Open(filepath.Join(dir, name))
	if err != nil {
		return ErrStale
	}
	defer f.Close()
	r := bufio.NewReaderSize(f, 1<<20)
	magic := make([]byte, len(snapMagic))
	var gen uint64
	var n uint32
	if _, err := io.ReadFull(r, magic); err != nil || string(magic) != snapMagic {
		return ErrStale
	}
	if binary.Read(r, binary.LittleEndian, &gen) != nil || binary.Read(r, binary.LittleEndian, &n) != nil || n > 1<<16 {
		return ErrStale
	}
	got := make([]byte, n)
	if _, err := io.ReadFull(r, got); err != nil || string(got) != format {
		return ErrStale
	}
	cur, err := Generation(ctx, db)
	if err != nil {
		return err
	}
	if cur != gen {
		return ErrStale
	}
	st, err := f.Stat()
	if err != nil {
		return ErrStale
	}
	if err := body(r, st.Size()); err != nil {
		return fmt.Errorf("snapshot %s: %w", name, err)
	}
	return nil
}
