package pdf

import (
	"bufio"
	"bytes"
	"compress/zlib"
	"io"
	"regexp"
	"strconv"
	"strings"

	"github.com/citebook/citebook"
)

// The PDF library decodes two things on its own, out of reach of the
// budget readers: cross-reference data (sizing its object table from
// numbers in the file, so "/Size 1000000000" is a 40 GB allocation that
// kills the process) and object streams (inflated whenever an object in
// them is resolved). checkPDFStructure looks at both before the library
// does. Invariants, for any file it passes: no cross-reference section
// declares objects numbered beyond maxPDFObjects, and no Flate object
// stream inflates past Limits.MaxStreamBytes. Reads are bounded windows and
// one streaming pass over the file; nothing is held whole.

// maxPDFObjects bounds object numbers; the largest real books have a few
// hundred thousand objects.
const maxPDFObjects = 4_000_000

var (
	objStmName = regexp.MustCompile(`/ObjStm[\s/<>\[\]()%]`)
	objStart   = regexp.MustCompile(`\d+\s+\d+\s+obj\b`)
)

func errTooManyObjects(n int64) error {
	return citebook.Errorf(citebook.ETOOLARGE,
		"PDF declares object number %d, more than the %d citebook reads; the file is malformed or hostile", n, maxPDFObjects)
}

// checkPDFStructure runs the checks on a file before the library opens it
// (a parse; the upload sniff checks only the cross-reference sections).
func checkPDFStructure(r io.ReaderAt, size int64, b *docBudget) error {
	if err := checkXrefSections(r, size); err != nil {
		return err
	}
	return checkObjectStreams(r, size, b)
}

// window reads up to n bytes at off.
func window(r io.ReaderAt, size, off int64, n int) []byte {
	if off < 0 || off >= size {
		return nil
	}
	buf := make([]byte, min(int64(n), size-off))
	k, _ := r.ReadAt(buf, off)
	return buf[:k]
}

// checkXrefSections follows startxref and the /Prev chain, checking the
// object numbers each classic table or cross-reference stream declares.
// What it cannot parse it leaves to the library, which reports damage.
func checkXrefSections(r io.ReaderAt, size int64) error {
	tail := window(r, size, max(0, size-1024), 1024)
	i := bytes.LastIndex(tail, []byte("startxref"))
	if i < 0 {
		return nil
	}
	f := strings.Fields(string(tail[i+len("startxref"):]))
	if len(f) == 0 {
		return nil
	}
	off, err := strconv.ParseInt(f[0], 10, 64)
	if err != nil {
		return nil
	}
	seen := map[int64]bool{}
	for range 256 {
		if off <= 0 || off >= size || seen[off] {
			return nil
		}
		seen[off] = true
		head := bytes.TrimLeft(window(r, size, off, 64), " \t\r\n\f\x00")
		var trailer map[string]any
		switch {
		case bytes.HasPrefix(head, []byte("xref")):
			if trailer, err = checkXrefTable(r, size, off); err != nil {
				return err
			}
		case objStart.Match(head):
			s := &cryptScanner{data: window(r, size, off, 1<<20)}
			s.pos = objStart.FindIndex(s.data)[1]
			var strs [][2]int
			trailer, _ = s.value(0, &strs).(map[string]any)
			if err := checkObjectCount(trailer); err != nil {
				return err
			}
		default:
			return nil
		}
		prev, ok := trailer["Prev"].(int64)
		if !ok {
			return nil
		}
		off = prev
	}
	return nil
}

// checkObjectCount checks a cross-reference stream's /Size (the library
// allocates that many entries) and /Index ranges.
func checkObjectCount(d map[string]any) error {
	if n, ok := d["Size"].(int64); ok && (n > maxPDFObjects || n < 0) {
		return errTooManyObjects(n)
	}
	index, _ := d["Index"].([]any)
	for i := 0; i+1 < len(index); i += 2 {
		start, _ := index[i].(int64)
		count, _ := index[i+1].(int64)
		if start < 0 || count < 0 || start+count > maxPDFObjects {
			return errTooManyObjects(start + count)
		}
	}
	return nil
}

