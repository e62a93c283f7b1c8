#!/usr/bin/env python3
"""Checks heldout10.jsonl against the three books (Python 3, standard library only).

    python3 verify.py [--books DIR] [--jsonl FILE]

Text extraction: EPUB -> OPF spine order (from META-INF/container.xml), each
XHTML item with tags stripped (html.parser, entities unescaped), split into
sections at every <h1>..<h6>; DocBook admonition headings (Note, Tip, Caution,
Warning, Important) are folded into the section they belong to.
mobydick.txt -> Project Gutenberg header/footer stripped, sections = the
"CHAPTER n." headings (plus front matter and Epilogue).
Matching: English whitespace-normalised (case-sensitive for evidence);
Chinese with all whitespace removed (patterns likewise).
"""
import argparse
import json
import os
import posixpath
import re
import sys
import zipfile
from html.parser import HTMLParser

HERE = os.path.dirname(os.path.abspath(__file__))
DEFAULT_BOOKS = os.path.normpath(os.path.join(HERE, '../../../../shared/corpora/books'))
DEFAULT_JSONL = os.path.join(HERE, 'heldout10.jsonl')

BOOKS = {  # id -> (file, kind, chinese)
    'policy': ('policy.epub', 'epub', False),
    'mobydick': ('mobydick.txt', 'txt', False),
    'debmake-doc.zh-cn': ('debmake-doc.zh-cn.epub', 'epub', True),
}
PREFIX = {'policy': 'policy10', 'mobydick': 'moby10', 'debmake-doc.zh-cn': 'debmake10'}
KEYS = {'id', 'question', 'books', 'answerable', 'gold'}

# Distinctive answer terms (regex, case-insensitive). They must occur in the
# section holding the evidence; occurrences in other sections are reported as notes.
# Chinese patterns are matched on whitespace-free text.
UNIQUE = {
    'policy10-01': [r'synopsis line', r'under 80 characters'],
    'policy10-02': [r'parallel=n', r'parallel builds'],
    'policy10-03': [r'divided by 1024'],
    'policy10-04': [r'cause cron to ignore', r'Underscores \(_\)'],
    'policy10-05': [r'reboot-required\.pkgs'],
    'policy10-06': [r'merged-/usr'],
    'policy10-07': [r'neither be compressed', r'extractable by mechanical means'],
    'policy10-08': [r'dpkg-divert --package', r'smailwrapper'],
    'moby10-01': [r'three hundredth'],
    'moby10-02': [r'Tisbury'],
    'moby10-03': [r'polished bone', r"sperm whale's jaw"],
    'moby10-04': [r'DUODECIMO', r'OCTAVO'],
    'moby10-05': [r'Derick De Deer', r'Bremen oil'],
    'moby10-06': [r'fair game', r'soonest catch'],
    'moby10-07': [r'wooden head like a mallet', r'Boomer'],
    'moby10-08': [r'devious-cruising', r'another orphan'],
    'debmake10-01': [r'高度安全隐患'],
    'debmake10-02': [r'4096位的RSA'],
    'debmake10-03': [r'意外地构建了本土', r'而非正确的“_”字符'],
    'debmake10-04': [r'2\.3\.4-3\+b1'],
    'debmake10-05': [r'<!nocheck>'],
    'debmake10-06': [r'GNOME相关', r'不要费心从CDBS转换'],
    'debmake10-07': [r'-v1\.2'],
    'debmake10-08': [r'po/LINGUAS'],
}

# Key terms of the unanswerable questions: must occur nowhere in the book
# (case-insensitive; whitespace-normalised text, and for the Chinese book also
# whitespace-free text with the pattern's spaces removed).
ABSENT = {
    'policy10-u01': [r'dkms', r'kernel module', r'out-of-tree', r'linux-headers', r'module-assistant'],
    'policy10-u02': [r'git-buildpackage', r'\bgbp\b', r'pristine-tar', r'salsa'],
    'policy10-u03': [r'apparmor'],
    'policy10-u04': [r'flatpak', r'\bsnaps?\b', r'snapd', r'appimage'],
    'moby10-u01': [r'neptune', r'shellback', r'pollywog', r'polliwog', r'crossing the line', r'line-crossing'],
    'moby10-u02': [r'tonnage', r'burthen', r'tons burden'],
    'moby10-u03': [r'thanksgiving'],
    'moby10-u04': [r'huston', r'gregory peck', r'\bmovies?\b', r'cinema', r'hollywood'],
    'debmake10-u01': [r'cargo', r'\bcrates?\b', r'\brust\b'],
    'debmake10-u02': [r'dkms', r'内核', r'驱动程序'],
    'debmake10-u03': [r'docker', r'podman', r'容器'],
    'debmake10-u04': [r'flatpak', r'appimage', r'snapcraft', r'snapd'],
}

