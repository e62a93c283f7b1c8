package pdf

import "strconv"

// csOpKind says what an operand is.
type csOpKind uint8

const (
	csNum csOpKind = iota + 1
	csName
	csStr
	csArr  // elements are in the lexer's arr[from:to]
	csDict // contents skipped; only its presence matters
	csBool
	csNull
)

// csOperand is one operand of a content-stream operator.
type csOperand struct {
	kind     csOpKind
	num      float64
	b        []byte // name (without '/') or string bytes
	from, to int    // array elements, for csArr
}

// csLexer tokenizes content streams and CMaps in place. The library's own
// lexer boxes every token in an interface and reads byte by byte through a
// reader; this one walks a byte slice and allocates only for strings with
// escapes, which is most of why our page interpreter outruns Content().
type csLexer struct {
	buf     []byte
	pos     int
	stack   []csOperand // operands of the operator being read
	arr     []csOperand // array elements, reset with the stack
	scratch []byte      // decoded strings, reset with the stack
}

func csIsSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0
}

func csIsDelim(c byte) bool {
	switch c {
	case '(', ')', '<', '>', '[', ']', '{', '}', '/', '%':
		return true
	}
	return false
}

// reset forgets the operands of the previous operator.
func (l *csLexer) reset() {
	l.stack = l.stack[:0]
	l.arr = l.arr[:0]
	l.scratch = l.scratch[:0]
}

func (l *csLexer) skipSpace() {
	for l.pos < len(l.buf) {
		c := l.buf[l.pos]
		if csIsSpace(c) {
			l.pos++
			continue
		}
		if c == '%' {
			for l.pos < len(l.buf) && l.buf[l.pos] != '\n' && l.buf[l.pos] != '\r' {
				l.pos++
			}
			continue
		}
		return
	}
}

// next reads operands onto l.stack until it meets an operator, which it
// returns; ok is false at the end of the stream.
func (l *csLexer) next() (op []byte, ok bool) {
	for {
		l.skipSpace()
		if l.pos >= len(l.buf) {
			return nil, false
		}
		c := l.buf[l.pos]
		switch {
		case c == '[':
			l.pos++
			from := len(l.arr)
			l.readArray()
			l.stack = append(l.stack, csOperand{kind: csArr, from: from, to: len(l.arr)})
		case c == ']' || c == ')' || c == '>' || c == '{' || c == '}':
			l.pos++ // stray delimiter: ignore
		default:
			if v, isOperand := l.readOperand(); isOperand {
				l.stack = append(l.stack, v)
				continue
			}
			word := l.readWord()
			if word == nil {
				continue
			}
			switch string(word) {
			case "true", "false":
				l.stack = append(l.stack, csOperand{kind: csBool})
				continue
			case "null":
				l.stack = append(l.stack, csOperand{kind: csNull})
				continue
			}
			return word, true
		}
	}
}

// readOperand reads a number, name, string or dictionary at l.pos.
func (l *csLexer) readOperand() (csOperand, bool) {
	c := l.buf[l.pos]
	switch {
	case c == '/':
		l.pos++
		start := l.pos
		hasEsc := false
		for l.pos < len(l.buf) && !csIsSpace(l.buf[l.pos]) && !csIsDelim(l.buf[l.pos]) {
			if l.buf[l.pos] == '#' {
				hasEsc = true
			}
			l.pos++
		}
		name := l.buf[start:l.pos]
		if hasEsc {
			name = csUnescapeName(name)
		}
		return csOperand{kind: csName, b: name}, true
	case c == '(':
		return csOperand{kind: csStr, b: l.readLiteral()}, true
	case c == '<':
		if l.pos+1 < len(l.buf) && l.buf[l.pos+1] == '<' {
			l.skipDict()
			return csOperand{kind: csDict}, true
		}
		return csOperand{kind: csStr, b: l.readHex()}, true
	case c == '+' || c == '-' || c == '.' || (c >= '0' && c <= '9'):
		start := l.pos
		l.pos++
		for l.pos < len(l.buf) {
			d := l.buf[l.pos]
			if (d >= '0' && d <= '9') || d == '.' || d == '-' || d == '+' || d == 'e' || d == 'E' {
				l.pos++
				continue
			}
			break
		}
		return csOperand{kind: csNum, num: csNumber(l.buf[start:l.pos])}, true
	}
	return csOperand{}, false
}

// csNumber parses the common forms quickly and falls back to strconv.
func csNumber(b []byte) float64 {
	neg := false
	i := 0
	if i < len(b) && (b[i] == '-' || b[i] == '+') {
		neg = b[i] == '-'
		i++
	}
	var v float64
	div := 0.0
	for ; i < len(b); i++ {
		c := b[i]
		switch {
		case c >= '0' && c <= '9':
			v = v*10 + float64(c-'0')
			if div > 0 {
				div *= 10
			}
		case c == '.' && div == 0:
			div = 1
		default:
			f, err := strconv.ParseFloat(string(b), 64)
			if err != nil {
				return 0
			}
			return f
		}
	}
	if div > 0 {
		v /= div
	}
	if neg {
		v = -v
	}
	return v
}

func csUnescapeName(b []byte) []byte {
	out := make([]byte, 0, len(b))
	for i := 0; i < len(b); i++ {
		if b[i] == '#' && i+2 < len(b) {
			hi, lo := csUnhex(b[i+1]), csUnhex(b[i+2])
			if hi >= 0 && lo >= 0 {
				out = append(out, byte(hi<<4|lo))
				i += 2
				continue
			}
		}
		out = append(out, b[i])
	}
	return out
}