// checkXrefTable reads a classic table line by line: "start count"
// subsection headers, entries, then the trailer dictionary.
func checkXrefTable(r io.ReaderAt, size, off int64) (map[string]any, error) {
	br := bufio.NewReaderSize(io.NewSectionReader(r, off, size-off), 64<<10)
	read, lineStart := int64(0), int64(0)
	var pending []string // tokens of the line being read
	next := func() (string, bool) {
		for len(pending) == 0 {
			line, err := br.ReadString('\n')
			lineStart = read
			read += int64(len(line))
			if line == "" && err != nil {
				return "", false
			}
			pending = strings.Fields(strings.ReplaceAll(line, "\r", "\n"))
		}
		t := pending[0]
		pending = pending[1:]
		return t, true
	}
	if t, ok := next(); !ok || t != "xref" {
		return nil, nil
	}
	for {
		t, ok := next()
		if !ok {
			return nil, nil
		}
		if strings.HasPrefix(t, "trailer") {
			break
		}
		start, err1 := strconv.ParseInt(t, 10, 64)
		c, _ := next()
		count, err2 := strconv.ParseInt(c, 10, 64)
		if err1 != nil || err2 != nil {
			return nil, nil // malformed: the library says so
		}
		if start < 0 || count < 0 || start+count > maxPDFObjects {
			return nil, errTooManyObjects(start + count)
		}
		for range count * 3 {
			if _, ok := next(); !ok {
				return nil, nil
			}
		}
	}
	// The trailer dictionary follows: parse it from the file.
	win := window(r, size, off+lineStart, 64<<10)
	s := &cryptScanner{data: win}
	if k := bytes.Index(win, []byte("<<")); k >= 0 {
		s.pos = k
	}
	var strs [][2]int
	d, _ := s.value(0, &strs).(map[string]any)
	return d, nil // a classic trailer's /Size only truncates the table
}

// checkObjectStreams finds every object stream by its /ObjStm type (their
// dictionaries are never compressed) in one pass over the file and inflates
// each Flate one within the per-stream budget, without keeping the output.
func checkObjectStreams(r io.ReaderAt, size int64, b *docBudget) error {
	const chunk, overlap = 1 << 20, 16
	buf := make([]byte, chunk+overlap)
	checked := map[int64]bool{}
	for off := int64(0); off < size; off += chunk {
		n, _ := r.ReadAt(buf[:min(int64(len(buf)), size-off)], off)
		if n == 0 {
			break
		}
		for _, m := range objStmName.FindAllIndex(buf[:n], -1) {
			if m[0] >= chunk {
				continue // seen again in the next chunk
			}
			if err := checkObjectStream(r, size, off+int64(m[0]), b, checked); err != nil {
				return err
			}
		}
		if err := b.check(); err != nil {
			return err
		}
	}
	return nil
}

// checkObjectStream inflates the object stream whose dictionary holds the
// /ObjStm name at pos.
func checkObjectStream(r io.ReaderAt, size, pos int64, b *docBudget, checked map[int64]bool) error {
	from := max(0, pos-4096)
	win := window(r, size, from, int(pos-from)+8192)
	hdrs := objStart.FindAllIndex(win[:pos-from], -1)
	if len(hdrs) == 0 {
		return nil
	}
	s := &cryptScanner{data: win, pos: hdrs[len(hdrs)-1][1]}
	var strs [][2]int
	d, _ := s.value(0, &strs).(map[string]any)
	if d == nil || d["Type"] != pdfName("ObjStm") || d["Filter"] != pdfName("FlateDecode") {
		return nil
	}
	s.space()
	if !bytes.HasPrefix(s.data[s.pos:], []byte("stream")) {
		return nil
	}
	s.pos += len("stream")
	if s.pos < len(s.data) && s.data[s.pos] == '\r' {
		s.pos++
	}
	if s.pos < len(s.data) && s.data[s.pos] == '\n' {
		s.pos++
	}
	start := from + int64(s.pos)
	if checked[start] {
		return nil
	}
	checked[start] = true
	length, ok := d["Length"].(int64)
	if !ok || length <= 0 || start+length > size {
		length = size - start // an indirect length: read until the data ends
	}
	zr, err := zlib.NewReader(io.NewSectionReader(r, start, length))
	if err != nil {
		return nil // undecodable (or encrypted): the library decides
	}
	if _, err := io.Copy(io.Discard, b.reader(zr)); err != nil {
		return b.check() // a limit passed or the deadline; corrupt data is the library's to report
	}
	return nil
}
