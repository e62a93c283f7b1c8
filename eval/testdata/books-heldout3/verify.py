#!/usr/bin/env python3
"""Verify heldout3.jsonl (beside this script) against the PDFs.

Adapted from ../books-heldout2/verify.py, but self-contained (it does not
import another set's checker). It is also the checker of the later sets
(../books-heldout4 …), whose verify.py run it through run_set with their
own UNIQUE, ABSENT and SIBLINGS.
Checks:
  * every line parses as a JSON object with exactly the keys id, question,
    books, answerable, gold (citebook's jsonl eval format, as in books-dev);
  * ids are unique and follow the naming scheme; books are known; pages are
    in range; questions on lshort-zh-cn are written in Chinese;
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
  * no id, question or evidence sentence is shared with books-dev
    (../../../../shared/corpora/books-dev/books-dev.jsonl) or any other set
    in SIBLINGS; gold pages that are also books-dev gold pages are reported
    as notes (as errors when PAGE_OVERLAP_IS_ERROR is set).

Usage: python3 verify.py [heldout3.jsonl] [books_dir] [books-dev.jsonl]
Needs poppler-utils (pdftotext, pdfinfo). Prints "ok: ..." and exits 0 when
nothing failed; otherwise prints FAIL lines and exits 1.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout3.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")
DEV = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../../shared/corpora/books-dev/books-dev.jsonl")

# Sets whose ids, questions and evidence this set must not repeat: (label,
# path) pairs read by the overlap check in main(). A gold page shared with
# one of them is a note here; sets that set PAGE_OVERLAP_IS_ERROR (heldout4,
# heldout5) make it an error and note each sibling found clean.
SIBLINGS = [("books-dev", DEV)]
PAGE_OVERLAP_IS_ERROR = False

EXPECTED = {  # book -> (answerable, unanswerable)
    "R-intro": (8, 4),
    "debian-reference.en": (8, 4),
    "lshort-zh-cn": (8, 4),
}
SHORT = {"R-intro": "rintro", "debian-reference.en": "debian", "lshort-zh-cn": "lshort"}  # a book's ids: rintro3-01 …
PREFIX = {book: f"{short}3-" for book, short in SHORT.items()}
CHINESE_BOOKS = {"lshort-zh-cn"}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

# Distinctive answer terms: regexes that must match the gold page and no other
# page. Patterns with CJK characters are matched on the page text with ALL
# whitespace removed; ASCII patterns on the whitespace-normalised text (for
# lshort-zh-cn on both forms, a hit in either counts). Case-insensitive.
UNIQUE = {
    "rintro3-01": [r"\.Last\.value"],
    "rintro3-02": [r"x == NA"],
    "rintro3-03": [r"diag\(k\)", r"identity matrix"],
    "rintro3-04": [r"lexical scope", r"cube\(2\)"],
    "rintro3-05": [r"first level is taken as failure"],
    "rintro3-06": [r"no outer margins"],
    "rintro3-07": [r"Sys\.which"],
    "rintro3-08": [r"two-character sequences starting with ESC"],
    "debian3-01": [r"pertinent commands", r"\breadlink"],
    "debian3-02": [r"suspect interference", r"newly created user account"],
    "debian3-03": [r"6 to 8 characters"],
    "debian3-04": [r"XDMCP", r"remote TCP/IP to the X server"],
    "debian3-05": [r"buffers/cache"],
    "debian3-06": [r"4GiB - 1 byte", r"2\^32 - 1"],
    "debian3-07": [r"tag string with spaces"],
    "debian3-08": [r"dbgsym"],
    "lshort3-01": [r"0–4", r"缺省为4"],
    "lshort3-02": [r"最多嵌套四层"],
    "lshort3-03": [r"\\\\\[0pt\]", r"首个单元格不能直接使用中括号"],
    "lshort3-04": [r"伪粗体"],
    "lshort3-05": [r"转为大写"],
    "lshort3-06": [r"缺省为cm"],
    "lshort3-07": [r"默认为2（subsection一级）"],
    "lshort3-08": [r"mktexlsr", r"文件名数据库"],
}

# Key terms (and synonyms) of unanswerable questions: none may occur anywhere
# in the book. Same matching rules as UNIQUE (CJK patterns on
# whitespace-stripped text, others on whitespace-normalised text,
# case-insensitive).
ABSENT = {
    # read an Excel workbook
    "rintro3-u01": [r"Excel", r"xlsx", r"\bxls\b", r"readxl", r"openxlsx", r"workbook"],
    # ggplot2 bar chart (base barplot is not covered either)
    "rintro3-u02": [r"ggplot", r"geom_", r"\baes\(", r"barplot", r"bar ?chart"],
    # JSON from a web API
    "rintro3-u03": [r"\bJSON", r"jsonlite", r"rjson"],
    # opinion: tidyverse vs base R
    "rintro3-u04": [r"tidyverse", r"dplyr", r"tibble", r"magrittr", r"%>%"],
    # Let's Encrypt / certbot
    "debian3-u01": [r"certbot", r"Let.s Encrypt", r"letsencrypt", r"\bACME\b", r"certificate"],
    # Podman, rootless containers
    "debian3-u02": [r"podman", r"rootless"],
    # Nextcloud
    "debian3-u03": [r"Nextcloud", r"ownCloud"],
    # opinion: gaming PC, Arch Linux / SteamOS
    "debian3-u04": [r"Arch Linux", r"\bSteam", r"gaming", r"\bpacman\b", r"Manjaro"],
    # music scores
    "lshort3-u01": [r"乐谱", r"五线谱", r"音乐", r"musix", r"lilypond", r"\bmusic"],
    # barcodes
    "lshort3-u02": [r"条形码", r"条码", r"barcode", r"EAN-?13"],
    # Gantt charts
    "lshort3-u03": [r"甘特", r"gantt", r"进度", r"时间线", r"timeline"],
    # opinion: AI-written LaTeX
    "lshort3-u04": [r"ChatGPT", r"\bGPT", r"人工智能", r"大模型", r"语言模型", r"\bAI\b", r"Copilot"],
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

    # overlap with books-dev and the sibling held-out sets in SIBLINGS (ids,
    # questions, evidence; gold pages are notes or, with PAGE_OVERLAP_IS_ERROR,
    # errors, and then a clean sibling gets a "no overlap" note)
    for name, path in SIBLINGS:
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
                        msg = f"{q['id']}: gold page {p['book_id']} p.{p['page']} is also a {name} gold page"
                        (errors if PAGE_OVERLAP_IS_ERROR else notes).append(msg)
        if PAGE_OVERLAP_IS_ERROR and len(errors) == before:
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


# The held-out sets a later set is checked against, by name (run_set).
SETS = {
    "books-dev": "../../../../shared/corpora/books-dev/books-dev.jsonl",
    "heldout": "../books-heldout/heldout.jsonl",
    **{f"heldout{n}": f"../books-heldout{n}/heldout{n}.jsonl" for n in range(2, 10)},
}


def run_set(here, n, unique, absent, siblings):
    """Run these checks over the later set N (books-heldout4 … call it from
    their verify.py with their own UNIQUE and ABSENT): its file heldoutN.jsonl
    beside its script in HERE (or argv[1]), the books in argv[2], books-dev in
    argv[3]; composed as this set (EXPECTED), its ids rintroN-…, debianN-…,
    lshortN-…; no id, question, evidence sentence or gold page shared with the
    sets named in SIBLINGS (keys of SETS)."""
    global DATA, BOOKS, PREFIX, UNIQUE, ABSENT, SIBLINGS, PAGE_OVERLAP_IS_ERROR
    DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(here, f"heldout{n}.jsonl")
    BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(here, "../../../../shared/corpora/books")
    dev = sys.argv[3] if len(sys.argv) > 3 else os.path.join(here, SETS["books-dev"])
    PREFIX = {book: f"{short}{n}-" for book, short in SHORT.items()}
    UNIQUE, ABSENT = unique, absent
    SIBLINGS = [(s, dev if s == "books-dev" else os.path.join(here, SETS[s])) for s in siblings]
    PAGE_OVERLAP_IS_ERROR = True
    return main()


if __name__ == "__main__":
    sys.exit(main())