func csUnhex(c byte) int {
	switch {
	case c >= '0' && c <= '9':
		return int(c - '0')
	case c >= 'a' && c <= 'f':
		return int(c-'a') + 10
	case c >= 'A' && c <= 'F':
		return int(c-'A') + 10
	}
	return -1
}

func (l *csLexer) readArray() {
	for {
		l.skipSpace()
		if l.pos >= len(l.buf) {
			return
		}
		c := l.buf[l.pos]
		if c == ']' {
			l.pos++
			return
		}
		if c == '[' { // nested arrays never carry text; flatten them away
			l.pos++
			l.readArray()
			continue
		}
		if v, ok := l.readOperand(); ok {
			l.arr = append(l.arr, v)
			continue
		}
		l.readWord() // a bare word inside an array (true/false/null or garbage)
	}
}

// readWord reads a bare word (an operator, true, false, null) at l.pos. At
// a lone delimiter the lexer does not handle it skips the byte and returns
// nil.
func (l *csLexer) readWord() []byte {
	start := l.pos
	for l.pos < len(l.buf) && !csIsSpace(l.buf[l.pos]) && !csIsDelim(l.buf[l.pos]) {
		l.pos++
	}
	if l.pos == start {
		l.pos++
		return nil
	}
	return l.buf[start:l.pos]
}

func (l *csLexer) skipDict() {
	depth := 0
	for l.pos < len(l.buf) {
		c := l.buf[l.pos]
		switch {
		case c == '<' && l.pos+1 < len(l.buf) && l.buf[l.pos+1] == '<':
			depth++
			l.pos += 2
		case c == '>' && l.pos+1 < len(l.buf) && l.buf[l.pos+1] == '>':
			depth--
			l.pos += 2
			if depth == 0 {
				return
			}
		case c == '(':
			l.readLiteral()
		case c == '<':
			l.readHex()
		default:
			l.pos++
		}
	}
}

// readLiteral reads a (string) at l.pos, returning a slice of the buffer when
// it has no escapes.
func (l *csLexer) readLiteral() []byte {
	l.pos++ // '('
	start := l.pos
	depth := 1
	for i := l.pos; i < len(l.buf); i++ {
		switch l.buf[i] {
		case '\\':
			return l.readLiteralEscaped(start)
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.pos = i + 1
				return l.buf[start:i]
			}
		}
	}
	l.pos = len(l.buf)
	return l.buf[start:]
}

func (l *csLexer) readLiteralEscaped(start int) []byte {
	from := len(l.scratch)
	depth := 1
	i := start
	for ; i < len(l.buf); i++ {
		c := l.buf[i]
		switch c {
		case '(':
			depth++
		case ')':
			depth--
			if depth == 0 {
				l.pos = i + 1
				return l.scratch[from:len(l.scratch):len(l.scratch)]
			}
		case '\\':
			i++
			if i >= len(l.buf) {
				break
			}
			c = l.buf[i]
			switch c {
			case 'n':
				c = '\n'
			case 'r':
				c = '\r'
			case 't':
				c = '\t'
			case 'b':
				c = '\b'
			case 'f':
				c = '\f'
			case '\r':
				if i+1 < len(l.buf) && l.buf[i+1] == '\n' {
					i++
				}
				continue
			case '\n':
				continue
			default:
				if c >= '0' && c <= '7' {
					v := int(c - '0')
					for k := 0; k < 2 && i+1 < len(l.buf) && l.buf[i+1] >= '0' && l.buf[i+1] <= '7'; k++ {
						i++
						v = v*8 + int(l.buf[i]-'0')
					}
					c = byte(v)
				}
			}
		}
		l.scratch = append(l.scratch, c)
	}
	l.pos = len(l.buf)
	return l.scratch[from:len(l.scratch):len(l.scratch)]
}

func (l *csLexer) readHex() []byte {
	l.pos++ // '<'
	from := len(l.scratch)
	hi := -1
	for l.pos < len(l.buf) {
		c := l.buf[l.pos]
		l.pos++
		if c == '>' {
			break
		}
		v := csUnhex(c)
		if v < 0 {
			continue
		}
		if hi < 0 {
			hi = v
		} else {
			l.scratch = append(l.scratch, byte(hi<<4|v))
			hi = -1
		}
	}
	if hi >= 0 {
		l.scratch = append(l.scratch, byte(hi<<4))
	}
	return l.scratch[from:len(l.scratch):len(l.scratch)]
}

// skipInlineImage moves past the data of an inline image after its ID
// operator: the data ends at whitespace, "EI", whitespace.
func (l *csLexer) skipInlineImage() {
	if l.pos < len(l.buf) && csIsSpace(l.buf[l.pos]) {
		l.pos++
	}
	for i := l.pos; i+1 < len(l.buf); i++ {
		if l.buf[i] == 'E' && l.buf[i+1] == 'I' && i > 0 && csIsSpace(l.buf[i-1]) &&
			(i+2 == len(l.buf) || csIsSpace(l.buf[i+2]) || csIsDelim(l.buf[i+2])) {
			l.pos = i + 2
			return
		}
	}
	l.pos = len(l.buf)
}
