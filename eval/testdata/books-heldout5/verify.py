#!/usr/bin/env python3
"""Verify heldout5.jsonl (beside this script) against the PDFs.

Adapted from ../books-heldout4/verify.py (self-contained; it imports no other
set's checker). Checks:
  * every line parses as a JSON object with exactly the keys id, question,
    books, answerable, gold (citebook's jsonl eval format, as in books-dev);
  * ids are unique and follow the naming scheme (rintro5-NN / rintro5-uNN,
    debian5-..., lshort5-...); books are known; pages are in range; questions
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
    held-out sets ../books-heldout3/heldout3.jsonl and
    ../books-heldout4/heldout4.jsonl (all are errors).

Usage: python3 verify.py [heldout5.jsonl] [books_dir] [books-dev.jsonl] [heldout3.jsonl] [heldout4.jsonl]
Needs poppler-utils (pdftotext, pdfinfo). Prints "ok: ..." and exits 0 when
nothing failed; otherwise prints FAIL lines and exits 1.
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout5.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")
DEV = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../../shared/corpora/books-dev/books-dev.jsonl")
HELDOUT3 = sys.argv[4] if len(sys.argv) > 4 else os.path.join(HERE, "../books-heldout3/heldout3.jsonl")
HELDOUT4 = sys.argv[5] if len(sys.argv) > 5 else os.path.join(HERE, "../books-heldout4/heldout4.jsonl")

EXPECTED = {  # book -> (answerable, unanswerable)
    "R-intro": (8, 4),
    "debian-reference.en": (8, 4),
    "lshort-zh-cn": (8, 4),
}
PREFIX = {"R-intro": "rintro5-", "debian-reference.en": "debian5-", "lshort-zh-cn": "lshort5-"}
CHINESE_BOOKS = {"lshort-zh-cn"}
CJK = re.compile(r"[\u3000-\u303f\u3400-\u9fff\uff00-\uffef]")

# Distinctive answer terms: regexes that must match the gold page and no other
# page. Patterns with CJK characters are matched on the page text with ALL
# whitespace removed; ASCII patterns on the whitespace-normalised text (for
# lshort-zh-cn on both forms, a hit in either counts). Case-insensitive.
UNIQUE = {
    "rintro5-01": [r"character\(0\)", r"numeric\(0\)"],
    "rintro5-02": [r"unclass\(winter\)", r"remove temporarily the effects of class"],
    "rintro5-03": [r"mismatching length"],
    "rintro5-04": [r"grand mean term"],
    "rintro5-05": [r"stem and leaf", r"stem-and-leaf", r"stem\(eruptions\)"],
    "rintro5-06": [r"Rprofile\.site, the user profile"],
    "rintro5-07": [r"UseMethod"],
    "rintro5-08": [r"0\.66", r"0\.83", r"reduction factor"],
    "debian5-01": [r"matches the initial"],
    "debian5-02": [r"who-uploads"],
    "debian5-03": [r"Dial-on-Demand", r"takes long time"],
    "debian5-04": [r"systemd-cat"],
    "debian5-05": [r"sysrq-trigger"],
    "debian5-06": [r"Despite its name", r"tune2fs -c 50"],
    "debian5-07": [r"qemu-nbd", r"network block device protocol"],
    "debian5-08": [r"set -x", r"print all of commands executed"],
    "lshort5-01": [r"从3\.0版开始支持8-bit"],
    "lshort5-02": [r"摘要环境abstract默认只在"],
    "lshort5-03": [r"多余的空行"],
    "lshort5-04": [r"omicron"],
    "lshort5-05": [r"倒立的标点符号", r"更加靠近ASCII"],
    "lshort5-06": [r"章标题默认为“Bibliography"],
    "lshort5-07": [r"同时填充和描边"],
    "lshort5-08": [r"在自己编写的宏包中调用其它宏包"],
}

# Key terms (and synonyms) of unanswerable questions: none may occur anywhere
# in the book. Same matching rules as UNIQUE (CJK patterns on
# whitespace-stripped text, others on whitespace-normalised text,
# case-insensitive).
ABSENT = {
    # Shiny web apps / dashboards
    "rintro5-u01": [r"Shiny", r"dashboard", r"web app", r"flexdashboard", r"slider"],
    # k-means / hierarchical clustering
    "rintro5-u02": [r"k-?means", r"hclust", r"cluster", r"dendrogram"],
    # web scraping
    "rintro5-u03": [r"scrap", r"rvest", r"read_html", r"httr", r"download\.file", r"web ?page"],
    # opinion: Julia
    "rintro5-u04": [r"Julia"],
    # Home Assistant / smart home
    "debian5-u01": [r"Home Assistant", r"smart.?home", r"home automation", r"Zigbee", r"MQTT", r"openHAB"],
    # web-based admin console
    "debian5-u02": [r"Cockpit", r"Webmin", r"web console", r"web-based admin", r"admin panel", r"dashboard"],
    # Mastodon / fediverse
    "debian5-u03": [r"Mastodon", r"fediverse", r"ActivityPub", r"Pleroma", r"Misskey"],
    # opinion: Devuan
    "debian5-u04": [r"Devuan", r"antiX", r"MX Linux", r"init freedom"],
    # chess diagrams
    "lshort5-u01": [r"棋", r"chess", r"skak"],
    # calendars
    "lshort5-u02": [r"日历", r"月历", r"农历", r"台历", r"calendar"],
    # mail merge / batch certificates from a CSV list
    "lshort5-u03": [r"csv", r"名单", r"批量", r"证书", r"奖状", r"datatool", r"mail ?merge", r"邮件合并"],
    # opinion: VS Code vs Vim/Emacs
    "lshort5-u04": [r"VS ?Code", r"Visual Studio", r"LaTeX Workshop", r"插件", r"\bVim\b", r"Emacs", r"Sublime"],
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

    # overlap with books-dev, heldout3 and heldout4 (ids, questions, evidence, gold pages)
    for name, path in (("books-dev", DEV), ("heldout3", HELDOUT3), ("heldout4", HELDOUT4)):
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