ADMONITIONS = {'Note', 'Tip', 'Caution', 'Warning', 'Important'}
BLOCK = {'p', 'div', 'li', 'br', 'tr', 'td', 'th', 'pre', 'dt', 'dd', 'section', 'blockquote',
         'table', 'ul', 'ol', 'dl', 'h1', 'h2', 'h3', 'h4', 'h5', 'h6'}


class _Extract(HTMLParser):
    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.sections, self.buf, self.head, self.in_h, self.skip = [], [], '', 0, 0

    def _flush(self):
        self.sections.append((self.head, ''.join(self.buf)))
        self.buf = []

    def handle_starttag(self, tag, attrs):
        if tag in ('script', 'style', 'head'):
            self.skip += 1
        if re.fullmatch(r'h[1-6]', tag):
            self._flush()
            self.head, self.in_h = '', self.in_h + 1
        if tag in BLOCK:
            self.buf.append(' ')

    def handle_endtag(self, tag):
        if tag in ('script', 'style', 'head'):
            self.skip = max(0, self.skip - 1)
        if re.fullmatch(r'h[1-6]', tag):
            self.in_h = max(0, self.in_h - 1)
        if tag in BLOCK:
            self.buf.append(' ')

    def handle_data(self, data):
        if self.skip:
            return
        self.buf.append(data)
        if self.in_h:
            self.head += data


def epub_sections(path):
    z = zipfile.ZipFile(path)
    container = z.read('META-INF/container.xml').decode('utf-8')
    opf = re.search(r'full-path="([^"]+)"', container).group(1)
    text = z.read(opf).decode('utf-8')
    base = posixpath.dirname(opf)
    manifest = {}
    for m in re.finditer(r'<item\b[^>]*>', text):
        tag = m.group(0)
        iid = re.search(r'\bid="([^"]+)"', tag).group(1)
        href = re.search(r'\bhref="([^"]+)"', tag).group(1)
        manifest[iid] = posixpath.normpath(posixpath.join(base, href)) if base else href
    out = []
    for m in re.finditer(r'<itemref\b[^>]*\bidref="([^"]+)"', text):
        name = manifest[m.group(1)]
        p = _Extract()
        p.feed(z.read(name).decode('utf-8'))
        p._flush()
        for head, body in p.sections:
            head = re.sub(r'\s+', ' ', head).strip()
            if head in ADMONITIONS and out and out[-1][0].startswith(name + ' | '):
                out[-1] = (out[-1][0], out[-1][1] + ' ' + body)
            else:
                out.append(('%s | %s' % (name, head or '(untitled)'), body))
    return out


def txt_sections(path):
    t = open(path, encoding='utf-8-sig').read().replace('\r\n', '\n')
    s, e = t.index('*** START OF'), t.index('*** END OF')
    t = t[t.index('\n', s) + 1:e]
    out = []
    for part in re.split(r'(?m)^(?=CHAPTER \d+\.|Epilogue\s*$)', t):
        head = part.split('\n', 1)[0].strip()
        label = head if re.match(r'CHAPTER \d+\.|Epilogue', head) else 'front matter'
        out.append(('mobydick.txt | ' + label, part))
    return out


