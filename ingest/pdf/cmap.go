package pdf

import (
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
)

// cmapCodeSpace splits a composite font's strings into codes of 1–4 bytes.
type cmapCodeSpace struct {
	ranges []cmapCodeRange
}

type cmapCodeRange struct {
	n      int
	lo, hi [4]byte
}

// cmapUTF16Space reads UTF-16BE: two bytes, four for a surrogate pair.
var cmapUTF16Space = &cmapCodeSpace{ranges: []cmapCodeRange{
	{n: 4, lo: [4]byte{0xD8, 0x00, 0xDC, 0x00}, hi: [4]byte{0xDB, 0xFF, 0xDF, 0xFF}},
	{n: 2, lo: [4]byte{0x00, 0x00}, hi: [4]byte{0xFF, 0xFF}},
}}

// next returns the first code of s and its length in bytes.
func (cs *cmapCodeSpace) next(s []byte) (uint32, int) {
	if cs == nil || len(cs.ranges) == 0 {
		if len(s) < 2 {
			return uint32(s[0]), 1
		}
		return uint32(s[0])<<8 | uint32(s[1]), 2
	}
	for _, r := range cs.ranges {
		if len(s) < r.n {
			continue
		}
		ok := true
		for i := 0; i < r.n; i++ {
			if s[i] < r.lo[i] || s[i] > r.hi[i] {
				ok = false
				break
			}
		}
		if ok {
			var c uint32
			for i := 0; i < r.n; i++ {
				c = c<<8 | uint32(s[i])
			}
			return c, r.n
		}
	}
	// no range matched: take the shortest code length the map knows
	n := 4
	for _, r := range cs.ranges {
		if r.n < n {
			n = r.n
		}
	}
	if n > len(s) {
		n = len(s)
	}
	var c uint32
	for i := 0; i < n; i++ {
		c = c<<8 | uint32(s[i])
	}
	return c, n
}

// cmapUniMap is a ToUnicode map: single codes plus ranges too big to expand.
type cmapUniMap struct {
	chars  map[uint32]string
	ranges []cmapUniRange
}

type cmapUniRange struct {
	lo, hi uint32
	dst    []uint16 // UTF-16 of lo's text; later codes add to its last unit
}

func (m *cmapUniMap) has(code uint32) bool {
	if _, ok := m.chars[code]; ok {
		return true
	}
	for _, r := range m.ranges {
		if code >= r.lo && code <= r.hi {
			return true
		}
	}
	return false
}

func (m *cmapUniMap) lookup(code uint32) string {
	if s, ok := m.chars[code]; ok {
		return s
	}
	for _, r := range m.ranges {
		if code >= r.lo && code <= r.hi {
			return cmapRangeText(r.dst, code-r.lo)
		}
	}
	return ""
}

func cmapRangeText(dst []uint16, off uint32) string {
	if len(dst) == 0 {
		return ""
	}
	u := make([]uint16, len(dst))
	copy(u, dst)
	u[len(u)-1] += uint16(off)
	return string(utf16.Decode(u))
}

// cmapParsed is what a CMap stream defines: its code space, code-to-Unicode
// (bfchar/bfrange) and code-to-CID (cidchar/cidrange) mappings.
type cmapParsed struct {
	space *cmapCodeSpace
	uni   *cmapUniMap
	cid   map[uint32]uint32
}

func cmapCodeValue(b []byte) uint32 {
	var c uint32
	for _, x := range b {
		c = c<<8 | uint32(x)
	}
	return c
}

func cmapUTF16BE(b []byte) []uint16 {
	u := make([]uint16, len(b)/2)
	for i := range u {
		u[i] = uint16(b[2*i])<<8 | uint16(b[2*i+1])
	}
	if len(b)%2 == 1 { // a one-byte destination: take it as a code unit
		u = append(u, uint16(b[len(b)-1]))
	}
	return u
}

// parseCMap reads the parts of a CMap program text extraction needs.
func parseCMap(data []byte) cmapParsed {
	out := cmapParsed{space: &cmapCodeSpace{}, uni: &cmapUniMap{chars: make(map[uint32]string)}}
	l := &csLexer{buf: data}
	for {
		op, ok := l.next()
		if !ok {
			break
		}
		st := l.stack
		switch string(op) {
		case "endcodespacerange":
			for i := 0; i+1 < len(st); i += 2 {
				lo, hi := st[i].b, st[i+1].b
				if len(lo) == 0 || len(lo) > 4 || len(lo) != len(hi) {
					continue
				}
				r := cmapCodeRange{n: len(lo)}
				copy(r.lo[:], lo)
				copy(r.hi[:], hi)
				out.space.ranges = append(out.space.ranges, r)
			}
		case "endbfchar":
			for i := 0; i+1 < len(st); i += 2 {
				if st[i].kind != csStr {
					continue
				}
				code := cmapCodeValue(st[i].b)
				switch st[i+1].kind {
				case csStr:
					out.uni.chars[code] = string(utf16.Decode(cmapUTF16BE(st[i+1].b)))
				case csName:
					out.uni.chars[code] = glyphNameText(string(st[i+1].b), pdf.Value{})
				}
			}
		case "endbfrange":
			for i := 0; i+2 < len(st); {
				lo, hi := cmapCodeValue(st[i].b), cmapCodeValue(st[i+1].b)
				dst := st[i+2]
				if dst.kind == csArr {
					for j := dst.from; j < dst.to && lo+uint32(j-dst.from) <= hi; j++ {
						out.uni.chars[lo+uint32(j-dst.from)] = string(utf16.Decode(cmapUTF16BE(l.arr[j].b)))
					}
					i += 3
					continue
				}
				if hi < lo || dst.kind != csStr {
					i += 3
					continue
				}
				d := cmapUTF16BE(dst.b)
				if hi-lo < 256 {
					for c := lo; c <= hi; c++ {
						out.uni.chars[c] = cmapRangeText(d, c-lo)
					}
				} else {
					out.uni.ranges = append(out.uni.ranges, cmapUniRange{lo: lo, hi: hi, dst: d})
				}
				i += 3
			}
		case "endcidchar":
			for i := 0; i+1 < len(st); i += 2 {
				if out.cid == nil {
					out.cid = make(map[uint32]uint32)
				}
				out.cid[cmapCodeValue(st[i].b)] = uint32(st[i+1].num)
			}
		case "endcidrange":
			for i := 0; i+2 < len(st); i += 3 {
				if out.cid == nil {
					out.cid = make(map[uint32]uint32)
				}
				lo, hi := cmapCodeValue(st[i].b), cmapCodeValue(st[i+1].b)
				cid := uint32(st[i+2].num)
				for c := lo; c <= hi && c-lo <= 1<<16; c++ {
					out.cid[c] = cid + (c - lo)
				}
			}
		case "begincodespacerange", "beginbfchar", "beginbfrange", "begincidchar", "begincidrange":
			// the count operand is not needed: ranges run to the end operator
		}
		l.reset()
	}
	return out
}
