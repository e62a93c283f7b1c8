package pdf

// cffEncoding reads the built-in encoding of a bare CFF font program
// (FontFile3 /Type1C) as code → glyph name. TeX's math fonts embedded by
// xdvipdfmx (CMMI, CMSY, MSAM…) often come without a ToUnicode map, and
// their glyph names ("alpha", "arrowright") are the only text they carry.
// sfnt parses CFF only inside OpenType and hides names, hence this reader.
// Malformed input yields nil.
func cffEncoding(prog []byte) (enc map[int]string) {
	defer func() {
		if recover() != nil {
			enc = nil
		}
	}()
	if len(prog) < 4 {
		return nil
	}
	p := int(prog[2])            // header size
	_, p = cffIndex(prog, p)     // Name INDEX
	top, p := cffIndex(prog, p)  // Top DICT INDEX
	strs, _ := cffIndex(prog, p) // String INDEX
	if len(top) == 0 {
		return nil
	}
	dict := cffDict(top[0])
	if _, cid := dict[12<<8|30]; cid { // ROS: CID-keyed, codes are CIDs
		return nil
	}
	csOff, ok := dict[17]
	if !ok {
		return nil
	}
	glyphs, _ := cffIndex(prog, csOff)
	n := len(glyphs)
	name := func(sid int) string {
		switch {
		case sid >= 1 && sid <= 95: // space..asciitilde in ASCII order
			c := sid + 31
			if c == 0x27 {
				return "quoteright"
			}
			if c == 0x60 {
				return "quoteleft"
			}
			return string(rune(c))
		case sid >= 391 && sid-391 < len(strs):
			return string(strs[sid-391])
		}
		return ""
	}
	// charset: glyph → SID
	sids := make([]int, n)
	if off := dict[15]; off > 2 {
		q := off
		format := prog[q]
		q++
		for g := 1; g < n; {
			switch format {
			case 0:
				sids[g] = cffCard16(prog, q)
				q += 2
				g++
			case 1, 2:
				first := cffCard16(prog, q)
				left := int(prog[q+2])
				q += 3
				if format == 2 {
					left = cffCard16(prog, q-1)
					q++
				}
				for k := 0; k <= left && g < n; k++ {
					sids[g] = first + k
					g++
				}
			default:
				return nil
			}
		}
	} else {
		for g := 1; g < n; g++ {
			sids[g] = g // ISOAdobe charset
		}
	}
	enc = make(map[int]string)
	off := dict[16]
	if off <= 1 { // Standard encoding: ASCII positions
		for g := 1; g < n; g++ {
			if s := name(sids[g]); len(s) == 1 {
				enc[int(s[0])] = s
			}
		}
		return enc
	}
	q := off
	format := prog[q]
	q++
	switch format & 0x7f {
	case 0:
		count := int(prog[q])
		q++
		for g := 1; g <= count && g < n; g++ {
			enc[int(prog[q])] = name(sids[g])
			q++
		}
	case 1:
		ranges := int(prog[q])
		q++
		g := 1
		for r := 0; r < ranges; r++ {
			first, left := int(prog[q]), int(prog[q+1])
			q += 2
			for k := 0; k <= left && g < n; k++ {
				enc[first+k] = name(sids[g])
				g++
			}
		}
	}
	if format&0x80 != 0 {
		sups := int(prog[q])
		q++
		for s := 0; s < sups; s++ {
			enc[int(prog[q])] = name(cffCard16(prog, q+1))
			q += 3
		}
	}
	for c, s := range enc {
		if s == "" {
			delete(enc, c)
		}
	}
	return enc
}

func cffCard16(b []byte, p int) int { return int(b[p])<<8 | int(b[p+1]) }

// cffIndex reads an INDEX at p: its items and the offset after it.
func cffIndex(b []byte, p int) ([][]byte, int) {
	count := cffCard16(b, p)
	if count == 0 {
		return nil, p + 2
	}
	offSize := int(b[p+2])
	if offSize < 1 || offSize > 4 {
		panic("bad CFF offSize")
	}
	offs := p + 3
	read := func(i int) int {
		v := 0
		for k := 0; k < offSize; k++ {
			v = v<<8 | int(b[offs+i*offSize+k])
		}
		return v
	}
	data := offs + (count+1)*offSize - 1
	items := make([][]byte, count)
	for i := range items {
		items[i] = b[data+read(i) : data+read(i+1)]
	}
	return items, data + read(count)
}

// cffDict reads a DICT's integer operands: operator → its last operand.
func cffDict(d []byte) map[int]int {
	m := make(map[int]int)
	var last int
	for i := 0; i < len(d); {
		b := int(d[i])
		switch {
		case b <= 21:
			op := b
			i++
			if b == 12 {
				op = 12<<8 | int(d[i])
				i++
			}
			m[op] = last
		case b == 28:
			last = int(int16(cffCard16(d, i+1)))
			i += 3
		case b == 29:
			last = int(int32(uint32(d[i+1])<<24 | uint32(d[i+2])<<16 | uint32(d[i+3])<<8 | uint32(d[i+4])))
			i += 5
		case b == 30: // real: skip nibbles up to the 0xf terminator
			i++
			for i < len(d) && d[i]&0x0f != 0x0f && d[i]>>4 != 0x0f {
				i++
			}
			i++
			last = 0
		case b >= 32 && b <= 246:
			last = b - 139
			i++
		case b >= 247 && b <= 250:
			last = (b-247)*256 + int(d[i+1]) + 108
			i += 2
		case b >= 251 && b <= 254:
			last = -(b-251)*256 - int(d[i+1]) - 108
			i += 2
		default:
			i++
		}
	}
	return m
}
