package pdf

import (
	"bytes"
	"compress/zlib"
	"context"
	"errors"
	"os"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
	"github.com/citebook/citebook/internal/hostile"
)

// The hostile files of issue 10, built once per test binary.
var (
	flateBombPDF = sync.OnceValue(func() []byte {
		var b bytes.Buffer
		hostile.FlateBomb(&b, 1<<30)
		return b.Bytes()
	})
	sharedStreamPDF = sync.OnceValue(func() []byte {
		var b bytes.Buffer
		hostile.SharedStream(&b, 20000, 16<<20)
		return b.Bytes()
	})
)

// TestParsePDFFlateBomb: a content stream inflating to 1 GiB is refused with
// a clear error once it passes the per-stream budget, instead of being
// inflated whole.
func TestParsePDFFlateBomb(t *testing.T) {
	data := flateBombPDF()
	t.Logf("bomb: %d bytes", len(data))
	_, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
	if citebook.ErrorCode(err) != citebook.ETOOLARGE || !strings.Contains(citebook.ErrorMessage(err), "MiB") {
		t.Fatalf("err %v (code %q), want too_large naming the limit", err, citebook.ErrorCode(err))
	}
	// A smaller per-document budget trips first on a stream under the
	// per-stream one.
	lim := parsing.Limits{MaxStreamBytes: 2 << 30, MaxDecodedBytes: 8 << 20}
	_, err = parseWithin(context.Background(), lim, bytes.NewReader(data), int64(len(data)))
	if citebook.ErrorCode(err) != citebook.ETOOLARGE || !strings.Contains(citebook.ErrorMessage(err), "document") {
		t.Fatalf("err %v, want too_large for the document budget", err)
	}
}

// TestParsePDFSharedStream: 20,000 pages drawing one 16 MiB content stream
// finish well within the deadline, because the stream is decoded and
// interpreted once, and every page keeps its one line of text.
func TestParsePDFSharedStream(t *testing.T) {
	if testing.Short() {
		t.Skip("builds a 20,000-page PDF")
	}
	data := sharedStreamPDF()
	t.Logf("shared stream: %d bytes", len(data))
	lim := parsing.Limits{Timeout: 90 * time.Second}
	doc, err := parseWithin(context.Background(), lim, bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	if doc.Pages != 20000 {
		t.Fatalf("pages %d, want 20000", doc.Pages)
	}
	blocks := 0
	for _, s := range doc.Sections {
		blocks += len(s.Blocks)
	}
	if blocks != 20000 {
		t.Errorf("%d blocks, want one per page", blocks)
	}
}

// manyStreamsPDF has pages pages, each with its own Flate content stream
// of ops drawing operators after one line of text: slow to interpret on
// purpose, yet small.
func manyStreamsPDF(pages, ops int) []byte {
	body := "BT /F1 12 Tf 72 700 Td (Page text.) Tj ET\n" + strings.Repeat("0 0 m 10 10 l S\n", ops)
	var z bytes.Buffer
	zw := zlib.NewWriter(&z)
	zw.Write([]byte(body))
	zw.Close()
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	for i := range pages {
		kids = append(kids, strconv.Itoa(4+2*i)+" 0 R")
		objs = append(objs,
			"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents "+strconv.Itoa(5+2*i)+" 0 R >>",
			"<< /Length "+strconv.Itoa(z.Len())+" /Filter /FlateDecode >>\nstream\n"+z.String()+"\nendstream")
	}
	objs[1] = "<< /Type /Pages /Kids [" + strings.Join(kids, " ") + "] /Count " + strconv.Itoa(pages) + " >>"
	return hostile.PDF(objs, "")
}

// TestParsePDFBudgets: the operator and text budgets stop a parse with a
// clear error, and the deadline stops it as well.
func TestParsePDFBudgets(t *testing.T) {
	data := manyStreamsPDF(20, 2000)
	cases := []struct {
		name string
		lim  parsing.Limits
		msg  string
	}{
		{"operators", parsing.Limits{MaxOperators: 10000}, "operators"},
		{"text", parsing.Limits{MaxTextBytes: 100}, "text"},
		{"stream", parsing.Limits{MaxStreamBytes: 1000}, "stream"},
		{"deadline", parsing.Limits{Timeout: time.Nanosecond}, "did not finish"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			_, err := parseWithin(context.Background(), c.lim, bytes.NewReader(data), int64(len(data)))
			if citebook.ErrorCode(err) != citebook.ETOOLARGE || !strings.Contains(citebook.ErrorMessage(err), c.msg) {
				t.Fatalf("err %v (code %q), want too_large mentioning %q", err, citebook.ErrorCode(err), c.msg)
			}
		})
	}
	if _, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data))); err != nil {
		t.Fatalf("default limits: %v", err)
	}
}

