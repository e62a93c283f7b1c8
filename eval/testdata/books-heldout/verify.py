#!/usr/bin/env python3
"""Verify heldout.jsonl (beside this script) against the PDFs.

Checks:
  * every line parses as a JSON object with exactly the expected keys;
  * ids are unique; books are known; pages are in range;
  * answerable questions have one gold page, one evidence string and an answer;
    unanswerable ones have gold == {};
  * every evidence string occurs (whitespace-normalised) in the pdftotext text
    of its gold page.  The default mode (`pdftotext -f N -l N`) is tried first,
    then `-raw` and `-layout` (the two-column dtc-paper interleaves its columns
    in the default and -layout modes, so some of its sentences are contiguous
    only in -raw).  The mode that matched is reported;
  * the distinctive answer terms (table UNIQUE) occur on the gold page and on
    no other page of the book (default + -raw text);
  * the key terms of each unanswerable question (table ABSENT) do not occur
    anywhere in the book;
  * the composition per book.

Usage: python3 verify.py [heldout.jsonl] [books_dir]
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")

EXPECTED = {  # book -> (answerable, unanswerable)
    "WaldenFull": (12, 5),
    "hash_usenix": (7, 3),
    "dtc-paper": (5, 2),
}
MODES = [("default", []), ("raw", ["-raw"]), ("layout", ["-layout"])]

# distinctive answer terms: regex (case-insensitive, on whitespace-normalised
# text) that must be found on the gold page and on no other page
UNIQUE = {
    "walden-01": [r"quiet desperation"],
    "walden-02": [r"Independence Day", r"Fourth of July"],
    "walden-03": [r"one for solitude", r"three for society"],
    "walden-04": [r"seven miles"],
    "walden-05": [r"put into jail", r"did not pay a tax"],
    "walden-06": [r"ten dollars an acre"],
    "walden-07": [r"devour him raw"],
    "walden-08": [r"Polk"],
    "walden-09": [r"22d"],
    "walden-10": [r"Ingraham"],
    "walden-11": [r"Charleston", r"Madras", r"Calcutta"],
    "walden-12": [r"several more lives"],
    "hash-01": [r"compact disk representation", r"expected constant time"],
    "hash-02": [r"licensing"],
    "hash-03": [r"linearized radix trie is", r"2\*i\+1"],
    "hash-04": [r"probe interval", r"table full"],
    "hash-05": [r"top five bits", r"lower eleven"],
    "hash-06": [r"defaults to 256", r"default is eight"],
    "hash-07": [r"300 accounts"],
    "dtc-01": [r"CONFIG-dependent"],
    "dtc-02": [r"prom_init"],
    "dtc-03": [r"unit address"],
    "dtc-04": [r"/proc/device-tree", r"currently running kernel"],
    "dtc-05": [r"-f parameter"],
}

# key terms of unanswerable questions: none may occur in the book
ABSENT = {
    "walden-u01": [r"Emerson", r"Waldo", r"R\. ?W\. ?E\b"],
    "walden-u02": [r"my brother", r"brother John", r"John Thoreau"],
    "walden-u03": [r"\bpencils\b", r"graphite", r"plumbago", r"my father", r"family business"],
    "walden-u04": [r"tubercul", r"consumpti", r"my health", r"\billness", r"\bcough(ed|ing)\b"],
    "walden-u05": [r"Whelan", r"after I left", r"house was sold", r"sold my house", r"bought my house"],
    "hash-u01": [r"mmap", r"memory.mapped", r"map(ped)? (the|a) file"],
    "hash-u02": [r"endian", r"byte.?order", r"byte.?swap", r"portab", r"machine.independent"],
    "hash-u03": [r"compress", r"prefix", r"encod", r"squeez"],
    "dtc-u01": [r"\bARM\b", r"U-?Boot", r"AArch", r"Cortex"],
    "dtc-u02": [r"GPL", r"licen[cs]", r"General Public", r"open.source", r"free software", r"copyright"],
}

KEYS = {"id", "question", "books", "answerable", "gold"}
GOLD_KEYS = {"pages", "evidence", "answer"}

_cache = {}


def norm(s):
    return re.sub(r"\s+", " ", s).strip()


def npages(book):
    pdf = os.path.join(BOOKS, book + ".pdf")
    out = subprocess.run(["pdfinfo", pdf], capture_output=True, text=True, check=True).stdout
    return int(re.search(r"^Pages:\s+(\d+)", out, re.M).group(1))


def page_text(book, n, mode):
    key = (book, n, mode)
    if key not in _cache:
        opts = dict(MODES)[mode]
        pdf = os.path.join(BOOKS, book + ".pdf")
        out = subprocess.run(["pdftotext", "-enc", "UTF-8", *opts, "-f", str(n), "-l", str(n), pdf, "-"],
                             capture_output=True, text=True, check=True).stdout
        _cache[key] = norm(out)
    return _cache[key]


def search_text(book, n):
    return page_text(book, n, "default") + " \n " + page_text(book, n, "raw")


def main(extra=None):
    """Check DATA; extra(lines, errors, notes), when given, adds a set's own checks."""
    errors = []
    notes = []
    seen = set()
    counts = {b: [0, 0] for b in EXPECTED}
    sizes = {b: npages(b) for b in EXPECTED}
    with open(DATA, encoding="utf-8") as f:
        lines = [l for l in f.read().split("\n") if l.strip()]
    for ln, line in enumerate(lines, 1):
        try:
            q = json.loads(line)
        except json.JSONDecodeError as e:
            errors.append(f"line {ln}: bad JSON: {e}")
            continue
        if not isinstance(q, dict) or set(q) != KEYS:
            errors.append(f"line {ln}: keys {sorted(q) if isinstance(q, dict) else type(q)} != {sorted(KEYS)}")
            continue
        qid = q["id"]
        if qid in seen:
            errors.append(f"{qid}: duplicate id")
        seen.add(qid)
        if not isinstance(q["question"], str) or not q["question"].strip():
            errors.append(f"{qid}: empty question")
        if not (isinstance(q["books"], list) and len(q["books"]) == 1 and q["books"][0] in EXPECTED):
            errors.append(f"{qid}: books must be one of {sorted(EXPECTED)}")
            continue
        book = q["books"][0]
        if not isinstance(q["answerable"], bool):
            errors.append(f"{qid}: answerable must be a bool")
            continue
        gold = q["gold"]
        if not q["answerable"]:
            counts[book][1] += 1
            if gold != {}:
                errors.append(f"{qid}: unanswerable question must have gold == {{}}")
            if qid not in ABSENT:
                errors.append(f"{qid}: no ABSENT terms listed")
            for pat in ABSENT.get(qid, []):
                hits = [n for n in range(1, sizes[book] + 1) if re.search(pat, search_text(book, n), re.I)]
                if hits:
                    errors.append(f"{qid}: term {pat!r} occurs in {book} on pages {hits}")
            continue
        counts[book][0] += 1
        if not isinstance(gold, dict) or set(gold) != GOLD_KEYS:
            errors.append(f"{qid}: gold keys {sorted(gold) if isinstance(gold, dict) else gold} != {sorted(GOLD_KEYS)}")
            continue
        pages, ev, ans = gold["pages"], gold["evidence"], gold["answer"]
        if not (isinstance(pages, list) and len(pages) == 1 and isinstance(pages[0], dict)
                and set(pages[0]) == {"book_id", "page"}):
            errors.append(f"{qid}: gold.pages must be one {{book_id, page}} object")
            continue
        gp = pages[0]
        if gp["book_id"] != book:
            errors.append(f"{qid}: gold book_id {gp['book_id']} != {book}")
        page = gp["page"]
        if not (isinstance(page, int) and 1 <= page <= sizes[book]):
            errors.append(f"{qid}: page {page} out of range 1..{sizes[book]}")
            continue
        if not (isinstance(ans, str) and ans.strip()):
            errors.append(f"{qid}: empty answer")
        if not (isinstance(ev, list) and len(ev) == 1 and isinstance(ev[0], str) and ev[0].strip()):
            errors.append(f"{qid}: evidence must be a list with one non-empty string")
            continue
        e = norm(ev[0])
        matched = [m for m, _ in MODES if e in page_text(book, page, m)]
        if not matched:
            errors.append(f"{qid}: evidence not found on {book} p.{page}: {e[:80]!r}")
        elif "default" not in matched:
            notes.append(f"{qid}: evidence matches {book} p.{page} only in mode(s) {matched}")
        if qid not in UNIQUE:
            errors.append(f"{qid}: no UNIQUE terms listed")
        for pat in UNIQUE.get(qid, []):
            hits = [n for n in range(1, sizes[book] + 1) if re.search(pat, search_text(book, n), re.I)]
            if hits != [page]:
                errors.append(f"{qid}: answer term {pat!r} found on pages {hits}, expected only [{page}]")
    if extra:
        extra(lines, errors, notes)
    for b, (na, nu) in EXPECTED.items():
        if counts[b] != [na, nu]:
            errors.append(f"{b}: {counts[b][0]} answerable + {counts[b][1]} unanswerable, expected {na} + {nu}")
    for n in notes:
        print("note:", n)
    if errors:
        for e in errors:
            print("ERROR:", e)
        print(f"FAILED: {len(errors)} error(s)")
        return 1
    tot_a = sum(c[0] for c in counts.values())
    tot_u = sum(c[1] for c in counts.values())
    print(f"ok: {len(seen)} questions, {tot_a} answerable verified, {tot_u} unanswerable; "
          + ", ".join(f"{b} {c[0]}+{c[1]}" for b, c in counts.items()))
    return 0


if __name__ == "__main__":
    sys.exit(main())
