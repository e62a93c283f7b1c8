package ingest

import (
	"testing"
)

// FuzzTesseractTSV: OCR output is read from a child process. Invariant: any
// bytes yield words or an error, never a panic, and every word lies inside
// the page (a non-empty box of fractions in [0, 1]).
func FuzzTesseractTSV(f *testing.F) {
	f.Add([]byte("level\tpage_num\tblock_num\tpar_num\tline_num\tword_num\tleft\ttop\twidth\theight\tconf\ttext\n" +
		"1\t1\t0\t0\t0\t0\t0\t0\t1000\t2000\t-1\t\n5\t1\t1\t1\t1\t1\t100\t200\t100\t40\t95.1\tHello\n"))
	f.Add([]byte("1\t1\t0\t0\t0\t0\t0\t0\t0\t0\t-1\t\n5\t1\t1\t1\t1\t1\tNaN\t200\t1e308\t40\t95\tx\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		words, err := parseTesseractTSV(b)
		if err != nil {
			return
		}
		for _, w := range words {
			if w.Text == "" || !(w.X0 >= 0 && w.X0 < w.X1 && w.X1 <= 1 && w.Y0 >= 0 && w.Y0 < w.Y1 && w.Y1 <= 1) {
				t.Fatalf("bad word %+v", w)
			}
		}
	})
}

// FuzzDecodePNM: pixels come from a child process. Invariant: no panic, and
// a decoded image has the size its header declares.
func FuzzDecodePNM(f *testing.F) {
	f.Add([]byte("P5\n2 2\n255\n\x00\x01\x02\x03"))
	f.Add([]byte("P6\n1 1\n255\n\x00\x00\x00"))
	f.Add([]byte("P6\n99999999 99999999\n255\n"))
	f.Fuzz(func(t *testing.T, b []byte) {
		img, err := decodePNM(b)
		if err != nil {
			return
		}
		if img.Bounds().Dx() <= 0 || img.Bounds().Dy() <= 0 {
			t.Fatalf("empty image %v", img.Bounds())
		}
	})
}
