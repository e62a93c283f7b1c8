package ingest

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/xml"
	"errors"
	"io"
	"net/url"
	"path"
	"slices"
	"strings"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"
	"golang.org/x/net/html/charset"

	"github.com/citebook/citebook"
	"github.com/citebook/citebook/ingest/internal/parsing"
)

func parseEPUB(ctx context.Context, r io.ReaderAt, size int64, lim Limits) (doc *Document, err error) {
	defer parsing.Guard(citebook.FormatEPUB, &err)
	if size == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "empty file")
	}
	zr, err := zip.NewReader(r, size)
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "not a valid EPUB: the zip archive cannot be read")
	}
	a, err := openArchive(zr, lim)
	if err != nil {
		return nil, err
	}
	opfPath, err := a.rootfile()
	if err != nil {
		return nil, err
	}
	pkg, err := a.readOPF(opfPath)
	if err != nil {
		return nil, err
	}
	p := &epubParser{ctx: ctx, a: a, pkg: pkg, opfDir: path.Dir(opfPath), b: newBuilder(citebook.FormatEPUB)}
	return p.parse()
}

// archive is a validated view of the zip: entries by cleaned name, with the
// single top-level folder some broken packagers add stripped away.
type archive struct {
	lim    Limits // the archive sizes and ratio that keep a zip bomb out
	files  map[string]*zip.File
	lower  map[string]*zip.File
	prefix string
}

func openArchive(zr *zip.Reader, lim Limits) (*archive, error) {
	lim = lim.WithDefaults()
	a := &archive{lim: lim, files: map[string]*zip.File{}, lower: map[string]*zip.File{}}
	var total uint64
	for _, f := range zr.File {
		name := strings.ReplaceAll(f.Name, "\\", "/")
		if unsafeName(name) {
			return nil, citebook.Errorf(citebook.EINVALID, "EPUB contains an unsafe path %q", f.Name)
		}
		if strings.HasSuffix(name, "/") || f.FileInfo().IsDir() {
			continue
		}
		total += f.UncompressedSize64
		if total > uint64(lim.MaxArchiveBytes) {
			return nil, citebook.Errorf(citebook.EINVALID, "EPUB unpacks to more than %d MiB", lim.MaxArchiveBytes>>20)
		}
		if f.UncompressedSize64 > 1<<20 && f.UncompressedSize64 > uint64(lim.MaxRatio)*f.CompressedSize64 {
			return nil, citebook.Errorf(citebook.EINVALID, "EPUB entry %q is compressed more than %d:1; refusing a possible zip bomb", f.Name, lim.MaxRatio)
		}
		name = path.Clean(strings.TrimPrefix(name, "./"))
		a.files[name] = f
		a.lower[strings.ToLower(name)] = f
	}
	if len(a.files) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "EPUB archive has no files")
	}
	return a, nil
}

// unsafeName rejects absolute paths and parent references, which would
// escape the book if anything ever extracted it.
func unsafeName(name string) bool {
	if strings.HasPrefix(name, "/") || (len(name) > 1 && name[1] == ':') {
		return true
	}
	return slices.Contains(strings.Split(name, "/"), "..")
}

// find looks an entry up by its path inside the book, leniently: under the
// detected prefix, then as given, then ignoring case.
func (a *archive) find(name string) *zip.File {
	name = path.Clean(strings.TrimPrefix(name, "/"))
	for _, n := range []string{a.prefix + name, name} {
		if f := a.files[n]; f != nil {
			return f
		}
	}
	if f := a.lower[strings.ToLower(a.prefix+name)]; f != nil {
		return f
	}
	return a.lower[strings.ToLower(name)]
}

// read returns an entry's bytes, refusing entries larger than they claim or
// than the per-stream budget.
func (a *archive) read(name string) ([]byte, error) {
	f := a.find(name)
	if f == nil {
		return nil, citebook.Errorf(citebook.EINVALID, "EPUB is missing %s", name)
	}
	rc, err := f.Open()
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "EPUB entry %s cannot be opened", name)
	}
	defer rc.Close()
	// Declared sizes come from the attacker too: also bound the output by
	// the compressed size, so a forged header cannot hide a bomb.
	limit := min(f.UncompressedSize64, uint64(a.lim.MaxStreamBytes), f.CompressedSize64*uint64(a.lim.MaxRatio)+64<<10)
	data, err := io.ReadAll(io.LimitReader(rc, int64(limit)+1))
	if err != nil {
		return nil, citebook.Wrap(err, citebook.EINVALID, "EPUB entry %s is corrupt", name)
	}
	if uint64(len(data)) > limit {
		return nil, citebook.Errorf(citebook.EINVALID, "EPUB entry %s is larger than allowed or than it declares", name)
	}
	return data, nil
}

