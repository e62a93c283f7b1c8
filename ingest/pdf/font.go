package pdf

import (
	"bytes"
	"compress/zlib"
	_ "embed"
	"encoding/binary"
	"io"
	"iter"
	"math"
	"strconv"
	"strings"
	"sync"
	"unicode"
	"unicode/utf16"

	"github.com/ledongthuc/pdf"
	"golang.org/x/image/font/sfnt"
	"golang.org/x/text/encoding/charmap"
)

// pdfFont is everything the page interpreter needs to turn a font's codes
// into text and advances, parsed once per document.
type pdfFont struct {
	name      string // BaseFont without the subset tag
	composite bool
	vertical  bool
	scale     float64 // glyph space to text space: 0.001, or FontMatrix[0] for Type3

	// simple fonts
	uni    [256]string
	widths [256]float64

	// composite fonts
	codes    *cmapCodeSpace     // splits strings into codes; nil means 2-byte codes
	cidOf    map[uint32]uint32  // code to CID from an embedded CMap; nil means identity
	unicode  bool               // codes are UTF-16 (predefined Uni*-UCS2/UTF16 CMaps)
	toUni    *cmapUniMap        // the font's ToUnicode map
	cidUni   []uint16           // CID to Unicode for a known Adobe character collection
	gidUni   map[uint16]rune    // glyph to Unicode from an embedded TrueType/OpenType cmap
	cidToGID []byte             // CIDToGIDMap stream; nil means identity
	cidW     map[uint32]float64 // /W
	dw       float64            // /DW

	mu     sync.Mutex
	glyphs map[uint32]cidGlyph // memoized decoding of composite codes
}

type cidGlyph struct {
	s string
	w float64
}

// glyph returns text and advance (glyph space) of a composite font's code.
func (f *pdfFont) glyph(code uint32) cidGlyph {
	f.mu.Lock()
	defer f.mu.Unlock()
	if g, ok := f.glyphs[code]; ok {
		return g
	}
	g := cidGlyph{w: f.dw}
	cid := code
	if f.cidOf != nil {
		cid = f.cidOf[code]
	}
	if w, ok := f.cidW[cid]; ok {
		g.w = w
	}
	switch {
	case f.toUni != nil && f.toUni.has(code):
		g.s = f.toUni.lookup(code)
	case f.unicode:
		g.s = string(rune(code))
		if code > 0xFFFF {
			g.s = string(utf16.Decode([]uint16{uint16(code >> 16), uint16(code)}))
		}
	case f.cidUni != nil:
		if int(cid) < len(f.cidUni) && f.cidUni[cid] != 0 {
			g.s = string(rune(f.cidUni[cid]))
		}
	case f.gidUni != nil:
		gid := cid
		if f.cidToGID != nil {
			if int(2*cid+1) < len(f.cidToGID) {
				gid = uint32(f.cidToGID[2*cid])<<8 | uint32(f.cidToGID[2*cid+1])
			} else {
				gid = 0
			}
		}
		if r, ok := f.gidUni[uint16(gid)]; ok {
			g.s = string(r)
		}
	}
	g.s = fontExpandLigature(g.s)
	if f.glyphs == nil {
		f.glyphs = make(map[uint32]cidGlyph)
	}
	f.glyphs[code] = g
	return g
}

// loadFont parses a font dictionary, decoding its streams (ToUnicode,
// encodings, font programs) with read. It never fails: what cannot be read
// decodes to nothing rather than to garbage.
func loadFont(v pdf.Value, read streamReader) *pdfFont {
	f := &pdfFont{scale: 0.001, dw: 1000}
	f.name = v.Key("BaseFont").Name()
	if f.name == "" {
		f.name = v.Key("Name").Name() // Type3 fonts have only their resource name
	}
	if i := strings.IndexByte(f.name, '+'); i >= 0 {
		f.name = f.name[i+1:]
	}
	if tu := v.Key("ToUnicode"); tu.Kind() == pdf.Stream {
		f.toUni = parseCMap(read(tu)).uni
	}
	if v.Key("Subtype").Name() == "Type0" {
		f.loadComposite(v, read)
	} else {
		f.loadSimple(v, read)
	}
	return f
}

