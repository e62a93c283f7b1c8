package pdf

import (
	"bytes"
	"crypto/aes"
	"crypto/cipher"
	"crypto/sha256"
	"crypto/sha512"
	"errors"
	"fmt"
	"hash"
	"io"
	"regexp"
	"strconv"

	"github.com/ledongthuc/pdf"
)

// The PDF library decrypts RC4 and AES-128 (V ≤ 4) but refuses AES-256
// (V5, R5/R6, crypt filter AESV3), which many current PDFs use with an empty
// user password (they may be opened by anyone; the owner password only
// guards editing). decryptAES256 opens such files: it derives the file key
// from the empty password (ISO 32000-2 §7.6.4.3.3–4, Algorithms 2.A and
// 2.B), decrypts every string and stream of a copy of the file in place,
// keeping every byte offset, and renames the trailer's /Encrypt so the
// library reads the copy as an unencrypted file.
//
// Invariants: offsets never move (a decrypted string or stream is shorter
// than its ciphertext and is padded with spaces), the cross-reference
// streams and the encryption dictionary, which are never encrypted, are
// left alone, and a file that needs a non-empty user password is refused
// with errPDFPassword.

var errPDFPassword = errors.New("PDF needs a password to open")

// maxDecryptCopy bounds the in-memory decrypted copy.
const maxDecryptCopy = 256 << 20

var encryptKey = regexp.MustCompile(`/Encrypt([\s/<>\[\]()%])`)

// decryptAES256 returns a decrypted copy of an AES-256 file, or an error
// when the file is not one, needs a password or is malformed.
func decryptAES256(r io.ReaderAt, size int64) (_ []byte, err error) {
	defer func() { // the library panics on malformed objects
		if rec := recover(); rec != nil {
			err = fmt.Errorf("malformed encrypted PDF: %v", rec)
		}
	}()
	if size > maxDecryptCopy {
		return nil, fmt.Errorf("encrypted PDF larger than %d MiB", maxDecryptCopy>>20)
	}
	data := make([]byte, size)
	if _, err := r.ReadAt(data, 0); err != nil && !errors.Is(err, io.EOF) {
		return nil, err
	}
	// "/NoCrypt" has the length of "/Encrypt": nothing moves.
	data = encryptKey.ReplaceAll(data, []byte("/NoCrypt$1"))
	rd, err := pdf.NewReader(bytes.NewReader(data), size)
	if err != nil {
		return nil, err
	}
	if err := checkXrefNesting(rd); err != nil {
		return nil, err
	}
	enc := rd.Trailer().Key("NoCrypt")
	if enc.Key("Filter").Name() != "Standard" || enc.Key("V").Int64() != 5 {
		return nil, fmt.Errorf("unsupported PDF encryption %v", enc)
	}
	key, err := aes256FileKey(enc)
	if err != nil {
		return nil, err
	}
	strings, streams := true, true
	for _, f := range []struct {
		name string
		on   *bool
	}{{"StrF", &strings}, {"StmF", &streams}} {
		switch cf := enc.Key(f.name).Name(); cf {
		case "Identity":
			*f.on = false
		default:
			if m := enc.Key("CF").Key(cf).Key("CFM").Name(); m != "AESV3" {
				return nil, fmt.Errorf("unsupported crypt filter %s=%s (%s)", f.name, cf, m)
			}
		}
	}
	encMeta := enc.Key("EncryptMetadata").Kind() != pdf.Bool || enc.Key("EncryptMetadata").Bool()
	block, err := aes.NewCipher(key)
	if err != nil {
		return nil, err
	}
	encRef := ""
	if m := regexp.MustCompile(`/NoCrypt (\d+ \d+) R`).FindStringSubmatch(rd.Trailer().String()); m != nil {
		encRef = m[1]
	}
	s := &cryptScanner{data: data, block: block, strings: strings, streams: streams, encMeta: encMeta, encRef: encRef}
	s.run()
	return data, nil
}