// rootfile finds the package document through META-INF/container.xml,
// detecting a single extra top-level folder, or falls back to the only .opf
// in the archive.
func (a *archive) rootfile() (string, error) {
	const container = "META-INF/container.xml"
	if a.find(container) == nil {
		var prefixes []string
		for name := range a.files {
			if strings.HasSuffix(strings.ToLower(name), "/"+strings.ToLower(container)) {
				prefixes = append(prefixes, name[:len(name)-len(container)])
			}
		}
		if len(prefixes) == 1 {
			a.prefix = prefixes[0]
		}
	}
	if a.find(container) == nil {
		var opfs []string
		for name := range a.files {
			if strings.HasSuffix(strings.ToLower(name), ".opf") {
				opfs = append(opfs, name)
			}
		}
		if len(opfs) == 1 {
			return opfs[0], nil
		}
		return "", citebook.Errorf(citebook.EINVALID, "not a valid EPUB: no META-INF/container.xml")
	}
	data, err := a.read(container)
	if err != nil {
		return "", err
	}
	var c struct {
		Rootfiles []struct {
			FullPath  string `xml:"full-path,attr"`
			MediaType string `xml:"media-type,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := decodeXML(data, &c, true); err != nil {
		return "", citebook.Wrap(err, citebook.EINVALID, "malformed META-INF/container.xml")
	}
	for _, rf := range c.Rootfiles {
		if rf.FullPath != "" && (rf.MediaType == "" || strings.Contains(rf.MediaType, "oebps-package")) {
			return rf.FullPath, nil
		}
	}
	return "", citebook.Errorf(citebook.EINVALID, "META-INF/container.xml names no package document")
}

// decodeXML unmarshals EPUB metadata, declaring HTML entities and other
// charsets that real books use; strict mode is for files whose damage we want
// to report rather than guess around.
func decodeXML(data []byte, v any, strict bool) error {
	d := xml.NewDecoder(bytes.NewReader(data))
	d.CharsetReader = charset.NewReaderLabel
	d.Entity = xml.HTMLEntity
	d.Strict = strict
	if !strict {
		d.AutoClose = xml.HTMLAutoClose
	}
	return d.Decode(v)
}

type opfPackage struct {
	Metadata struct {
		Titles    []string `xml:"title"`
		Languages []string `xml:"language"`
	} `xml:"metadata"`
	Manifest []struct {
		ID         string `xml:"id,attr"`
		Href       string `xml:"href,attr"`
		MediaType  string `xml:"media-type,attr"`
		Properties string `xml:"properties,attr"`
	} `xml:"manifest>item"`
	Spine struct {
		Toc   string `xml:"toc,attr"`
		Items []struct {
			IDRef  string `xml:"idref,attr"`
			Linear string `xml:"linear,attr"`
		} `xml:"itemref"`
	} `xml:"spine"`
	Guide []struct {
		Type string `xml:"type,attr"`
		Href string `xml:"href,attr"`
	} `xml:"guide>reference"`
}

func (a *archive) readOPF(name string) (*opfPackage, error) {
	data, err := a.read(name)
	if err != nil {
		return nil, err
	}
	var pkg opfPackage
	if err := decodeXML(data, &pkg, true); err != nil {
		pkg = opfPackage{}
		if err2 := decodeXML(data, &pkg, false); err2 != nil || len(pkg.Spine.Items) == 0 {
			return nil, citebook.Wrap(err, citebook.EINVALID, "malformed EPUB package document %s", name)
		}
	}
	if len(pkg.Spine.Items) == 0 {
		return nil, citebook.Errorf(citebook.EINVALID, "EPUB package document %s has an empty spine", name)
	}
	return &pkg, nil
}

// navEntry is one table-of-contents entry with its target in the archive.
type navEntry struct {
	title    string
	file     string // archive path of the target document
	frag     string // anchor inside it; "" for the document start
	children []*navEntry
}

type epubParser struct {
	ctx    context.Context
	a      *archive
	pkg    *opfPackage
	opfDir string
	b      *builder

	targets map[string][]string // "file#frag" -> heading path
	outline map[string]int      // "file#frag" -> index into doc.Outline
	pages   map[string]int      // "file#frag" -> print page (page-list), 1-based
	buf     strings.Builder     // text of the paragraph being read
	file    string              // document being read
	seen    map[string]bool     // anchors already met in this document
}

// resolve turns an href relative to the document at base into an archive
// path and fragment.
func resolve(baseDir, href string) (file, frag string) {
	href, frag, _ = strings.Cut(href, "#")
	if u, err := url.PathUnescape(href); err == nil {
		href = u
	}
	if href == "" {
		return "", frag
	}
	return path.Clean(path.Join(baseDir, href)), frag
}

func (p *epubParser) parse() (*Document, error) {
	doc := p.b.doc
	for _, t := range p.pkg.Metadata.Titles {
		if t = cleanTitle(t); t != "" {
			doc.Title = t
			break
		}
	}
	toc, pageList, ncxTitle := p.readTOC()
	p.pages = map[string]int{}
	for i, e := range pageList {
		p.pages[e.file+"#"+e.frag] = i + 1
		doc.Labels = append(doc.Labels, e.title)
	}
	doc.Pages = len(pageList)
	if doc.Title == "" {
		doc.Title = ncxTitle
	}
	// A single root that merely wraps the book under its title is not a
	// chapter: its children are.
	if len(toc) == 1 && len(toc[0].children) > 0 && (strings.EqualFold(toc[0].title, doc.Title) || strings.EqualFold(toc[0].title, ncxTitle)) {
		toc = toc[0].children
	}
	p.targets = map[string][]string{}
	p.outline = map[string]int{}
	var walk func(es []*navEntry, parent []string, level int)
	walk = func(es []*navEntry, parent []string, level int) {
		for _, e := range es {
			hp := append(slices.Clone(parent), e.title)
			doc.Outline = append(doc.Outline, OutlineEntry{Title: e.title, Level: level})
			if e.file != "" {
				p.targets[e.file+"#"+e.frag] = hp
				p.outline[e.file+"#"+e.frag] = len(doc.Outline) - 1
			}
			walk(e.children, hp, level+1)
		}
	}
	walk(toc, nil, 0)

	manifest := map[string]int{}
	for i, it := range p.pkg.Manifest {
		manifest[it.ID] = i
	}
	skip := map[string]bool{}
	for _, g := range p.pkg.Guide {
		if t := strings.ToLower(g.Type); t == "toc" || t == "cover" {
			f, _ := resolve(p.opfDir, g.Href)
			skip[f] = true
		}
	}
	for _, ref := range p.pkg.Spine.Items {
		if err := parsing.CheckCtx(p.ctx); err != nil {
			return nil, err
		}
		i, ok := manifest[ref.IDRef]
		if !ok || ref.Linear == "no" {
			continue
		}
		it := p.pkg.Manifest[i]
		file, _ := resolve(p.opfDir, it.Href)
		_, targeted := p.targets[file+"#"]
		if strings.Contains(it.Properties, "nav") || (skip[file] && !targeted) {
			continue
		}
		if mt := strings.ToLower(it.MediaType); mt != "" && !strings.Contains(mt, "html") {
			continue
		}
		if err := p.readDocument(file); err != nil {
			return nil, err
		}
	}
	lang := ""
	if len(p.pkg.Metadata.Languages) > 0 {
		lang = p.pkg.Metadata.Languages[0]
	}
	return p.b.finish(lang)
}

// readTOC returns the EPUB 3 nav tree, or the NCX tree for EPUB 2 books,
// the print page list when the book has one, and the NCX's document title.
func (p *epubParser) readTOC() (toc, pageList []*navEntry, title string) {
	for _, it := range p.pkg.Manifest {
		if slices.Contains(strings.Fields(it.Properties), "nav") {
			file, _ := resolve(p.opfDir, it.Href)
			if toc, pageList := p.readNav(file); len(toc) > 0 {
				return toc, pageList, ""
			}
		}
	}
	for _, it := range p.pkg.Manifest {
		if it.ID == p.pkg.Spine.Toc || it.MediaType == "application/x-dtbncx+xml" {
			file, _ := resolve(p.opfDir, it.Href)
			return p.readNCX(file)
		}
	}
	return nil, nil, ""
}

type ncxPoint struct {
	Label   string `xml:"navLabel>text"`
	Content struct {
		Src string `xml:"src,attr"`
	} `xml:"content"`
	Children []ncxPoint `xml:"navPoint"`
}

func (p *epubParser) readNCX(file string) (toc, pageList []*navEntry, title string) {
	data, err := p.a.read(file)
	if err != nil {
		return nil, nil, ""
	}
	var ncx struct {
		Title  string     `xml:"docTitle>text"`
		Points []ncxPoint `xml:"navMap>navPoint"`
		Pages  []ncxPoint `xml:"pageList>pageTarget"`
	}
	if decodeXML(data, &ncx, false) != nil {
		return nil, nil, ""
	}
	dir := path.Dir(file)
	var conv func([]ncxPoint) []*navEntry
	conv = func(ps []ncxPoint) []*navEntry {
		var out []*navEntry
		for _, pt := range ps {
			f, frag := resolve(dir, pt.Content.Src)
			e := &navEntry{title: cleanTitle(pt.Label), file: f, frag: frag, children: conv(pt.Children)}
			if e.title == "" && len(e.children) == 0 {
				continue
			}
			out = append(out, e)
		}
		return out
	}
	return conv(ncx.Points), conv(ncx.Pages), cleanTitle(ncx.Title)
}

func (p *epubParser) readNav(file string) (toc, pageList []*navEntry) {
	data, err := p.a.read(file)
	if err != nil {
		return nil, nil
	}
	root, err := html.Parse(bytes.NewReader(data))
	if err != nil {
		return nil, nil
	}
	navs := map[string]*html.Node{}
	var find func(*html.Node)
	find = func(n *html.Node) {
		if n.Type == html.ElementNode && n.DataAtom == atom.Nav {
			for _, kind := range strings.Fields(epubType(n)) {
				if navs[kind] == nil {
					navs[kind] = n
				}
			}
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			find(c)
		}
	}
	find(root)
	dir := path.Dir(file)
	var list func(*html.Node) []*navEntry
	list = func(ol *html.Node) []*navEntry {
		var out []*navEntry
		for li := ol.FirstChild; li != nil; li = li.NextSibling {
			if li.Type != html.ElementNode || li.DataAtom != atom.Li {
				continue
			}
			e := &navEntry{}
			for c := li.FirstChild; c != nil; c = c.NextSibling {
				if c.Type != html.ElementNode {
					continue
				}
				switch c.DataAtom {
				case atom.A, atom.Span:
					if e.title == "" {
						e.title = cleanTitle(nodeText(c))
						e.file, e.frag = resolve(dir, attr(c, "href"))
					}
				case atom.Ol, atom.Ul:
					e.children = append(e.children, list(c)...)
				}
			}
			if e.title != "" || len(e.children) > 0 {
				out = append(out, e)
			}
		}
		return out
	}
	lists := func(nav *html.Node) []*navEntry {
		if nav == nil {
			return nil
		}
		for c := nav.FirstChild; c != nil; c = c.NextSibling {
			if c.Type == html.ElementNode && (c.DataAtom == atom.Ol || c.DataAtom == atom.Ul) {
				return list(c)
			}
		}
		return nil
	}
	return lists(navs["toc"]), lists(navs["page-list"])
}

// epubType returns the epub:type attribute however the HTML parser named it.
func epubType(n *html.Node) string {
	for _, at := range n.Attr {
		if at.Key == "epub:type" || (at.Key == "type" && at.Namespace == "epub") {
			return at.Val
		}
	}
	return ""
}

func attr(n *html.Node, key string) string {
	for _, at := range n.Attr {
		if at.Key == key {
			return at.Val
		}
	}
	return ""
}

// nodeText concatenates the text under n.
func nodeText(n *html.Node) string {
	var sb strings.Builder
	var walk func(*html.Node)
	walk = func(n *html.Node) {
		if n.Type == html.TextNode {
			sb.WriteString(n.Data)
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			walk(c)
		}
	}
	walk(n)
	return sb.String()
}

// onlyLinks reports whether every visible character under n is the text of
// a link into the book, as in the contents lists many EPUBs repeat on their
// first page.
func onlyLinks(n *html.Node) bool {
	links := false
	var walk func(*html.Node, bool) bool
	walk = func(n *html.Node, inLink bool) bool {
		switch {
		case n.Type == html.TextNode:
			if strings.TrimSpace(n.Data) == "" {
				return true
			}
			links = links || inLink
			return inLink
		case n.Type == html.ElementNode && n.DataAtom == atom.A:
			href := attr(n, "href")
			inLink = href != "" && !strings.Contains(href, "://") && !strings.HasPrefix(href, "mailto:")
		}
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			if !walk(c, inLink) {
				return false
			}
		}
		return true
	}
	return walk(n, false) && links
}

// lineBreaks turns source line breaks inside HTML text into spaces; only
// <br> and block boundaries break lines in what a reader sees.
var lineBreaks = strings.NewReplacer("\n", " ", "\r", " ", "\t", " ")

// blockTags end a paragraph where they open and close.
var blockTags = map[atom.Atom]bool{
	atom.P: true, atom.Div: true, atom.Li: true, atom.Blockquote: true,
	atom.H1: true, atom.H2: true, atom.H3: true, atom.H4: true, atom.H5: true, atom.H6: true,
	atom.Td: true, atom.Th: true, atom.Tr: true, atom.Table: true, atom.Dt: true, atom.Dd: true,
	atom.Dl: true, atom.Ul: true, atom.Ol: true, atom.Section: true, atom.Article: true,
	atom.Aside: true, atom.Header: true, atom.Footer: true, atom.Figure: true, atom.Figcaption: true,
	atom.Caption: true, atom.Body: true, atom.Hr: true, atom.Address: true, atom.Main: true, atom.Nav: true,
}

// readDocument appends the paragraphs of one content document, switching
// heading path wherever an anchor the table of contents points at appears.
func (p *epubParser) readDocument(file string) error {
	data, err := p.a.read(file)
	if err != nil {
		var e *citebook.Error
		if errors.As(err, &e) && strings.HasPrefix(e.Message, "EPUB is missing") {
			return nil // a spine item that is not in the archive: skip it as readers do
		}
		return err
	}
	rd, err := charset.NewReader(bytes.NewReader(data), "text/html")
	if err != nil {
		rd = bytes.NewReader(data)
	}
	root, err := html.Parse(rd)
	if err != nil {
		return citebook.Wrap(err, citebook.EINVALID, "malformed EPUB content document %s", file)
	}
	p.file = file
	p.seen = map[string]bool{}
	p.anchor(file + "#")
	p.walk(root)
	p.flush()
	return nil
}

// anchor acts on a point the table of contents or the page list targets:
// a heading opens a new section, a print page starts at this point.
func (p *epubParser) anchor(key string) {
	if page, ok := p.pages[key]; ok {
		pending := strings.TrimSpace(p.buf.String()) != ""
		if pending {
			p.buf.WriteRune(pageMark)
		}
		p.b.pageBreak(page, pending)
	}
	if hp, ok := p.targets[key]; ok {
		p.flush()
		p.b.heading(hp)
		if i, ok := p.outline[key]; ok && p.b.page > 0 {
			p.b.doc.Outline[i].Page = p.b.page
		}
	}
}

func (p *epubParser) flush() {
	if p.buf.Len() > 0 {
		p.b.add(p.buf.String())
		p.buf.Reset()
	}
}

func (p *epubParser) walk(n *html.Node) {
	switch n.Type {
	case html.TextNode:
		p.buf.WriteString(lineBreaks.Replace(n.Data))
		return
	case html.ElementNode:
	default:
		for c := n.FirstChild; c != nil; c = c.NextSibling {
			p.walk(c)
		}
		return
	}
	switch n.DataAtom {
	case atom.Head, atom.Script, atom.Style, atom.Template, atom.Noscript, atom.Svg, atom.Math:
		return
	case atom.Br:
		p.buf.WriteByte('\n')
		return
	}
	for _, key := range []string{"id", "name"} {
		// The HTML parser clones an unclosed <a id=…/> into later
		// paragraphs, so only an anchor's first appearance counts.
		if id := attr(n, key); id != "" && !p.seen[id] {
			p.seen[id] = true
			p.anchor(p.file + "#" + id)
		}
	}
	if n.DataAtom == atom.Li && onlyLinks(n) {
		return // a table-of-contents line, not text of the book
	}
	if n.DataAtom == atom.Pre {
		p.flush()
		p.b.addPre(nodeText(n))
		return
	}
	block := blockTags[n.DataAtom]
	if block {
		p.flush()
	}
	for c := n.FirstChild; c != nil; c = c.NextSibling {
		p.walk(c)
	}
	if block {
		p.flush()
	}
}
