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
import importlib.util
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout2.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")

EXPECTED = {  # book -> (answerable, unanswerable)
    "WaldenFull": (12, 5),
    "hash_usenix": (5, 3),
    "dtc-paper": (3, 2),
}

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

def overlap(lines, errors, notes):
    """No id, question or evidence sentence of the first held-out set again."""
    norm = first.norm
    path = os.path.join(HERE, "../books-heldout/heldout.jsonl")
    if os.path.exists(path):
        old = [json.loads(l) for l in open(path, encoding="utf-8") if l.strip()]
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


# The checks themselves are the first set's (../books-heldout/verify.py),
# run over this set's file and tables.
_spec = importlib.util.spec_from_file_location("verify_heldout1", os.path.join(HERE, "../books-heldout/verify.py"))
first = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(first)
first.DATA, first.BOOKS, first.EXPECTED, first.UNIQUE, first.ABSENT = DATA, BOOKS, EXPECTED, UNIQUE, ABSENT

if __name__ == "__main__":
    sys.exit(first.main(extra=overlap))
