package pdf

import (
	"bytes"
	"fmt"
	"io"
	"math"
	"slices"
	"strings"
	"sync"

	"github.com/citebook/citebook"
	"github.com/ledongthuc/pdf"
)

// fontCache holds a document's parsed fonts so every page reuses them. The
// library re-parses a font's ToUnicode map at every Tf and cannot decode CID
// fonts without one (lshort-zh-cn's Fandol fonts), nor TeX's Type3 bitmap
// fonts (dtc-paper's ligatures), so page text is read with our own content
// stream interpreter and font decoding instead of Page.Content().
//
// Use one cache per open document (never share it across documents: fonts are
// keyed by object number); pdfExtractor makes one per parse and reads the
// pages its loadPages found (one walk of the page tree, much faster than
// Reader.Page(i) per page).
//
// It is safe for concurrent use by several goroutines reading pages of the
// same document.
type fontCache struct {
	// budget bounds what the document's streams decode to and how many
	// operators its pages run.
	budget *docBudget

	mu    sync.Mutex
	fonts map[string]*pdfFont
	// shared holds the glyphs of content drawn by more than one page, keyed
	// by content stream and resources: the first page seen only marks its
	// key (a nil entry), so ordinary books, one stream per page, keep
	// nothing, while a stream every page draws is decoded and run once.
	shared map[string]*sharedGlyphs
}

type sharedGlyphs struct {
	once   sync.Once
	glyphs []pdf.Text
	err    error
}

func newFontCacheBudget(b *docBudget) *fontCache {
	return &fontCache{budget: b, fonts: make(map[string]*pdfFont), shared: make(map[string]*sharedGlyphs)}
}

// readStream decodes one stream within the document's budget. It never
// panics; a broken stream returns what was decoded before the break.
func (c *fontCache) readStream(v pdf.Value) (b []byte, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("%v", r)
		}
	}()
	rc := v.Reader()
	defer rc.Close()
	return io.ReadAll(c.budget.reader(rc))
}

// readStreamData is readStream for callers that make do with partial data
// (fonts, CMaps, forms); limit errors stay recorded in the budget.
func (c *fontCache) readStreamData(v pdf.Value) []byte {
	b, _ := c.readStream(v)
	return b
}

// streamReader decodes a stream, as fontCache.readStreamData does.
type streamReader func(pdf.Value) []byte

// pageGlyphsShared returns a page's glyphs in content-stream order
// (including text in form XObjects) with correct Unicode text, position and
// size: one pdf.Text per glyph, X/Y the glyph origin in user space (points,
// y up, like the library), FontSize the rendered size, W the advance width
// in points, S its text ("fi" for a ligature glyph). Glyphs whose code maps
// to no text are not returned but still advance the pen. It never panics: a
// malformed page yields an error (with whatever glyphs were read before it).
//
// Content several pages share is decoded and interpreted once; callers get
// their own copy. inherited are the resources the page's ancestors give it
// (found by loadPages). What a page
// draws is identified by its content stream(s) (a stream prints as its
// header and file offset, an array as its references) and its resources.
func (c *fontCache) pageGlyphsShared(p pdf.Page, inherited pdf.Value) ([]pdf.Text, error) {
	res, key, err := func() (res pdf.Value, key string, err error) {
		defer func() {
			if r := recover(); r != nil {
				err = citebook.Wrap(fmt.Errorf("%v", r), citebook.EINVALID, "unreadable PDF page")
			}
		}()
		if res = p.V.Key("Resources"); res.IsNull() {
			res = inherited
		}
		return res, p.V.Key("Contents").String() + "\x00" + res.String(), nil
	}()
	if err != nil {
		return nil, err
	}
	c.mu.Lock()
	e, seen := c.shared[key]
	if seen && e == nil {
		e = &sharedGlyphs{}
		c.shared[key] = e
	} else if !seen {
		c.shared[key] = nil
	}
	c.mu.Unlock()
	if e == nil {
		return c.pageGlyphsRes(p, res)
	}
	e.once.Do(func() { e.glyphs, e.err = c.pageGlyphsRes(p, res) })
	return slices.Clone(e.glyphs), e.err
}

