#!/usr/bin/env python3
"""Verify heldout4.jsonl (beside this script) against the PDFs.

Adapted from ../books-heldout3/verify.py (self-contained; it imports no other
set's checker). Checks:
  * every line parses as a JSON object with exactly the keys id, question,
    books, answerable, gold (citebook's jsonl eval format, as in books-dev);
  * ids are unique and follow the naming scheme (rintro4-NN / rintro4-uNN,
    debian4-..., lshort4-...); books are known; pages are in range; questions
    on lshort-zh-cn are written in Chinese;
  * answerable questions have exactly one gold page {book_id, page}, one
    evidence string and a non-empty answer; unanswerable ones have gold == {};
  * every evidence string occurs in the `pdftotext -enc UTF-8 -f N -l N` text
    of its gold page (whitespace-normalised; for Chinese text or text with CJK
    characters, all whitespace removed);
  * the distinctive answer terms (table UNIQUE) occur on the gold page and on
    no other page of the book (default and -raw text of every page);
  * the key terms of each unanswerable question (table ABSENT) occur nowhere
    in the book (default and -raw text of every page);
  * the composition per book (EXPECTED);
  * no id, question, evidence sentence or gold page is shared with books-dev
    (../../../../shared/corpora/books-dev/books-dev.jsonl) or with the sibling
    held-out set ../books-heldout3/heldout3.jsonl (all are errors).

Usage: python3 verify.py [heldout4.jsonl] [books_dir] [books-dev.jsonl] [heldout3.jsonl]
Needs poppler-utils (pdftotext, pdfinfo). Prints "ok: ..." and exits 0 when
nothing failed; otherwise prints FAIL lines and exits 1.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout4.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")
DEV = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../../shared/corpora/books-dev/books-dev.jsonl")
HELDOUT3 = sys.argv[4] if len(sys.argv) > 4 else os.path.join(HERE, "../books-heldout3/heldout3.jsonl")

EXPECTED = {  # book -> (answerable, unanswerable)
    "R-intro": (8, 4),
    "debian-reference.en": (8, 4),
    "lshort-zh-cn": (8, 4),
}
PREFIX = {"R-intro": "rintro4-", "debian-reference.en": "debian4-", "lshort-zh-cn": "lshort4-"}
CHINESE_BOOKS = {"lshort-zh-cn"}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

# Distinctive answer terms: regexes that must match the gold page and no other
# page. Patterns with CJK characters are matched on the page text with ALL
# whitespace removed; ASCII patterns on the whitespace-normalised text (for
# lshort-zh-cn on both forms, a hit in either counts). Case-insensitive.
UNIQUE = {
    "rintro4-01": [r"sqrt\(-17\+0i\)"],
    "rintro4-02": [r"stdError", r"sd\(\) is something different"],
    "rintro4-03": [r"matter of style", r"vec <- c\(X\)"],
    "rintro4-04": [r"fix\(xold\)", r"spreadsheet-like"],
    "rintro4-05": [r"distribution theory is not valid"],
    "rintro4-06": [r"highly-resistant", r"Robust regression\. There"],
    "rintro4-07": [r"rggobi", r"package rgl", r"rotating point clouds"],
    "rintro4-08": [r"R_HISTFILE"],
    "debian4-01": [r"ctime is not file creation time", r"ls -lc"],
    "debian4-02": [r"Shift-Ctrl-C"],
    "debian4-03": [r"purge all remaining configuration files", r"~c’"],
    "debian4-04": [r"\.ssh/config", r"User foo-guest"],
    "debian4-05": [r"etckeeper"],
    "debian4-06": [r"xterm-r6"],
    "debian4-07": [r"shred -v -n 1", r"-t random"],
    "debian4-08": [r"shellcheck", r"lint tool for shell scripts"],
    "lshort4-01": [r"textbackslash", r"输入反斜线"],
    "lshort4-02": [r"带星号的命令定义带上下限的算符"],
    "lshort4-03": [r"不会因断行而消失"],
    "lshort4-04": [r"不要带\.bst扩展名"],
    "lshort4-05": [r"前者还为URL加上了超链接"],
    "lshort4-06": [r"/\.style"],
    "lshort4-07": [r"未给出时返回-NoValue-标记"],
    "lshort4-08": [r"09-texlive", r"fc-cache", r"texlive-fontconfig"],
}

# Key terms (and synonyms) of unanswerable questions: none may occur anywhere
# in the book. Same matching rules as UNIQUE (CJK patterns on
# whitespace-stripped text, others on whitespace-normalised text,
# case-insensitive).
ABSENT = {
    # SQL databases from R
    "rintro4-u01": [r"\bSQL", r"\bDBI\b", r"SQLite", r"Postgre", r"MySQL", r"ODBC"],
    # principal component analysis
    "rintro4-u02": [r"principal comp", r"prcomp", r"princomp", r"\bPCA\b", r"biplot"],
    # unit testing
    "rintro4-u03": [r"testthat", r"test_that", r"unit test", r"RUnit", r"expect_equal"],
    # opinion: IDEs
    "rintro4-u04": [r"RStudio", r"Positron", r"VS ?Code", r"Visual Studio", r"integrated development"],
    # Prometheus / Grafana monitoring
    "debian4-u01": [r"Prometheus", r"Grafana", r"node.exporter", r"Zabbix", r"Nagios", r"Munin", r"collectd"],
    # Jellyfin media server
    "debian4-u02": [r"Jellyfin", r"\bEmby\b", r"\bPlex\b", r"\bKodi\b", r"DLNA", r"UPnP"],
    # self-hosted git forge
    "debian4-u03": [r"Gitea", r"GitLab", r"Forgejo", r"\bGogs\b", r"\bcgit\b", r"gitweb"],
    # opinion: NixOS / immutable distributions
    "debian4-u04": [r"NixOS", r"\bNix\b", r"Silverblue", r"immutable", r"\bGuix\b"],
    # conference posters
    "lshort4-u01": [r"海报", r"poster", r"tikzposter", r"baposter"],
    # exam papers
    "lshort4-u02": [r"试卷", r"考试", r"选择题", r"填空题", r"答案", r"\bexam\b"],
    # vertical (traditional) Chinese typesetting
    "lshort4-u03": [r"直排", r"竖版", r"纵排", r"古籍", r"从右.左", r"tategaki"],
    # opinion: Markdown + Pandoc vs LaTeX
    "lshort4-u04": [r"Markdown", r"Pandoc", r"Quarto", r"学位论文"],
}

_cache = {}


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True).stdout.decode("utf-8", "replace")


def npages(pdf):
    key = ("n", pdf)
    if key not in _cache:
        m = re.search(r"^Pages:\s+(\d+)", run(["pdfinfo", pdf]), re.M)
        _cache[key] = int(m.group(1))
    return _cache[key]


def page_text(pdf, n, mode="default"):
    key = (mode, pdf, n)
    if key not in _cache:
        extra = ["-raw"] if mode == "raw" else []
        _cache[key] = run(["pdftotext", "-enc", "UTF-8"] + extra + ["-f", str(n), "-l", str(n), pdf, "-"])
    return _cache[key]


def norm(s):
    return " ".join(s.split())


def strip_ws(s):
    return "".join(s.split())


def occurs(evidence, text, book):
    if book in CHINESE_BOOKS or CJK.search(evidence):
        return strip_ws(evidence) in strip_ws(text)
    return norm(evidence) in norm(text)


def matches(pattern, text, book):
    if CJK.search(pattern):
        return re.search(pattern, strip_ws(text), re.I) is not None
    if book in CHINESE_BOOKS:
        # ASCII pattern on the Chinese book: a hit in either form counts
        # (pdftotext may split Latin words; word boundaries need the spaces)
        return (re.search(pattern, norm(text), re.I) is not None
                or re.search(pattern, strip_ws(text), re.I) is not None)
    return re.search(pattern, norm(text), re.I) is not None


def pages_matching(pattern, pdf, book):
    hits = []
    for n in range(1, npages(pdf) + 1):
        if any(matches(pattern, page_text(pdf, n, m), book) for m in ("default", "raw")):
            hits.append(n)
    return hits


def main():
    errors, notes = [], []
    with open(DATA, encoding="utf-8") as f:
        raw_lines = [l for l in f.read().split("\n") if l.strip()]
    qs = []
    seen = set()
    comp = {b: [0, 0] for b in EXPECTED}
    for i, line in enumerate(raw_lines, 1):
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"line {i}: not JSON: {e}")
            continue
        if not isinstance(q, dict) or set(q) != {"id", "question", "books", "answerable", "gold"}:
            errors.append(f"line {i}: keys must be exactly id, question, books, answerable, gold")
            continue
        qid = q["id"]
        if not isinstance(qid, str) or not qid or qid in seen:
            errors.append(f"line {i}: bad or duplicate id {qid!r}")
            continue
        seen.add(qid)
        if not isinstance(q["question"], str) or not q["question"].strip():
            errors.append(f"{qid}: empty question")
        books = q["books"]
        if not (isinstance(books, list) and len(books) == 1 and books[0] in EXPECTED):
            errors.append(f"{qid}: books must be one of {sorted(EXPECTED)}")
            continue
        book = books[0]
        pdf = os.path.join(BOOKS, book + ".pdf")
        if not os.path.isfile(pdf):
            errors.append(f"{qid}: missing {pdf}")
            continue
        if not qid.startswith(PREFIX[book]):
            errors.append(f"{qid}: id should start with {PREFIX[book]}")
        if book in CHINESE_BOOKS and not CJK.search(q["question"]):
            errors.append(f"{qid}: question on a Chinese book is not in Chinese")
        if not isinstance(q["answerable"], bool):
            errors.append(f"{qid}: answerable must be a boolean")
            continue
        qs.append(q)
        gold = q["gold"]
        if not q["answerable"]:
            comp[book][1] += 1
            if not re.fullmatch(re.escape(PREFIX[book]) + r"u\d\d", qid):
                errors.append(f"{qid}: unanswerable ids are <prefix>uNN")
            if gold != {}:
                errors.append(f"{qid}: unanswerable question must have gold {{}}")
            if not ABSENT.get(qid):
                errors.append(f"{qid}: no ABSENT terms listed")
            for pat in ABSENT.get(qid, []):
                hits = pages_matching(pat, pdf, book)
                if hits:
                    errors.append(f"{qid}: key term {pat!r} occurs in {book} on pages {hits[:10]}")
            continue
        comp[book][0] += 1
        if not re.fullmatch(re.escape(PREFIX[book]) + r"\d\d", qid):
            errors.append(f"{qid}: answerable ids are <prefix>NN")
        if not isinstance(gold, dict) or set(gold) != {"pages", "evidence", "answer"}:
            errors.append(f"{qid}: gold must have exactly pages, evidence, answer")
            continue
        if not isinstance(gold["answer"], str) or not gold["answer"].strip():
            errors.append(f"{qid}: empty answer")
        pages, evid = gold["pages"], gold["evidence"]
        if not (isinstance(pages, list) and len(pages) == 1 and isinstance(pages[0], dict)
                and set(pages[0]) == {"book_id", "page"}):
            errors.append(f"{qid}: gold.pages must be exactly one {{book_id, page}}")
            continue
        if not (isinstance(evid, list) and len(evid) == 1 and isinstance(evid[0], str) and evid[0].strip()):
            errors.append(f"{qid}: gold.evidence must be exactly one sentence")
            continue
        pb, pn = pages[0]["book_id"], pages[0]["page"]
        if pb != book:
            errors.append(f"{qid}: gold book {pb!r} is not the question's book")
            continue
        if not isinstance(pn, int) or isinstance(pn, bool) or not 1 <= pn <= npages(pdf):
            errors.append(f"{qid}: page {pn!r} out of range 1..{npages(pdf)}")
            continue
        if not occurs(evid[0], page_text(pdf, pn), book):
            errors.append(f"{qid}: evidence not on {book} p.{pn}: {evid[0][:60]!r}")
        if not UNIQUE.get(qid):
            errors.append(f"{qid}: no UNIQUE terms listed")
        for pat in UNIQUE.get(qid, []):
            hits = pages_matching(pat, pdf, book)
            if pn not in hits:
                errors.append(f"{qid}: distinctive term {pat!r} not found on gold page {pn}")
            others = [h for h in hits if h != pn]
            if others:
                errors.append(f"{qid}: distinctive term {pat!r} also on pages {others}")

    for b, (na, nu) in EXPECTED.items():
        if comp[b] != [na, nu]:
            errors.append(f"composition {b}: {comp[b][0]}+{comp[b][1]}, expected {na}+{nu}")

    # overlap with books-dev and heldout3 (ids, questions, evidence, gold pages)
    for name, path in (("books-dev", DEV), ("heldout3", HELDOUT3)):
        if not os.path.exists(path):
            errors.append(f"{name} not found at {path}; overlap check not run")
            continue
        other = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
        before = len(errors)
        oids = {d["id"] for d in other}
        oq = {strip_ws(d["question"]).lower() for d in other}
        oe = {strip_ws(e) for d in other if d["answerable"] for e in d["gold"]["evidence"]}
        op = {(p["book_id"], p["page"]) for d in other if d["answerable"] for p in d["gold"]["pages"]}
        for q in qs:
            if q["id"] in oids:
                errors.append(f"{q['id']}: id also used in {name}")
            if strip_ws(q["question"]).lower() in oq:
                errors.append(f"{q['id']}: question repeated from {name}")
            if q["answerable"] and isinstance(q["gold"], dict):
                for e in q["gold"].get("evidence", []):
                    if strip_ws(e) in oe:
                        errors.append(f"{q['id']}: evidence repeated from {name}")
                for p in q["gold"].get("pages", []):
                    if (p.get("book_id"), p.get("page")) in op:
                        errors.append(f"{q['id']}: gold page {p['book_id']} p.{p['page']} is also a {name} gold page")
        if len(errors) == before:
            notes.append(f"no overlap with {name} ({len(other)} questions)")

    for n in notes:
        print("note:", n)
    if errors:
        for e in errors:
            print("FAIL", e)
        print(f"FAILED: {len(errors)} problem(s)")
        return 1
    na = sum(c[0] for c in comp.values())
    nu = sum(c[1] for c in comp.values())
    print(f"ok: {na + nu} questions, {na} answerable verified, {nu} unanswerable; "
          + ", ".join(f"{b} {c[0]}+{c[1]}" for b, c in comp.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