// aes256FileKey derives the file key from the empty user password.
func aes256FileKey(enc pdf.Value) ([]byte, error) {
	R := enc.Key("R").Int64()
	U, UE := []byte(enc.Key("U").RawString()), []byte(enc.Key("UE").RawString())
	if R != 5 && R != 6 || len(U) < 48 || len(UE) < 32 {
		return nil, fmt.Errorf("malformed AES-256 encryption (R=%d, U %d bytes, UE %d bytes)", R, len(U), len(UE))
	}
	var pw []byte // the empty user password
	if !bytes.Equal(pdfHash(R, pw, U[32:40], nil), U[:32]) {
		return nil, errPDFPassword
	}
	ik := pdfHash(R, pw, U[40:48], nil)
	block, err := aes.NewCipher(ik)
	if err != nil {
		return nil, err
	}
	key := make([]byte, 32)
	cipher.NewCBCDecrypter(block, make([]byte, 16)).CryptBlocks(key, UE[:32])
	return key, nil
}

// pdfHash is Algorithm 2.B (R6) or plain SHA-256 (R5) of password, salt
// and, for owner checks, the user key.
func pdfHash(R int64, pw, salt, udata []byte) []byte {
	h := sha256.New()
	h.Write(pw)
	h.Write(salt)
	h.Write(udata)
	k := h.Sum(nil)
	if R == 5 {
		return k
	}
	for i := 1; ; i++ {
		k1 := bytes.Repeat(append(append(append([]byte{}, pw...), k...), udata...), 64)
		block, _ := aes.NewCipher(k[:16])
		e := make([]byte, len(k1))
		cipher.NewCBCEncrypter(block, k[16:32]).CryptBlocks(e, k1)
		sum := 0
		for _, b := range e[:16] {
			sum += int(b)
		}
		var hf hash.Hash
		switch sum % 3 {
		case 0:
			hf = sha256.New()
		case 1:
			hf = sha512.New384()
		default:
			hf = sha512.New()
		}
		hf.Write(e)
		k = hf.Sum(nil)
		if i >= 64 && int(e[len(e)-1]) <= i-32 {
			break
		}
	}
	return k[:32]
}

// cryptScanner walks the top-level objects of a file and decrypts, in
// place, the strings and stream data of each.
type cryptScanner struct {
	data             []byte
	block            cipher.Block
	strings, streams bool
	encMeta          bool
	encRef           string
	pos              int
}

var objHeader = regexp.MustCompile(`(\d+)\s+(\d+)\s+obj\b`)

func (s *cryptScanner) run() {
	for s.pos < len(s.data) {
		loc := objHeader.FindSubmatchIndex(s.data[s.pos:])
		if loc == nil {
			return
		}
		ref := string(s.data[s.pos+loc[2]:s.pos+loc[3]]) + " " + string(s.data[s.pos+loc[4]:s.pos+loc[5]])
		s.pos += loc[1]
		skip := ref == s.encRef
		var strs [][2]int
		v := s.value(0, &strs)
		dict, _ := v.(map[string]any)
		typ, _ := dict["Type"].(pdfName)
		s.space()
		isStream := bytes.HasPrefix(s.data[s.pos:], []byte("stream"))
		if !skip && s.strings && !(isStream && typ == "XRef") {
			for _, sp := range strs {
				s.decryptString(sp[0], sp[1])
			}
		}
		if !isStream {
			continue
		}
		s.pos += len("stream")
		if s.pos < len(s.data) && s.data[s.pos] == '\r' {
			s.pos++
		}
		if s.pos < len(s.data) && s.data[s.pos] == '\n' {
			s.pos++
		}
		n := s.length(dict["Length"])
		if n < 0 || s.pos+n > len(s.data) {
			end := bytes.Index(s.data[s.pos:], []byte("endstream"))
			if end < 0 {
				return
			}
			n = end
		}
		if !skip && s.streams && typ != "XRef" && !(typ == "Metadata" && !s.encMeta) {
			s.decryptRegion(s.pos, s.pos+n)
		}
		s.pos += n
	}
}

type pdfName string

// pdfRef is an indirect reference "N G R" met while scanning.
type pdfRef string

// length resolves a stream's /Length, direct or indirect; -1 if unknown.
func (s *cryptScanner) length(v any) int {
	switch x := v.(type) {
	case int64:
		return int(x)
	case pdfRef:
		m := regexp.MustCompile(`(?:^|[\r\n\s])` + regexp.QuoteMeta(string(x)) + `\s+obj\s+(\d+)`).FindSubmatch(s.data)
		if m != nil {
			n, _ := strconv.Atoi(string(m[1]))
			return n
		}
	}
	return -1
}