// pageGlyphsRes is pageGlyphsShared for one page whose resources are found.
func (c *fontCache) pageGlyphsRes(p pdf.Page, res pdf.Value) (glyphs []pdf.Text, err error) {
	in := &csInterp{cache: c}
	defer func() {
		if r := recover(); r != nil {
			glyphs = in.out
			err = citebook.Wrap(fmt.Errorf("%v", r), citebook.EINVALID, "unreadable PDF page content")
		}
	}()
	if p.V.IsNull() {
		return nil, nil
	}
	contents := p.V.Key("Contents")
	var data []byte
	var readErr error
	switch contents.Kind() {
	case pdf.Stream:
		data, readErr = c.readStream(contents)
	case pdf.Array:
		var buf bytes.Buffer
		for i := 0; i < contents.Len() && readErr == nil; i++ {
			var part []byte
			part, readErr = c.readStream(contents.Index(i))
			buf.Write(part)
			buf.WriteByte('\n')
		}
		data = buf.Bytes()
	default:
		return nil, nil
	}
	if err := c.budget.check(); err != nil {
		return nil, err
	}
	in.out = make([]pdf.Text, 0, min(len(data)/8, 1<<16))
	in.run(data, newCSResources(res), csIdentity, 0)
	if in.err == nil {
		in.err = c.budget.addOps(in.ops % csOpsBatch)
	}
	if in.err != nil {
		return in.out, in.err
	}
	if readErr != nil { // the text before the damage is still worth having
		return in.out, citebook.Wrap(readErr, citebook.EINVALID, "damaged PDF page content stream")
	}
	return in.out, nil
}

// font returns the parsed font for a resource name, loading it once per
// document. Resolving a font object can mean inflating a whole object stream
// (the library does not cache those), so the dictionary is touched only when
// its object number has not been seen.
func (c *fontCache) font(res *csResources, name string) *pdfFont {
	if f, ok := res.fonts[name]; ok {
		return f
	}
	res.readRefs()
	key, isRef := res.refs[name]
	c.mu.Lock()
	defer c.mu.Unlock()
	f, ok := c.fonts[key]
	if !isRef || !ok {
		v := res.fontDict.Key(name)
		if !isRef {
			key = "inline " + v.String()
			f, ok = c.fonts[key]
		}
		if !ok {
			f = loadFont(v, c.readStreamData)
			c.fonts[key] = f
		}
	}
	res.fonts[name] = f
	return f
}

// csResources resolves names in one resource dictionary (a page's or a form's).
type csResources struct {
	v        pdf.Value
	fontDict pdf.Value
	refs     map[string]string // font name to "obj gen" of its dictionary
	fonts    map[string]*pdfFont
}

func newCSResources(v pdf.Value) *csResources {
	return &csResources{v: v, fonts: make(map[string]*pdfFont)}
}

// readRefs finds the object numbers of the font resources. The library
// hides them, but prints them: "<</F1 5 0 R /F2 9 0 R>>".
func (r *csResources) readRefs() {
	if r.refs != nil {
		return
	}
	r.fontDict = r.v.Key("Font")
	r.refs = make(map[string]string)
	s := strings.TrimSuffix(strings.TrimPrefix(r.fontDict.String(), "<<"), ">>")
	f := strings.Fields(s)
	for i := 0; i+3 < len(f); i++ {
		if strings.HasPrefix(f[i], "/") && f[i+3] == "R" {
			r.refs[f[i][1:]] = f[i+1] + " " + f[i+2]
		}
	}
}

// csMatrix is a PDF matrix [a b c d e f].
type csMatrix [6]float64

var csIdentity = csMatrix{1, 0, 0, 1, 0, 0}