def norm(s, chinese):
    return re.sub(r'\s+', '', s) if chinese else re.sub(r'\s+', ' ', s).strip()


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--books', default=DEFAULT_BOOKS)
    ap.add_argument('--jsonl', default=DEFAULT_JSONL)
    a = ap.parse_args()
    fails, notes = [], []

    def fail(msg):
        fails.append(msg)
        print('FAIL: ' + msg)

    def note(msg):
        notes.append(msg)
        print('note: ' + msg)

    books, spaced = {}, {}
    for bid, (fn, kind, zh) in BOOKS.items():
        path = os.path.join(a.books, fn)
        secs = epub_sections(path) if kind == 'epub' else txt_sections(path)
        books[bid] = [(label, norm(body, zh)) for label, body in secs]
        spaced[bid] = [(label, norm(body, False)) for label, body in secs]

    qs, seen = [], set()
    with open(a.jsonl, encoding='utf-8') as f:
        for n, line in enumerate(f, 1):
            if not line.strip():
                fail('line %d: empty line' % n)
                continue
            try:
                q = json.loads(line)
            except ValueError as e:
                fail('line %d: not JSON (%s)' % (n, e))
                continue
            if not isinstance(q, dict) or set(q) != KEYS:
                fail('line %d: keys %s, want %s' % (n, sorted(q) if isinstance(q, dict) else type(q), sorted(KEYS)))
                continue
            qs.append(q)

    comp = {b: [0, 0] for b in BOOKS}
    for q in qs:
        qid = q['id']
        if qid in seen:
            fail('%s: duplicate id' % qid)
        seen.add(qid)
        if not (isinstance(q['books'], list) and len(q['books']) == 1 and q['books'][0] in BOOKS):
            fail('%s: books must be one of %s, got %r' % (qid, sorted(BOOKS), q['books']))
            continue
        bid = q['books'][0]
        zh = BOOKS[bid][2]
        pre = PREFIX[bid]
        if not isinstance(q['question'], str) or len(q['question'].strip()) < 10:
            fail('%s: question missing or too short' % qid)
        elif zh and not re.search(r'[\u4e00-\u9fff]', q['question']):
            fail('%s: question on %s must be in Chinese' % (qid, bid))
        elif not zh and re.search(r'[\u4e00-\u9fff]', q['question']):
            fail('%s: question on %s must be in English' % (qid, bid))
        if not isinstance(q['answerable'], bool):
            fail('%s: answerable must be a boolean' % qid)
            continue
        secs = books[bid]
        if q['answerable']:
            if not re.fullmatch(re.escape(pre) + r'-0[1-8]', qid):
                fail('%s: answerable id must be %s-01..08' % (qid, pre))
            g = q['gold']
            if not isinstance(g, dict) or set(g) != {'evidence', 'answer'}:
                fail('%s: gold must have exactly evidence, answer (got %s)' % (qid, sorted(g) if isinstance(g, dict) else g))
                continue
            if not (isinstance(g['answer'], str) and g['answer'].strip()):
                fail('%s: empty answer' % qid)
            ev = g['evidence']
            if not (isinstance(ev, list) and len(ev) == 1 and isinstance(ev[0], str) and ev[0].strip()):
                fail('%s: evidence must be a list with one non-empty string' % qid)
                continue
            if len(ev[0]) > 320:
                note('%s: evidence is %d characters long' % (qid, len(ev[0])))
            e = norm(ev[0], zh)
            where = [i for i, (label, body) in enumerate(secs) if e in body]
            if not where:
                fail('%s: evidence not found in %s: %r' % (qid, bid, ev[0][:80]))
                continue
            comp[bid][0] += 1
            labels = [secs[i][0] for i in where]
            print('%s: evidence in %s' % (qid, '; '.join(labels)))
            if len(where) > 1:
                note('%s: evidence occurs in %d sections' % (qid, len(where)))
            pats = UNIQUE.get(qid)
            if not pats:
                fail('%s: no UNIQUE terms listed' % qid)
                continue
            for p in pats:
                pp = p.replace(' ', '') if zh else p
                rx = re.compile(pp, re.I)
                hit = [i for i, (label, body) in enumerate(secs) if rx.search(body)]
                if not any(i in hit for i in where):
                    fail('%s: UNIQUE term %r not in the evidence section' % (qid, p))
                    continue
                others = [secs[i][0] for i in hit if i not in where]
                if others:
                    note('%s: term %r occurs in %d sections; also in: %s' % (qid, p, len(hit), '; '.join(others)))
        else:
            if not re.fullmatch(re.escape(pre) + r'-u0[1-4]', qid):
                fail('%s: unanswerable id must be %s-u01..u04' % (qid, pre))
            if q['gold'] != {}:
                fail('%s: gold must be {} for an unanswerable question' % qid)
            pats = ABSENT.get(qid)
            if not pats:
                fail('%s: no ABSENT terms listed' % qid)
                continue
            comp[bid][1] += 1
            for p in pats:
                rx = re.compile(p, re.I)
                hit = [label for label, body in spaced[bid] if rx.search(body)]
                if zh:  # also on the whitespace-free text
                    rx2 = re.compile(p.replace(' ', ''), re.I)
                    hit += [label for label, body in secs if rx2.search(body)]
                if hit:
                    fail('%s: ABSENT term %r occurs in %s' % (qid, p, '; '.join(sorted(set(hit)))))
    for k in list(UNIQUE) + list(ABSENT):
        if k not in seen:
            fail('%s listed in UNIQUE/ABSENT but not in the jsonl' % k)
    for bid, (na, nu) in comp.items():
        if (na, nu) != (8, 4):
            fail('%s: composition %d answerable + %d unanswerable, want 8 + 4' % (bid, na, nu))
    if len(qs) != 36:
        fail('%d questions, want 36' % len(qs))
    if fails:
        print('%d FAIL line(s)' % len(fails))
        return 1
    print('ok: %d questions, %d answerable verified, %d unanswerable; %s (%d notes)' % (
        len(qs), sum(c[0] for c in comp.values()), sum(c[1] for c in comp.values()), ', '.join('%s %d+%d' % (b, c[0], c[1]) for b, c in comp.items()), len(notes)))
    return 0


if __name__ == '__main__':
    sys.exit(main())
