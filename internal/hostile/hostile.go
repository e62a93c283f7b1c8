// Package hostile writes the adversarial PDFs of issue 10 — a Flate bomb and
// a many-page file sharing one huge content stream — so the parser's tests
// and bench/hostile.sh build the very same files instead of shipping them;
// PDF assembles the small hand-made files the tests need besides.
package hostile

import (
	"bufio"
	"bytes"
	"compress/flate"
	"encoding/binary"
	"fmt"
	"hash/adler32"
	"io"
	"strconv"
)

// pdfWriter assembles a PDF with a correct cross-reference table.
type pdfWriter struct {
	w       *bufio.Writer
	n       int64
	offsets []int64
}

func newPDFWriter(w io.Writer) *pdfWriter {
	p := &pdfWriter{w: bufio.NewWriterSize(w, 1<<20)}
	p.write("%PDF-1.7\n%\xe2\xe3\xcf\xd3\n")
	return p
}

func (p *pdfWriter) write(s string) {
	n, _ := p.w.WriteString(s)
	p.n += int64(n)
}

func (p *pdfWriter) writeBytes(b []byte) {
	n, _ := p.w.Write(b)
	p.n += int64(n)
}

// object writes object number len(offsets)+1 and returns its number.
func (p *pdfWriter) object(body string) int {
	p.offsets = append(p.offsets, p.n)
	id := len(p.offsets)
	p.write(strconv.Itoa(id) + " 0 obj\n" + body + "\nendobj\n")
	return id
}

// stream writes a stream object whose data is already encoded with filter.
func (p *pdfWriter) stream(filter string, data []byte) int {
	p.offsets = append(p.offsets, p.n)
	id := len(p.offsets)
	f := ""
	if filter != "" {
		f = " /Filter /" + filter
	}
	p.write(fmt.Sprintf("%d 0 obj\n<< /Length %d%s >>\nstream\n", id, len(data), f))
	p.writeBytes(data)
	p.write("\nendstream\nendobj\n")
	return id
}

// finish writes the cross-reference table and a trailer naming root, with
// extra trailer entries (an /Encrypt dictionary, an /ID).
func (p *pdfWriter) finish(root int, extra ...string) error {
	xref := p.n
	p.write("xref\n0 " + strconv.Itoa(len(p.offsets)+1) + "\n0000000000 65535 f \n")
	for _, off := range p.offsets {
		p.write(fmt.Sprintf("%010d 00000 n \n", off))
	}
	trailer := fmt.Sprintf("/Size %d /Root %d 0 R", len(p.offsets)+1, root)
	for _, e := range extra {
		trailer += " " + e
	}
	p.write("trailer\n<< " + trailer + " >>\nstartxref\n" + strconv.FormatInt(xref, 10) + "\n%%EOF\n")
	return p.w.Flush()
}

// PDF assembles a PDF from numbered object bodies (object 1 the catalog)
// with a correct cross-reference table and trailer entries extra, for
// inputs the corpus does not have.
func PDF(objects []string, extra string) []byte {
	var b bytes.Buffer
	p := newPDFWriter(&b)
	for _, o := range objects {
		p.object(o)
	}
	if extra == "" {
		p.finish(1)
	} else {
		p.finish(1, extra)
	}
	return b.Bytes()
}

// deflate returns the zlib stream of prefix, n bytes made by repeating
// unit (zeros when unit is empty), then suffix. Once the window holds only
// repeats, each further MiB compresses to the same bytes after a sync
// flush, so those bytes are repeated rather than recomputed: a GiB takes
// a fraction of a second instead of many seconds.
func deflate(prefix string, n int64, unit []byte, suffix string) []byte {
	chunk := 1 << 20
	if len(unit) > 0 {
		chunk -= chunk % len(unit) // whole units, so blocks join seamlessly
	}
	block := make([]byte, chunk)
	if len(unit) > 0 {
		for i := range block {
			block[i] = unit[i%len(unit)]
		}
	}
	var out bytes.Buffer
	out.Write([]byte{0x78, 0xda}) // zlib header: deflate, 32 KiB window, best compression
	fw, _ := flate.NewWriter(&out, flate.BestCompression)
	sum := adler32.New()
	write := func(b []byte) {
		fw.Write(b)
		sum.Write(b)
	}
	write([]byte(prefix))
	var prev []byte
	repeat := 0
	for n > 0 {
		k := min(n, int64(chunk))
		if k == int64(chunk) && prev != nil && repeat >= 2 {
			out.Write(prev)
			sum.Write(block)
			n -= k
			continue
		}
		start := out.Len()
		write(block[:k])
		fw.Flush()
		got := bytes.Clone(out.Bytes()[start:])
		if bytes.Equal(got, prev) {
			repeat++
		} else {
			prev, repeat = got, 1
		}
		n -= k
	}
	write([]byte(suffix))
	fw.Close()
	var tail [4]byte
	binary.BigEndian.PutUint32(tail[:], sum.Sum32())
	out.Write(tail[:])
	return out.Bytes()
}