func (s *cryptScanner) space() {
	for s.pos < len(s.data) {
		switch c := s.data[s.pos]; {
		case c == '%':
			for s.pos < len(s.data) && s.data[s.pos] != '\n' && s.data[s.pos] != '\r' {
				s.pos++
			}
		case c == ' ' || c == '\n' || c == '\r' || c == '\t' || c == '\f' || c == 0:
			s.pos++
		default:
			return
		}
	}
}

func isDelim(c byte) bool {
	return bytes.IndexByte([]byte(" \t\r\n\f\x00()<>[]{}/%"), c) >= 0
}

// value reads one object, recording the spans of its strings. Dictionaries
// come back as maps, arrays as slices, names, integers and references
// (inside dictionaries) as such; strings and anything else as nil or a
// keyword.
func (s *cryptScanner) value(depth int, strs *[][2]int) any {
	s.space()
	if s.pos >= len(s.data) || depth > 64 {
		return nil
	}
	switch c := s.data[s.pos]; {
	case c == '<' && s.pos+1 < len(s.data) && s.data[s.pos+1] == '<':
		s.pos += 2
		d := map[string]any{}
		for {
			s.space()
			if s.pos >= len(s.data) {
				return d
			}
			if bytes.HasPrefix(s.data[s.pos:], []byte(">>")) {
				s.pos += 2
				return d
			}
			at := s.pos
			k, ok := s.value(depth+1, strs).(pdfName)
			if !ok {
				if bytes.HasPrefix(s.data[s.pos:], []byte("stream")) || bytes.HasPrefix(s.data[s.pos:], []byte("endobj")) {
					return d
				}
				if s.pos == at {
					s.pos++ // a byte no value starts with: skip it, or the loop never ends
				}
				continue
			}
			d[string(k)] = s.ref(s.value(depth+1, strs))
		}
	case c == '[':
		s.pos++
		var arr []any
		for {
			s.space()
			if s.pos >= len(s.data) {
				return arr
			}
			if s.data[s.pos] == ']' {
				s.pos++
				return arr
			}
			if bytes.HasPrefix(s.data[s.pos:], []byte("endobj")) {
				return arr
			}
			at := s.pos
			arr = append(arr, s.value(depth+1, strs))
			if s.pos == at {
				s.pos++ // a byte no value starts with: skip it, or the loop never ends
			}
		}
	case c == '(':
		start := s.pos
		s.pos++
		for nest := 1; s.pos < len(s.data) && nest > 0; s.pos++ {
			switch s.data[s.pos] {
			case '\\':
				s.pos++
			case '(':
				nest++
			case ')':
				nest--
			}
		}
		*strs = append(*strs, [2]int{start, s.pos})
		return nil
	case c == '<':
		start := s.pos
		end := bytes.IndexByte(s.data[s.pos:], '>')
		if end < 0 {
			s.pos = len(s.data)
			return nil
		}
		s.pos += end + 1
		*strs = append(*strs, [2]int{start, s.pos})
		return nil
	case c == '/':
		start := s.pos + 1
		s.pos++
		for s.pos < len(s.data) && !isDelim(s.data[s.pos]) {
			s.pos++
		}
		return pdfName(s.data[start:s.pos])
	case c == ')' || c == '>' || c == ']' || c == '{' || c == '}':
		s.pos++
		return nil
	default:
		start := s.pos
		for s.pos < len(s.data) && !isDelim(s.data[s.pos]) {
			s.pos++
		}
		tok := string(s.data[start:s.pos])
		if n, err := strconv.ParseInt(tok, 10, 64); err == nil {
			return n
		}
		if tok == "stream" || tok == "endobj" {
			s.pos = start // let the caller see it
			return nil
		}
		return tok
	}
}