// mul returns m × n (apply m, then n).
func (m csMatrix) mul(n csMatrix) csMatrix {
	return csMatrix{
		m[0]*n[0] + m[1]*n[2],
		m[0]*n[1] + m[1]*n[3],
		m[2]*n[0] + m[3]*n[2],
		m[2]*n[1] + m[3]*n[3],
		m[4]*n[0] + m[5]*n[2] + n[4],
		m[4]*n[1] + m[5]*n[3] + n[5],
	}
}

type csState struct {
	ctm                        csMatrix
	tc, tw, th, tl, tfs, trise float64
	font                       *pdfFont
}

type csInterp struct {
	cache *fontCache
	out   []pdf.Text
	ops   int64 // operators run, counted into the budget every csOpsBatch
	err   error // a limit or the deadline stopped the interpretation
	forms int   // form XObjects run so far
	tm    csMatrix
	tlm   csMatrix
}

// Forms nest at most csMaxFormDepth deep and a page runs at most csMaxForms
// of them, so self-referencing forms cannot blow up.
const (
	csMaxFormDepth = 8
	csMaxForms     = 4096
	csOpsBatch     = 4096
)

// run interprets one content stream with the given resources and initial CTM.
func (in *csInterp) run(data []byte, res *csResources, ctm csMatrix, depth int) {
	g := csState{ctm: ctm, th: 1}
	var stack []csState
	l := &csLexer{buf: data}
	for {
		op, ok := l.next()
		if !ok {
			return
		}
		if in.ops++; in.ops%csOpsBatch == 0 {
			if in.err = in.cache.budget.addOps(csOpsBatch); in.err != nil {
				return
			}
		}
		st := l.stack
		switch len(op) {
		case 1:
			switch op[0] {
			case 'q':
				stack = append(stack, g)
			case 'Q':
				if n := len(stack); n > 0 {
					g = stack[n-1]
					stack = stack[:n-1]
				}
			case '\'':
				in.nextLine(&g)
				if len(st) >= 1 {
					in.show(&g, st[len(st)-1].b)
				}
			case '"':
				if len(st) >= 3 {
					g.tw = st[len(st)-3].num
					g.tc = st[len(st)-2].num
				}
				in.nextLine(&g)
				if len(st) >= 1 {
					in.show(&g, st[len(st)-1].b)
				}
			}
		case 2:
			switch string(op) {
			case "cm":
				if len(st) >= 6 {
					m := csNums6(st[len(st)-6:])
					g.ctm = m.mul(g.ctm)
				}
			case "BT":
				in.tm, in.tlm = csIdentity, csIdentity
			case "Tj":
				if len(st) >= 1 {
					in.show(&g, st[len(st)-1].b)
				}
			case "TJ":
				if len(st) >= 1 && st[len(st)-1].kind == csArr {
					a := st[len(st)-1]
					for _, e := range l.arr[a.from:a.to] {
						if e.kind == csStr {
							in.show(&g, e.b)
						} else if e.kind == csNum {
							in.adjust(&g, e.num)
						}
					}
				}
			case "Td", "TD":
				if len(st) >= 2 {
					tx, ty := st[len(st)-2].num, st[len(st)-1].num
					if op[1] == 'D' {
						g.tl = -ty
					}
					in.tlm = csMatrix{1, 0, 0, 1, tx, ty}.mul(in.tlm)
					in.tm = in.tlm
				}
			case "T*":
				in.nextLine(&g)
			case "Tm":
				if len(st) >= 6 {
					in.tm = csNums6(st[len(st)-6:])
					in.tlm = in.tm
				}
			case "Tf":
				if len(st) >= 2 {
					g.font = in.cache.font(res, string(st[len(st)-2].b))
					g.tfs = st[len(st)-1].num
				}
			case "Tc":
				if len(st) >= 1 {
					g.tc = st[len(st)-1].num
				}
			case "Tw":
				if len(st) >= 1 {
					g.tw = st[len(st)-1].num
				}
			case "Tz":
				if len(st) >= 1 {
					g.th = st[len(st)-1].num / 100
				}
			case "TL":
				if len(st) >= 1 {
					g.tl = st[len(st)-1].num
				}
			case "Ts":
				if len(st) >= 1 {
					g.trise = st[len(st)-1].num
				}
			case "Do":
				if len(st) >= 1 && depth < csMaxFormDepth && in.forms < csMaxForms {
					in.forms++
					in.form(&g, res, string(st[len(st)-1].b), depth)
					if in.err != nil {
						return
					}
				}
			case "ID":
				l.skipInlineImage()
			}
		}
		l.reset()
	}
}