// TestParsePDFCancelPrompt: cancelling a running parse makes it return
// promptly with the cancellation, not after the work is done — also in the
// middle of one page whose content stream takes seconds to interpret.
func TestParsePDFCancelPrompt(t *testing.T) {
	for _, c := range []struct {
		name       string
		pages, ops int
	}{{"many pages", 400, 60000}, {"one huge page", 1, 8_000_000}} {
		t.Run(c.name, func(t *testing.T) {
			var buf bytes.Buffer
			if err := hostile.ManyStreams(&buf, c.pages, c.ops); err != nil {
				t.Fatal(err)
			}
			data := buf.Bytes()
			lim := parsing.Limits{MaxStreamBytes: 256 << 20, MaxOperators: 1 << 40}
			ctx, cancel := context.WithCancel(context.Background())
			done := make(chan error, 1)
			go func() {
				_, err := parseWithin(ctx, lim, bytes.NewReader(data), int64(len(data)))
				done <- err
			}()
			time.Sleep(300 * time.Millisecond)
			cancel()
			sent := time.Now()
			select {
			case err := <-done:
				if !errors.Is(err, context.Canceled) || citebook.ErrorCode(err) != citebook.EUNAVAILABLE {
					t.Fatalf("err %v, want the cancellation", err)
				}
				t.Logf("returned %v after cancel", time.Since(sent))
			case <-time.After(3 * time.Second):
				t.Fatal("parse still running 3 s after cancel")
			}
		})
	}
}

// TestParsePDFOneLinePerPage: a real PDF with a single line of text on each
// page is text, not "scanned images only", even though every page's only
// line sits at both its top and bottom edge.
func TestParsePDFOneLinePerPage(t *testing.T) {
	objs := []string{"<< /Type /Catalog /Pages 2 0 R >>", "", "<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>"}
	var kids []string
	const pages = 6
	for i := range pages {
		body := "BT /F1 12 Tf 72 700 Td (Line " + strconv.Itoa(i+1) + " is all the text of its page.) Tj ET"
		kids = append(kids, strconv.Itoa(4+2*i)+" 0 R")
		objs = append(objs,
			"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 3 0 R >> >> /Contents "+strconv.Itoa(5+2*i)+" 0 R >>",
			"<< /Length "+strconv.Itoa(len(body))+" >>\nstream\n"+body+"\nendstream")
	}
	objs[1] = "<< /Type /Pages /Kids [" + strings.Join(kids, " ") + "] /Count " + strconv.Itoa(pages) + " >>"
	data := hostile.PDF(objs, "")
	doc, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
	if err != nil {
		t.Fatal(err)
	}
	text := fullText(doc)
	for i := range pages {
		if !strings.Contains(text, "Line "+strconv.Itoa(i+1)+" is all the text") {
			t.Errorf("page %d's line missing from %q", i+1, text)
		}
	}
}