// FlateBomb writes a one-page PDF whose content stream is a line of text
// followed by n bytes of zeros (1 GiB compresses to about 1 MB).
func FlateBomb(w io.Writer, n int64) error {
	data := deflate("BT /F1 12 Tf 72 700 Td (A page whose content stream inflates without end.) Tj ET\n", n, nil, "")
	p := newPDFWriter(w)
	p.object("<< /Type /Catalog /Pages 2 0 R >>")
	p.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	p.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 4 0 R >> >> /Contents 5 0 R >>")
	p.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	p.stream("FlateDecode", data)
	return p.finish(1)
}

// SharedStream writes a PDF of pages pages that all draw one content stream
// of about size bytes: one line of text, then vector drawing operators.
func SharedStream(w io.Writer, pages int, size int64) error {
	text := "BT /F1 11 Tf 72 720 Td (Every page of this file draws the same shared content stream.) Tj ET\n"
	data := deflate(text, size-int64(len(text)), []byte("1 0 0 1 0.5 0 cm 0 0 m 10 10 l S\n"), "")
	p := newPDFWriter(w)
	// 1 catalog, 2 pages, 3 font, 4 content, 5.. pages
	p.object("<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]byte, 0, pages*10)
	for i := range pages {
		kids = append(kids, strconv.Itoa(5+i)...)
		kids = append(kids, " 0 R "...)
	}
	p.object("<< /Type /Pages /Kids [" + string(kids) + "] /Count " + strconv.Itoa(pages) + " /Resources << /Font << /F1 3 0 R >> >> >>")
	p.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	p.stream("FlateDecode", data)
	for range pages {
		p.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R >>")
	}
	return p.finish(1)
}

// ObjStmBomb writes a one-page PDF whose page resources live in an object
// stream, after n bytes of zeros: resolving them inflates the whole bomb,
// inside the PDF library, every time.
func ObjStmBomb(w io.Writer, n int64) error {
	p := newPDFWriter(w)
	p.object("<< /Type /Catalog /Pages 2 0 R >>")
	p.object("<< /Type /Pages /Kids [3 0 R] /Count 1 >>")
	p.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources 7 0 R /Contents 5 0 R >>")
	p.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	p.stream("", []byte("BT /F1 12 Tf 72 700 Td (A page whose resources sit behind a gigabyte of zeros.) Tj ET"))
	header := fmt.Sprintf("7 %d ", n)
	data := deflate(header, n, nil, "<< /Font << /F1 4 0 R >> >>")
	p.offsets = append(p.offsets, p.n) // object 6
	p.write(fmt.Sprintf("6 0 obj\n<< /Type /ObjStm /N 1 /First %d /Length %d /Filter /FlateDecode >>\nstream\n", len(header), len(data)))
	p.writeBytes(data)
	p.write("\nendstream\nendobj\n")
	// A cross-reference stream: only those can point into object streams.
	var rows bytes.Buffer
	row := func(typ byte, a uint32, b uint16) {
		rows.WriteByte(typ)
		binary.Write(&rows, binary.BigEndian, a)
		binary.Write(&rows, binary.BigEndian, b)
	}
	row(0, 0, 65535)
	for _, off := range p.offsets {
		row(1, uint32(off), 0)
	}
	row(2, 6, 0) // object 7: the first in object stream 6
	xref := p.n
	row(1, uint32(xref), 0) // object 8: this stream
	p.write(fmt.Sprintf("8 0 obj\n<< /Type /XRef /Size 9 /W [1 4 2] /Root 1 0 R /Length %d >>\nstream\n", rows.Len()))
	p.writeBytes(rows.Bytes())
	p.write(fmt.Sprintf("\nendstream\nendobj\nstartxref\n%d\n%%%%EOF\n", xref))
	return p.w.Flush()
}

// ManyStreams writes pages pages that each draw their own content stream:
// one line of text, then ops drawing operators. Nothing is shared, so the
// file is slow to interpret on purpose (cancellation tests).
func ManyStreams(w io.Writer, pages, ops int) error {
	unit := []byte("0 0 m 10 10 l S\n")
	data := deflate("BT /F1 12 Tf 72 700 Td (Page text.) Tj ET\n", int64(ops*len(unit)), unit, "")
	p := newPDFWriter(w)
	p.object("<< /Type /Catalog /Pages 2 0 R >>")
	kids := make([]byte, 0, pages*12)
	for i := range pages {
		kids = append(kids, strconv.Itoa(4+2*i)...)
		kids = append(kids, " 0 R "...)
	}
	p.object("<< /Type /Pages /Kids [" + string(kids) + "] /Count " + strconv.Itoa(pages) + " >>")
	p.object("<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>")
	for i := range pages {
		p.object("<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Resources << /Font << /F1 3 0 R >> >> /Contents " + strconv.Itoa(5+2*i) + " 0 R >>")
		p.stream("FlateDecode", data)
	}
	return p.finish(1)
}
