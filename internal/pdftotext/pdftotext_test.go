package pdftotext

import "testing"

func TestBagF1(t *testing.T) {
	cases := []struct {
		got, want string
		f1        float64
	}{
		{"the cat sat", "the cat sat", 1},
		{"the cat", "the cat sat on", 2 * 1 * 0.5 / 1.5},
		{"dog", "cat", 0},
	}
	for _, c := range cases {
		if _, _, f := BagF1(WordBag(c.got), WordBag(c.want)); f < c.f1-1e-9 || f > c.f1+1e-9 {
			t.Errorf("BagF1(%q, %q) = %v, want %v", c.got, c.want, f, c.f1)
		}
	}
	if got := StripRunning([]string{"Head 1\nbody a\n1", "Head 2\nbody b\n2", "Head 3\nbody c\n3"}); got != "body a\nbody b\nbody c\n" {
		t.Errorf("StripRunning = %q", got)
	}
}