func (f *pdfFont) loadComposite(v pdf.Value, read streamReader) {
	f.composite = true
	desc := v.Key("DescendantFonts").Index(0)
	if f.name == "" {
		f.name = desc.Key("BaseFont").Name()
	}
	if dw := desc.Key("DW"); !dw.IsNull() {
		f.dw = dw.Float64()
	}
	f.cidW = parseCIDWidths(desc.Key("W"))

	enc := v.Key("Encoding")
	switch enc.Kind() {
	case pdf.Name:
		name := enc.Name()
		f.vertical = strings.HasSuffix(name, "-V")
		switch {
		case name == "Identity-H" || name == "Identity-V":
		case strings.HasPrefix(name, "Uni") && (strings.Contains(name, "UCS2") || strings.Contains(name, "UTF16")):
			f.unicode = true
			f.codes = cmapUTF16Space
		}
	case pdf.Stream:
		cm := parseCMap(read(enc))
		f.codes = cm.space
		f.cidOf = cm.cid
		f.vertical = enc.Key("WMode").Int64() == 1
	}

	info := desc.Key("CIDSystemInfo")
	coll := info.Key("Registry").Text() + "-" + info.Key("Ordering").Text()
	if t := cidToUnicode(coll); t != nil {
		f.cidUni = t
		return
	}
	if f.toUni != nil || f.unicode {
		return
	}
	fd := desc.Key("FontDescriptor")
	prog := fd.Key("FontFile2")
	if prog.IsNull() && fd.Key("FontFile3").Key("Subtype").Name() == "OpenType" {
		prog = fd.Key("FontFile3")
	}
	if prog.IsNull() {
		return
	}
	f.gidUni = invertCmap(read(prog))
	if m := desc.Key("CIDToGIDMap"); m.Kind() == pdf.Stream {
		f.cidToGID = read(m)
	}
}

// parseCIDWidths reads a /W array: "c [w1 w2 …]" and "cfirst clast w" runs.
func parseCIDWidths(w pdf.Value) map[uint32]float64 {
	m := make(map[uint32]float64)
	n := w.Len()
	for i := 0; i+1 < n; {
		first := w.Index(i)
		next := w.Index(i + 1)
		if next.Kind() == pdf.Array {
			c := uint32(first.Int64())
			for j := 0; j < next.Len(); j++ {
				m[c+uint32(j)] = next.Index(j).Float64()
			}
			i += 2
			continue
		}
		if i+2 >= n {
			break
		}
		lo, hi := first.Int64(), next.Int64()
		wd := w.Index(i + 2).Float64()
		if hi-lo <= 1<<16 {
			for c := lo; c <= hi; c++ {
				m[uint32(c)] = wd
			}
		}
		i += 3
	}
	return m
}

// invertCmap maps glyphs back to Unicode by probing the font's cmap over the
// scripts books use; sfnt offers lookups only in the rune-to-glyph direction.
func invertCmap(prog []byte) map[uint16]rune {
	if len(prog) == 0 {
		return nil
	}
	fnt, err := sfnt.Parse(prog)
	if err != nil {
		return nil
	}
	var buf sfnt.Buffer
	m := make(map[uint16]rune)
	ranges := [][2]rune{{0x20, 0x2FF}, {0x370, 0x52F}, {0x2000, 0x2BFF}, {0x3000, 0x33FF},
		{0x4E00, 0x9FFF}, {0xAC00, 0xD7AF}, {0xF900, 0xFAFF}, {0xFB00, 0xFB06}, {0xFE30, 0xFFEF}}
	for _, rg := range ranges {
		for r := rg[0]; r <= rg[1]; r++ {
			gi, err := fnt.GlyphIndex(&buf, r)
			if err != nil || gi == 0 {
				continue
			}
			if _, ok := m[uint16(gi)]; !ok {
				m[uint16(gi)] = r
			}
		}
	}
	return m
}