// ref turns "N G R" following an integer into a reference.
func (s *cryptScanner) ref(v any) any {
	n, ok := v.(int64)
	if !ok {
		return v
	}
	save := s.pos
	s.space()
	start := s.pos
	for s.pos < len(s.data) && s.data[s.pos] >= '0' && s.data[s.pos] <= '9' {
		s.pos++
	}
	gen := string(s.data[start:s.pos])
	s.space()
	if gen != "" && s.pos < len(s.data) && s.data[s.pos] == 'R' && (s.pos+1 >= len(s.data) || isDelim(s.data[s.pos+1])) {
		s.pos++
		return pdfRef(strconv.FormatInt(n, 10) + " " + gen)
	}
	s.pos = save
	return n
}

// decryptRegion decrypts stream data in [from, to): 16 bytes of IV, then
// AES-CBC with PKCS#5 padding; the plaintext is followed by spaces.
func (s *cryptScanner) decryptRegion(from, to int) {
	plain, ok := s.decrypt(s.data[from:to])
	if !ok {
		return
	}
	n := copy(s.data[from:to], plain)
	for i := from + n; i < to; i++ {
		s.data[i] = ' '
	}
}

func (s *cryptScanner) decrypt(ct []byte) ([]byte, bool) {
	if len(ct) < 32 || len(ct)%16 != 0 {
		return nil, false
	}
	out := make([]byte, len(ct)-16)
	cipher.NewCBCDecrypter(s.block, ct[:16]).CryptBlocks(out, ct[16:])
	if p := int(out[len(out)-1]); p >= 1 && p <= 16 && p <= len(out) {
		out = out[:len(out)-p]
	}
	return out, true
}

// decryptString replaces the string token in [from, to) by its plaintext,
// written as a hex or literal string that fits, padded with spaces.
func (s *cryptScanner) decryptString(from, to int) {
	raw := unescapePDFString(s.data[from:to])
	plain, ok := s.decrypt(raw)
	if !ok {
		return
	}
	var tok []byte
	if 2*len(plain)+2 <= to-from {
		tok = fmt.Appendf(nil, "<%x>", plain)
	} else {
		tok = append(tok, '(')
		for _, c := range plain {
			switch c {
			case '(', ')', '\\':
				tok = append(tok, '\\', c)
			case '\r':
				tok = append(tok, '\\', 'r')
			default:
				tok = append(tok, c)
			}
		}
		tok = append(tok, ')')
		if len(tok) > to-from {
			return // cannot happen for real ciphertext; leave it
		}
	}
	n := copy(s.data[from:to], tok)
	for i := from + n; i < to; i++ {
		s.data[i] = ' '
	}
}

// unescapePDFString returns the bytes of a literal (…) or hex <…> string.
func unescapePDFString(tok []byte) []byte {
	if len(tok) < 2 {
		return nil
	}
	if tok[0] == '<' {
		var out []byte
		hi, have := byte(0), false
		for _, c := range tok[1 : len(tok)-1] {
			var v byte
			switch {
			case c >= '0' && c <= '9':
				v = c - '0'
			case c >= 'a' && c <= 'f':
				v = c - 'a' + 10
			case c >= 'A' && c <= 'F':
				v = c - 'A' + 10
			default:
				continue
			}
			if have {
				out = append(out, hi<<4|v)
			} else {
				hi = v
			}
			have = !have
		}
		if have {
			out = append(out, hi<<4)
		}
		return out
	}
	body := tok[1 : len(tok)-1]
	var out []byte
	for i := 0; i < len(body); i++ {
		c := body[i]
		if c == '\r' {
			out = append(out, '\n')
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
			continue
		}
		if c != '\\' || i+1 >= len(body) {
			out = append(out, c)
			continue
		}
		i++
		switch e := body[i]; e {
		case 'n':
			out = append(out, '\n')
		case 'r':
			out = append(out, '\r')
		case 't':
			out = append(out, '\t')
		case 'b':
			out = append(out, '\b')
		case 'f':
			out = append(out, '\f')
		case '\r':
			if i+1 < len(body) && body[i+1] == '\n' {
				i++
			}
		case '\n':
		default:
			if e >= '0' && e <= '7' {
				v := 0
				j := 0
				for ; j < 3 && i+j < len(body) && body[i+j] >= '0' && body[i+j] <= '7'; j++ {
					v = v*8 + int(body[i+j]-'0')
				}
				i += j - 1
				out = append(out, byte(v))
			} else {
				out = append(out, e)
			}
		}
	}
	return out
}
