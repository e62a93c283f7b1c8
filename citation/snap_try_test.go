package citation

import "testing"

func TestSnapTry(t *testing.T) {
	text := "R caters for changes of mode almost anywhere it could be considered sensible to do so, (and a few where it might not be). For example with\n> z <- 0:9\nwe could put\n> digits <- as.character(z)\nafter which digits is the character vector c(\"0\", \"1\", \"2\", ..., \"9\"). A further coercion, or change of mode, reconstructs the numerical vector again."
	for _, q := range []string{
		"r caters for changes of mode almost everywhere it could be considered sensible",
		"R caters for changes of mode ... reconstructs the numerical vector again",
		"R caters for changes of mode almost anywhere. A further coercion reconstructs the numerical vector",
		"a further coercion, or a change of mode, reconstructs the numeric vector",
		"digits is the character vector c(0, 1, 2, ..., 8)",
		"R never changes the mode of an object",
	} {
		r, ok := snap(text, q)
		var shown []string
		for _, sp := range r.spans {
			shown = append(shown, text[sp[0]:sp[1]])
		}
		t.Logf("%v %.2f %q -> %q", ok, r.share, q, shown)
	}
}