// TestParsePDFEncrypted: files encrypted with an empty user password are
// read — AES-256 (V5 R6, made by qpdf, with and without object streams)
// as well as AES-128 — and a file needing a password is a clear refusal.
func TestParsePDFEncrypted(t *testing.T) {
	for _, c := range []struct{ file, err string }{
		{"aes256.pdf", ""},
		{"aes256-objstm.pdf", ""},
		{"aes256-lin.pdf", ""}, // linearized: /Encrypt only in the first-page trailer
		{"aes128.pdf", ""},
		{"aes256-pw.pdf", "encrypted"},
	} {
		t.Run(c.file, func(t *testing.T) {
			data, err := os.ReadFile("testdata/" + c.file)
			if err != nil {
				t.Fatal(err)
			}
			if serr := Check(context.Background(), bytes.NewReader(data), int64(len(data)), parsing.Limits{}); (serr == nil) != (c.err == "") {
				t.Errorf("sniff: %v", serr)
			}
			doc, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
			if c.err != "" {
				if citebook.ErrorCode(err) != citebook.EINVALID || !strings.Contains(citebook.ErrorMessage(err), c.err) {
					t.Fatalf("err %v, want invalid mentioning %q", err, c.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fullText(doc); !strings.Contains(got, "An encrypted page of plain prose, readable with an empty password.") {
				t.Errorf("text %q", got)
			}
			if doc.Title != "A Book Under Lock" {
				t.Errorf("title %q (a decrypted string)", doc.Title)
			}
			if len(doc.Outline) != 1 || doc.Outline[0].Title != "Chapter One: The Locked Door" || doc.Outline[0].Page != 1 {
				t.Errorf("outline %+v", doc.Outline)
			}
		})
	}
}

// TestParsePDFObjectStreamBomb: an object stream inflating to 1 GiB, which
// the library would inflate on every resolve, is refused before it is
// opened.
func TestParsePDFObjectStreamBomb(t *testing.T) {
	var b bytes.Buffer
	if err := hostile.ObjStmBomb(&b, 1<<30); err != nil {
		t.Fatal(err)
	}
	_, err := parseDefault(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()))
	if citebook.ErrorCode(err) != citebook.ETOOLARGE || !strings.Contains(citebook.ErrorMessage(err), "decompression bomb") {
		t.Fatalf("err %v, want too_large", err)
	}
	// Under the limit the same construction reads: the check passes real
	// object streams.
	b.Reset()
	hostile.ObjStmBomb(&b, 1<<20)
	doc, err := parseDefault(context.Background(), bytes.NewReader(b.Bytes()), int64(b.Len()))
	if err != nil {
		t.Fatal(err)
	}
	if !strings.Contains(fullText(doc), "behind a gigabyte of zeros") {
		t.Errorf("text %q", fullText(doc))
	}
}

// TestParsePDFHugeXref: cross-reference data declaring object numbers in
// the billions (which the library would allocate a table for, killing the
// process) is refused.
func TestParsePDFHugeXref(t *testing.T) {
	text := "BT /F1 12 Tf 72 700 Td (A page.) Tj ET"
	good := hostile.PDF([]string{
		"<< /Type /Catalog /Pages 2 0 R >>",
		"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
		"<< /Type /Page /Parent 2 0 R /Resources << /Font << /F1 5 0 R >> >> /Contents 4 0 R >>",
		"<< /Length " + strconv.Itoa(len(text)) + " >>\nstream\n" + text + "\nendstream",
		"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
	}, "")
	var xs bytes.Buffer
	hostile.ObjStmBomb(&xs, 100) // a file with a cross-reference stream
	for _, c := range []struct {
		name, from, to string
		data           []byte
	}{
		{"subsection", "xref\n0 6\n", "xref\n900000000 6\n", good},
		{"stream size", "/Size 9 ", "/Size 2000000000 ", xs.Bytes()},
		{"stream index", "/Size 9 ", "/Index [800000000 9] /Size 9 ", xs.Bytes()},
	} {
		data := bytes.Replace(c.data, []byte(c.from), []byte(c.to), 1)
		if bytes.Equal(data, c.data) {
			t.Fatalf("%s: nothing replaced", c.name)
		}
		_, err := parseDefault(context.Background(), bytes.NewReader(data), int64(len(data)))
		if citebook.ErrorCode(err) != citebook.ETOOLARGE || !strings.Contains(citebook.ErrorMessage(err), "object number") {
			t.Errorf("%s: err %v, want too_large", c.name, err)
		}
	}
	if _, err := parseDefault(context.Background(), bytes.NewReader(good), int64(len(good))); err != nil {
		t.Fatal(err)
	}
}