func (f *pdfFont) loadSimple(v pdf.Value, read streamReader) {
	subtype := v.Key("Subtype").Name()
	if subtype == "Type3" {
		if fm := v.Key("FontMatrix"); fm.Len() == 6 {
			f.scale = fm.Index(0).Float64()
		}
	}
	// widths
	missing := v.Key("FontDescriptor").Key("MissingWidth").Float64()
	ws := v.Key("Widths")
	def := missing
	if ws.Len() == 0 && missing == 0 {
		// A standard-14 font without metrics: a typical average advance keeps
		// glyphs apart; monospaced Courier is exact.
		def = 500
		if strings.Contains(f.name, "Courier") {
			def = 600
		}
		if subtype == "Type3" {
			def = 0
		}
	}
	for i := range f.widths {
		f.widths[i] = def
	}
	first := int(v.Key("FirstChar").Int64())
	for i := 0; i < ws.Len(); i++ {
		if c := first + i; c >= 0 && c < 256 {
			f.widths[c] = ws.Index(i).Float64()
		}
	}

	// text: base encoding, then Differences, then ToUnicode
	enc := v.Key("Encoding")
	base := "StandardEncoding"
	if subtype == "TrueType" {
		base = "WinAnsiEncoding"
	}
	builtin := enc.IsNull() && subtype != "TrueType"
	switch enc.Kind() {
	case pdf.Name:
		base = enc.Name()
	case pdf.Dict:
		if b := enc.Key("BaseEncoding"); b.Kind() == pdf.Name {
			base = b.Name()
		}
	}
	for c := 0; c < 256; c++ {
		f.uni[c] = fontBaseEncoding(base, byte(c))
	}
	if builtin && (subtype == "Type1" || subtype == "MMType1") && isTeXTextFont(f.name) {
		// TeX's Type1 text fonts come with their built-in OT1 encoding,
		// whose ligatures sit in the control range; its math and symbol
		// fonts put other glyphs there.
		for c := 0; c < 0x20; c++ {
			f.uni[c] = texOT1[c]
		}
	}
	if builtin || (enc.Kind() == pdf.Dict && enc.Key("BaseEncoding").IsNull()) {
		// the font program's own encoding is the base
		fd := v.Key("FontDescriptor")
		var names map[int]string
		if ff := fd.Key("FontFile"); ff.Kind() == pdf.Stream {
			names = type1Encoding(read(ff))
		} else if ff := fd.Key("FontFile3"); ff.Key("Subtype").Name() == "Type1C" {
			names = cffEncoding(read(ff))
		}
		if len(names) > 0 {
			for c := range f.uni {
				f.uni[c] = "" // codes the program does not encode draw nothing
				if name, ok := names[c]; ok {
					f.uni[c] = glyphNameText(name, v)
				}
			}
		}
	}
	if enc.Kind() == pdf.Dict {
		f.applyDifferences(v, enc.Key("Differences"), subtype == "Type3")
	}
	if f.toUni != nil {
		for c := 0; c < 256; c++ {
			if f.toUni.has(uint32(c)) {
				f.uni[c] = fontExpandLigature(f.toUni.lookup(uint32(c)))
			}
		}
	}
	for c := 0; c < 256; c++ {
		if s := f.uni[c]; len(s) == 1 && s[0] < 0x20 {
			f.uni[c] = "" // an unmapped control code is noise, not text
		} else {
			f.uni[c] = fontExpandLigature(s)
		}
	}
}

// differences walks an encoding's /Differences array ([code name name …
// code name …]): each glyph name with the code it gives a name, in array
// order, for codes 0–255.
func differences(diffs pdf.Value) iter.Seq2[int, string] {
	return func(yield func(int, string) bool) {
		code := 0
		for i := 0; i < diffs.Len(); i++ {
			x := diffs.Index(i)
			switch x.Kind() {
			case pdf.Integer, pdf.Real:
				code = int(x.Float64())
			case pdf.Name:
				if code >= 0 && code < 256 && !yield(code, x.Name()) {
					return
				}
				code++
			}
		}
	}
}

func (f *pdfFont) applyDifferences(font pdf.Value, diffs pdf.Value, type3 bool) {
	names := make(map[int]string)
	for code, name := range differences(diffs) {
		names[code] = name
	}
	// pdfTeX's bitmap (Type3) fonts name glyph N "aN": the codes are then
	// TeX's own font encoding, T1 for current LaTeX and OT1 for older fonts.
	numeric := type3 && len(names) > 0
	ot1 := false
	for c, n := range names {
		if n == ".notdef" {
			continue
		}
		if len(n) < 2 || n[0] != 'a' || n[1:] != strconv.Itoa(c) {
			numeric = false
		}
		if c >= 0x0B && c <= 0x0F {
			ot1 = true
		}
	}
	for c, n := range names {
		if n == ".notdef" {
			continue
		}
		if numeric {
			f.uni[c] = texCodeText(byte(c), ot1)
			continue
		}
		if s := glyphNameText(n, font); s != "" {
			f.uni[c] = s
		}
	}
}

