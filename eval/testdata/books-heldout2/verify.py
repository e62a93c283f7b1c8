#!/usr/bin/env python3
"""Verify heldout2.jsonl (beside this script) against the PDFs.

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
  * the composition per book;
  * no question, evidence sentence or (book, gold page) pair is shared with the
    first held-out set (../books-heldout/heldout.jsonl), if that file exists.

Usage: python3 verify.py [heldout2.jsonl] [books_dir]
"""
import json
import os
import re
import subprocess
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout2.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")

EXPECTED = {  # book -> (answerable, unanswerable)
    "WaldenFull": (12, 5),
    "hash_usenix": (5, 3),
    "dtc-paper": (3, 2),
}
MODES = [("default", []), ("raw", ["-raw"]), ("layout", ["-layout"])]

# distinctive answer terms: regex (case-insensitive, on whitespace-normalised
# text) that must be found on the gold page and on no other page
UNIQUE = {
    "walden2-01": [r"two years and two months"],
    "walden2-02": [r"pieces of limestone", r"dusted daily"],
    "walden2-03": [r"borrowed an axe", r"arrowy white pines"],
    "walden2-04": [r"four dollars and twenty-five cents"],
    "walden2-05": [r"occasion for neighborliness"],
    "walden2-06": [r"twenty-seven cents"],
    "walden2-07": [r"scalded my yeast", r"not to be an essential ingredient"],
    "walden2-08": [r"live deliberately"],
    "walden2-09": [r"twenty-eight years old"],
    "walden2-10": [r"fastened my door"],
    "walden2-11": [r"sixty-one and a half acres", r"mile and three quarters in circumference"],
    "walden2-12": [r"after it was plastered"],
    "hash2-01": [r"Esmond Pitt"],
    "hash2-02": [r"64K bytes"],
    "hash2-03": [r"extra file descriptor"],
    "hash2-04": [r"does not contract"],
    "hash2-05": [r"multi-user access"],
    "dtc2-01": [r"May 2005"],
    "dtc2-02": [r"total size of the blob"],
    "dtc2-03": [r"not use pointers"],
}

# key terms of unanswerable questions: none may occur in the book
# (case-insensitive regex on whitespace-normalised default + -raw text)
ABSENT = {
    # adjacent detail: who paid the tax / the jailer's name
    "walden2-u01": [r"\baunt\b", r"Sam(uel)? Staples", r"paid (my|the|his) tax", r"tax (was|had been) paid",
                    r"paid it", r"bail", r"jail(e|o)r (was|named)"],
    # how did X come about: the essay is never named or described
    "walden2-u02": [r"Civil Disobedience", r"Disobedience", r"Civil Government", r"\bessay", r"lectur(e|ed) on"],
    # yes/no about a claim never made (his first book is never mentioned)
    "walden2-u03": [r"Merrimack", r"A Week on", r"my first book", r"my book (about|on)", r"manuscript"],
    # adjacent detail: publication history
    "walden2-u04": [r"\bcopies\b", r"first edition", r"Ticknor", r"publisher", r"print run", r"\bsales\b"],
    # opinion/speculation: parks, beaches, preservation
    "walden2-u05": [r"(state|public|national) park", r"\bparks\b", r"public beach", r"bathing beach", r"swimmers", r"conservation"],
    # yes/no about a feature never mentioned
    "hash2-u01": [r"crypt", r"cipher", r"secur", r"protect"],
    # how did X come about: collaboration never described
    "hash2-u02": [r"collaborat", r"worked together", r"\bjoint", r"met (at|in|while)", r"\bteam(ed)? up"],
    # adjacent number: code size never given
    "hash2-u03": [r"lines of", r"\bLOC\b", r"kloc", r"source lines", r"\bsloc\b", r"code size"],
    # adjacent detail: kernel version never given
    "dtc2-u01": [r"\b2\.6", r"kernel version", r"\bv?2\.6\.\d", r"\b3\.\d+\b kernel", r"version 2\."],
    # opinion/advice: ACPI or other firmware tables never discussed
    "dtc2-u02": [r"ACPI", r"Advanced Configuration", r"UEFI", r"\bBIOS\b", r"\bEFI\b"],
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


def main():
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
    first = os.path.join(HERE, "../books-heldout/heldout.jsonl")
    if os.path.exists(first):
        old = [json.loads(l) for l in open(first, encoding="utf-8") if l.strip()]
        oldq = {norm(o["question"]).lower() for o in old}
        olde = {norm(e) for o in old if o["answerable"] for e in o["gold"]["evidence"]}
        oldp = {(p["book_id"], p["page"]) for o in old if o["answerable"] for p in o["gold"]["pages"]}
        oldids = {o["id"] for o in old}
        for l in lines:
            try:
                q = json.loads(l)
            except json.JSONDecodeError:
                continue
            if q.get("id") in oldids:
                errors.append(f"{q['id']}: id also used in the first held-out set")
            if norm(q.get("question", "")).lower() in oldq:
                errors.append(f"{q['id']}: question repeated from the first held-out set")
            if q.get("answerable"):
                for e in q["gold"].get("evidence", []):
                    if norm(e) in olde:
                        errors.append(f"{q['id']}: evidence repeated from the first held-out set")
                for p in q["gold"].get("pages", []):
                    if (p["book_id"], p["page"]) in oldp:
                        notes.append(f"{q['id']}: gold page {p['book_id']} p.{p['page']} is also a gold page "
                                     f"in the first held-out set (different fact)")
    else:
        notes.append("first held-out set not found; overlap check skipped")
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