func csNums6(st []csOperand) csMatrix {
	var m csMatrix
	for i := range m {
		m[i] = st[i].num
	}
	return m
}

func (in *csInterp) nextLine(g *csState) {
	in.tlm = csMatrix{1, 0, 0, 1, 0, -g.tl}.mul(in.tlm)
	in.tm = in.tlm
}

// adjust applies a TJ number: a shift in thousandths of the font size.
func (in *csInterp) adjust(g *csState, n float64) {
	d := -n / 1000 * g.tfs
	if g.font != nil && g.font.vertical {
		in.tm[4] += d * in.tm[2]
		in.tm[5] += d * in.tm[3]
		return
	}
	d *= g.th
	in.tm[4] += d * in.tm[0]
	in.tm[5] += d * in.tm[1]
}

// form interprets a form XObject's content in place of its Do operator.
func (in *csInterp) form(g *csState, res *csResources, name string, depth int) {
	xo := res.v.Key("XObject").Key(name)
	if xo.Kind() != pdf.Stream || xo.Key("Subtype").Name() != "Form" {
		return
	}
	ctm := g.ctm
	if m := xo.Key("Matrix"); m.Len() == 6 {
		var fm csMatrix
		for i := range fm {
			fm[i] = m.Index(i).Float64()
		}
		ctm = fm.mul(ctm)
	}
	formRes := res
	if r := xo.Key("Resources"); !r.IsNull() {
		formRes = newCSResources(r)
	}
	tm, tlm := in.tm, in.tlm
	in.run(in.cache.readStreamData(xo), formRes, ctm, depth+1)
	in.tm, in.tlm = tm, tlm
}

// show emits the glyphs of one string and advances the text matrix.
func (in *csInterp) show(g *csState, s []byte) {
	f := g.font
	if f == nil || len(s) == 0 {
		return
	}
	m := in.tm.mul(g.ctm)
	size := math.Abs(g.tfs) * math.Hypot(m[2], m[3])
	xscale := math.Abs(g.tfs*g.th) * math.Hypot(m[0], m[1])
	for len(s) > 0 {
		var text string
		var w float64
		single := false
		if f.composite {
			code, n := f.codes.next(s)
			s = s[n:]
			gl := f.glyph(code)
			text, w = gl.s, gl.w
			single = n == 1 && code == 32
		} else {
			c := s[0]
			s = s[1:]
			text, w = f.uni[c], f.widths[c]
			single = c == 32
		}
		w *= f.scale
		if text != "" {
			in.out = append(in.out, pdf.Text{
				Font:     f.name,
				FontSize: size,
				X:        g.trise*m[2] + m[4],
				Y:        g.trise*m[3] + m[5],
				W:        w * xscale,
				S:        text,
			})
		}
		adv := g.tc
		if single {
			adv += g.tw
		}
		if f.vertical {
			ty := -w*g.tfs + adv
			if w == 0 || f.composite {
				ty = -g.tfs + adv // vertical advance defaults to 1 em (DW2)
			}
			in.tm[4] += ty * in.tm[2]
			in.tm[5] += ty * in.tm[3]
			m[4] += ty * m[2]
			m[5] += ty * m[3]
			continue
		}
		tx := (w*g.tfs + adv) * g.th
		in.tm[4] += tx * in.tm[0]
		in.tm[5] += tx * in.tm[1]
		m[4] += tx * m[0]
		m[5] += tx * m[1]
	}
}