// glyphNameText maps a glyph name to text: ligature and uniXXXX names here,
// the rest through the library's Adobe Glyph List (reached via a one-code
// decode with the font's own Differences).
func glyphNameText(name string, font pdf.Value) string {
	if s, ok := fontLigatureNames[name]; ok {
		return s
	}
	if base, _, ok := strings.Cut(name, "."); ok && base != "" {
		name = base // "a.sc", "one.oldstyle"
	}
	if s, ok := fontLigatureNames[name]; ok {
		return s
	}
	if strings.HasPrefix(name, "uni") && len(name) >= 7 && (len(name)-3)%4 == 0 {
		var u []uint16
		for i := 3; i+4 <= len(name); i += 4 {
			v, err := strconv.ParseUint(name[i:i+4], 16, 16)
			if err != nil {
				u = nil
				break
			}
			u = append(u, uint16(v))
		}
		if u != nil {
			return fontExpandLigature(string(utf16.Decode(u)))
		}
	}
	if strings.HasPrefix(name, "u") && len(name) >= 5 && len(name) <= 7 {
		if v, err := strconv.ParseUint(name[1:], 16, 32); err == nil && v <= unicode.MaxRune {
			return string(rune(v))
		}
	}
	if r, ok := fontAGLLookup(name, font); ok {
		return fontExpandLigature(string(r))
	}
	return ""
}

// fontAGLLookup resolves a glyph name with the library's glyph list: it decodes
// one code through a Differences encoding naming that glyph.
func fontAGLLookup(name string, font pdf.Value) (r rune, ok bool) {
	if len(name) == 1 && name[0] >= 0x20 && name[0] < 0x7F {
		return rune(name[0]), true
	}
	if r, ok := fontAGLCommon[name]; ok {
		return r, true
	}
	return fontLibraryGlyph(name, font)
}

// fontLibraryGlyph asks the library's dictEncoder for the glyph's rune by
// decoding each code the font's Differences give this name.
func fontLibraryGlyph(name string, font pdf.Value) (r rune, ok bool) {
	defer func() {
		if recover() != nil {
			r, ok = 0, false
		}
	}()
	for code, n := range differences(font.Key("Encoding").Key("Differences")) {
		if n != name {
			continue
		}
		lf := pdf.Font{V: font}
		s := []rune(lf.Encoder().Decode(string([]byte{byte(code)})))
		if len(s) == 1 && s[0] != rune(code) && s[0] >= 0x20 {
			return s[0], true
		}
		return 0, false
	}
	return 0, false
}

var (
	fontWin1252  = charmap.Windows1252
	fontMacRoman = charmap.Macintosh
)

func fontBaseEncoding(name string, c byte) string {
	switch name {
	case "WinAnsiEncoding":
		if c < 0x20 {
			return ""
		}
		return string(fontWin1252.DecodeByte(c))
	case "MacRomanEncoding":
		if c < 0x20 {
			return ""
		}
		return string(fontMacRoman.DecodeByte(c))
	}
	// StandardEncoding and unknown names: ASCII with typographic quotes.
	switch {
	case c == 0x27:
		return "\u2019"
	case c == 0x60:
		return "\u2018"
	case c >= 0x20 && c < 0x7F:
		return string(rune(c))
	case c >= 0xA0:
		return string(fontWin1252.DecodeByte(c))
	}
	return ""
}

// type1Encoding reads the built-in encoding of an embedded Type 1 font
// program ("dup 12 /fi put" lines in its clear-text part).
func type1Encoding(prog []byte) map[int]string {
	end := bytes.Index(prog, []byte("eexec"))
	if end < 0 {
		end = len(prog)
	}
	head := prog[:end]
	i := bytes.Index(head, []byte("/Encoding"))
	if i < 0 {
		return nil
	}
	m := make(map[int]string)
	for _, line := range bytes.Split(head[i:], []byte("dup ")) {
		fields := bytes.Fields(line)
		if len(fields) < 3 || string(fields[2]) != "put" || len(fields[1]) < 2 || fields[1][0] != '/' {
			continue
		}
		c, err := strconv.Atoi(string(fields[0]))
		if err != nil || c < 0 || c > 255 {
			continue
		}
		m[c] = string(fields[1][1:])
	}
	return m
}

// fontExpandLigature spells Unicode ligature characters as their letters, so
// "ﬁnd" is searchable as "find".
func fontExpandLigature(s string) string {
	if len(s) == 3 && s[0] == 0xEF && s[1] == 0xAC && s[2] <= 0x86 {
		switch s[2] {
		case 0x80:
			return "ff"
		case 0x81:
			return "fi"
		case 0x82:
			return "fl"
		case 0x83:
			return "ffi"
		case 0x84:
			return "ffl"
		case 0x85, 0x86:
			return "st"
		}
	}
	return s
}

var fontLigatureNames = map[string]string{
	"fi": "fi", "fl": "fl", "ff": "ff", "ffi": "ffi", "ffl": "ffl",
	"f_i": "fi", "f_l": "fl", "f_f": "ff", "f_f_i": "ffi", "f_f_l": "ffl", "f_j": "fj", "s_t": "st",
	"uniFB00": "ff", "uniFB01": "fi", "uniFB02": "fl", "uniFB03": "ffi", "uniFB04": "ffl",
}

// fontAGLCommon answers the most frequent glyph names without the library's
// linear Differences walk.
var fontAGLCommon = map[string]rune{
	"space": ' ', "exclam": '!', "quotedbl": '"', "numbersign": '#', "dollar": '$', "percent": '%',
	"ampersand": '&', "quotesingle": '\'', "parenleft": '(', "parenright": ')', "asterisk": '*',
	"plus": '+', "comma": ',', "hyphen": '-', "period": '.', "slash": '/', "zero": '0', "one": '1',
	"two": '2', "three": '3', "four": '4', "five": '5', "six": '6', "seven": '7', "eight": '8',
	"nine": '9', "colon": ':', "semicolon": ';', "less": '<', "equal": '=', "greater": '>',
	"question": '?', "at": '@', "bracketleft": '[', "backslash": '\\', "bracketright": ']',
	"asciicircum": '^', "underscore": '_', "grave": '`', "braceleft": '{', "bar": '|',
	"braceright": '}', "asciitilde": '~', "quoteleft": '\u2018', "quoteright": '\u2019',
	"quotedblleft": '\u201C', "quotedblright": '\u201D', "endash": '\u2013', "emdash": '\u2014',
	"bullet": '\u2022', "ellipsis": '\u2026', "dotlessi": '\u0131', "germandbls": '\u00DF',
	"minus": '\u2212', "periodcentered": '\u00B7', "multiply": '\u00D7', "divide": '\u00F7',
	"section": '\u00A7', "paragraph": '\u00B6', "dagger": '\u2020', "daggerdbl": '\u2021',
	"copyright": '\u00A9', "registered": '\u00AE', "trademark": '\u2122', "degree": '\u00B0',
	// math fonts' built-in encodings (TeX's cmmi/cmsy) use these
	"Gamma": 'Γ', "Delta": 'Δ', "Theta": 'Θ', "Lambda": 'Λ', "Xi": 'Ξ', "Pi": 'Π', "Sigma": 'Σ',
	"Upsilon": 'Υ', "Phi": 'Φ', "Psi": 'Ψ', "Omega": 'Ω', "alpha": 'α', "beta": 'β', "gamma": 'γ',
	"delta": 'δ', "epsilon": 'ε', "epsilon1": 'ϵ', "zeta": 'ζ', "eta": 'η', "theta": 'θ', "theta1": 'ϑ',
	"iota": 'ι', "kappa": 'κ', "lambda": 'λ', "mu": 'μ', "nu": 'ν', "xi": 'ξ', "pi": 'π', "pi1": 'ϖ',
	"rho": 'ρ', "rho1": 'ϱ', "sigma": 'σ', "sigma1": 'ς', "tau": 'τ', "upsilon": 'υ', "phi": 'φ',
	"phi1": 'ϕ', "chi": 'χ', "psi": 'ψ', "omega": 'ω', "plusminus": '±', "minusplus": '∓',
	"asteriskmath": '∗', "circledot": '⊙', "lessequal": '≤', "greaterequal": '≥', "equivalence": '≡',
	"similar": '∼', "approxequal": '≈', "propersubset": '⊂', "propersuperset": '⊃', "reflexsubset": '⊆',
	"reflexsuperset": '⊇', "element": '∈', "arrowleft": '←', "arrowright": '→', "arrowup": '↑',
	"arrowdown": '↓', "arrowboth": '↔', "arrowdblleft": '⇐', "arrowdblright": '⇒', "arrowdblboth": '⇔',
	"infinity": '∞', "partialdiff": '∂', "nabla": '∇', "radical": '√', "summation": '∑', "product": '∏',
	"integral": '∫', "angbracketleft": '⟨', "angbracketright": '⟩', "negationslash": '/',
	"universal": '∀', "existential": '∃', "logicalnot": '¬', "emptyset": '∅', "intersection": '∩',
	"union": '∪', "logicaland": '∧', "logicalor": '∨', "proportional": '∝', "prime": '′', "notequal": '≠',
	"lessmuch": '≪', "greatermuch": '≫', "circleplus": '⊕', "circlemultiply": '⊗', "diamondmath": '⋄',
}

// isTeXTextFont tells Computer Modern text fonts (OT1) from TeX's math and
// symbol fonts by name.
func isTeXTextFont(name string) bool {
	if !strings.HasPrefix(name, "CM") && !strings.HasPrefix(name, "LM") {
		return false
	}
	for _, sym := range []string{"CMMI", "CMSY", "CMEX", "CMBSY", "CMMIB", "LMMI", "LMSY", "LMEX"} {
		if strings.HasPrefix(name, sym) {
			return false
		}
	}
	return true
}

// texOT1 is the control range of TeX's OT1 text encoding (Computer Modern).
var texOT1 = [0x20]string{
	"\u0393", "\u0394", "\u0398", "\u039B", "\u039E", "\u03A0", "\u03A3", "\u03A5",
	"\u03A6", "\u03A8", "\u03A9", "ff", "fi", "fl", "ffi", "ffl",
	"\u0131", "\u0237", "`", "\u00B4", "\u02C7", "\u02D8", "\u00AF", "\u02DA",
	"\u00B8", "\u00DF", "\u00E6", "\u0153", "\u00F8", "\u00C6", "\u0152", "\u00D8",
}

// texT1 is the control range of TeX's T1 (Cork) text encoding.
var texT1 = [0x20]string{
	"`", "\u00B4", "\u02C6", "\u02DC", "\u00A8", "\u02DD", "\u02DA", "\u02C7",
	"\u02D8", "\u00AF", "\u02D9", "\u00B8", "\u02DB", "\u201A", "\u2039", "\u203A",
	"\u201C", "\u201D", "\u201E", "\u00AB", "\u00BB", "\u2013", "\u2014", "",
	"", "\u0131", "\u0237", "ff", "fi", "fl", "ffi", "ffl",
}

// texCodeText decodes a code of a TeX text font in T1 or OT1 encoding.
func texCodeText(c byte, ot1 bool) string {
	switch {
	case c < 0x20 && ot1:
		return texOT1[c]
	case c < 0x20:
		return texT1[c]
	case c == 0x27:
		return "\u2019"
	case c == 0x60:
		return "\u2018"
	case ot1 && c == 0x7B:
		return "\u2013"
	case ot1 && c == 0x7C:
		return "\u2014"
	case ot1 && c == 0x5C:
		return "\u201C"
	case ot1 && c == 0x22:
		return "\u201D"
	case c == 0x7F && !ot1:
		return "-"
	case c < 0x7F:
		return string(rune(c))
	case c >= 0xC0 && !ot1: // T1's upper half follows Latin-1 for letters
		if c == 0xDF {
			return "SS"
		}
		return string(rune(c))
	}
	return ""
}

// cid2uniData holds CID-to-Unicode tables for Adobe's CJK character
// collections (GB1, CNS1, Japan1, Korea1), derived from Adobe's *-UCS2 CMaps
// (cmap-resources, BSD-3-Clause): per collection a length byte and name, a
// uvarint count and zigzag-uvarint deltas of the Unicode values, zlib'd.
// Fonts such as xdvipdfmx's Fandol CID fonts carry no ToUnicode map, and
// their codes are CIDs in these collections.
//
//go:embed cid2uni.z
var cid2uniData []byte

var cid2uniTables = sync.OnceValue(func() map[string][]uint16 {
	tables := make(map[string][]uint16)
	zr, err := zlib.NewReader(bytes.NewReader(cid2uniData))
	if err != nil {
		return tables
	}
	raw, err := io.ReadAll(zr)
	if err != nil {
		return tables
	}
	for len(raw) > 0 {
		n := int(raw[0])
		if len(raw) < 1+n {
			break
		}
		name := string(raw[1 : 1+n])
		raw = raw[1+n:]
		count, k := binary.Uvarint(raw)
		if k <= 0 || count > 1<<17 {
			break
		}
		raw = raw[k:]
		t := make([]uint16, count)
		prev := int64(0)
		for i := range t {
			z, k := binary.Uvarint(raw)
			if k <= 0 {
				break
			}
			raw = raw[k:]
			d := int64(z >> 1)
			if z&1 != 0 {
				d = -d - 1
			}
			prev += d
			if prev > 0 && prev <= math.MaxUint16 {
				t[i] = uint16(prev)
			}
		}
		tables[name] = t
	}
	return tables
})

// cidToUnicode returns the table for a character collection ("Adobe-GB1").
func cidToUnicode(collection string) []uint16 {
	return cid2uniTables()[collection]
}
