#!/usr/bin/env python3
"""Verify heldout8.jsonl (beside this script) against the PDFs.

Only this set's tables live here; the checks are ../books-heldout3/verify.py's
(its main(), run over this set's file and tables, with the sibling sets in
SIBLINGS and PAGE_OVERLAP_IS_ERROR), exactly as ../books-heldout4/verify.py,
../books-heldout5/verify.py, ../books-heldout6/verify.py and
../books-heldout7/verify.py do it. Checks:
  * every line parses as a JSON object with exactly the keys id, question,
    books, answerable, gold (citebook's jsonl eval format, as in books-dev);
  * ids are unique and follow the naming scheme (rintro8-NN / rintro8-uNN,
    debian8-..., lshort8-...); books are known; pages are in range; questions
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
    held-out sets heldout, heldout2, heldout3, heldout4, heldout5, heldout6
    and heldout7 (all are errors; heldout and heldout2 are on other books, so
    they can only clash on ids or question/evidence text).

Usage: python3 verify.py [heldout8.jsonl] [books_dir] [books-dev.jsonl]
Needs poppler-utils (pdftotext, pdfinfo). Prints "ok: ..." and exits 0 when
nothing failed; otherwise prints FAIL lines and exits 1.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout8.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")
DEV = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../../shared/corpora/books-dev/books-dev.jsonl")
HELDOUT1 = os.path.join(HERE, "../books-heldout/heldout.jsonl")
HELDOUT2 = os.path.join(HERE, "../books-heldout2/heldout2.jsonl")
HELDOUT3 = os.path.join(HERE, "../books-heldout3/heldout3.jsonl")
HELDOUT4 = os.path.join(HERE, "../books-heldout4/heldout4.jsonl")
HELDOUT5 = os.path.join(HERE, "../books-heldout5/heldout5.jsonl")
HELDOUT6 = os.path.join(HERE, "../books-heldout6/heldout6.jsonl")
HELDOUT7 = os.path.join(HERE, "../books-heldout7/heldout7.jsonl")

EXPECTED = {  # book -> (answerable, unanswerable)
    "R-intro": (8, 4),
    "debian-reference.en": (8, 4),
    "lshort-zh-cn": (8, 4),
}
PREFIX = {"R-intro": "rintro8-", "debian-reference.en": "debian8-", "lshort-zh-cn": "lshort8-"}

# Distinctive answer terms: regexes that must match the gold page and no other
# page. Patterns with CJK characters are matched on the page text with ALL
# whitespace removed; ASCII patterns on the whitespace-normalised text (for
# lshort-zh-cn on both forms, a hit in either counts). Case-insensitive.
UNIQUE = {
    "rintro8-01": [r'help\("\[\["\)', r"syntactic meaning"],
    "rintro8-02": [r"Negative indices are not allowed in index matrices",
                   r"rows in the index matrix containing a zero are ignored"],
    "rintro8-03": [r"one fewer item"],
    "rintro8-04": [r"integrated.{0,3} hazard", r"log\.p = TRUE"],
    "rintro8-05": [r"consisting of empty strings"],
    "rintro8-06": [r"much less efficiently", r"gaussian family is not automatically provided"],
    "rintro8-07": [r"50% margin", r"mar or mai are set explicitly"],
    "rintro8-08": [r'scan\("stdin"', r"stdin\(\) refers to the script file"],
    "debian8-01": [r"kcore", r"don.t worry about its size"],
    "debian8-02": [r"a=sid"],
    "debian8-03": [r"pam_wheel", r"restrict the ability to use su"],
    "debian8-04": [r"automatic network configuration tools for servers", r"mobile desktop"],
    "debian8-05": [r"every 2 seconds", r"watch w\b"],
    "debian8-06": [r"\bDKMS", r"out-of-tree"],
    "debian8-07": [r"non-UTF-8 found", r"first non-UTF-8 character"],
    "debian8-08": [r"checkinstall", r"make uninstall"],
    "lshort8-01": [r"生成的引用编号不正确"],
    "lshort8-02": [r"与原图片等大的方框"],
    "lshort8-03": [r"不允许断行"],
    "lshort8-04": [r"no-math", r"覆盖数学字体"],
    "lshort8-05": [r"未被引用", r"\\nocite\{\*\}"],
    "lshort8-06": [r"19种", r"dvipsnames"],
    "lshort8-07": [r"CTEX套装"],
    "lshort8-08": [r"mhchem", r"化学"],
}

# Key terms (and synonyms) of unanswerable questions: none may occur anywhere
# in the book. Same matching rules as UNIQUE (CJK patterns on
# whitespace-stripped text, others on whitespace-normalised text,
# case-insensitive).
ABSENT = {
    # neural networks with keras / torch
    "rintro8-u01": [r"neural", r"keras", r"tensorflow", r"torch", r"deep learning", r"machine learning"],
    # multiple imputation of missing values (mice)
    "rintro8-u02": [r"imput", r"\bmice\b", r"fill in missing"],
    # power analysis / sample size for a t-test
    "rintro8-u03": [r"power analysis", r"power\.t\.test", r"statistical power", r"effect size", r"\bpwr\b",
                    r"\bpower of"],
    # opinion: still worth learning R now that AI assistants write code
    "rintro8-u04": [r"ChatGPT", r"\bAI\b", r"chatbot", r"artificial intelligence", r"\bLLM", r"language model",
                    r"Copilot"],
    # Tailscale mesh network
    "debian8-u01": [r"tailscale", r"zerotier", r"headscale", r"wireguard"],
    # fingerprint reader login (fprintd)
    "debian8-u02": [r"fprintd", r"biometric", r"fingerprint (reader|scanner|sensor)", r"fingerprint login"],
    # central log search with Elasticsearch / Kibana (ELK)
    "debian8-u03": [r"elasticsearch", r"kibana", r"logstash", r"\bELK\b", r"opensearch", r"graylog"],
    # opinion: Linux Mint Debian Edition vs Debian
    "debian8-u04": [r"Linux ?Mint", r"\bMint\b", r"LMDE"],
    # pinyin annotation over Chinese characters
    "lshort8-u01": [r"拼音", r"pinyin", r"注音", r"\bruby\b"],
    # handwriting practice sheets with 田字格
    "lshort8-u02": [r"田字格", r"米字格", r"字帖", r"书法", r"练字"],
    # data charts with pgfplots (bar / line charts, legends)
    "lshort8-u03": [r"pgfplots", r"柱状图", r"折线图", r"条形图", r"饼", r"图例", r"\bybar", r"legend",
                    r"bar ?chart"],
    # opinion: is LaTeX worth it for a job / career
    "lshort8-u04": [r"求职", r"找工作", r"就业", r"职业", r"面试", r"雇主"],
}

# Overlap check: no id, question, evidence sentence or gold page shared with
# these sets (all are errors).
SIBLINGS = [("books-dev", DEV), ("heldout", HELDOUT1), ("heldout2", HELDOUT2), ("heldout3", HELDOUT3),
            ("heldout4", HELDOUT4), ("heldout5", HELDOUT5), ("heldout6", HELDOUT6),
            ("heldout7", HELDOUT7)]
PAGE_OVERLAP_IS_ERROR = True

# The checks themselves are heldout3's (../books-heldout3/verify.py), run over
# this set's file and tables.
_spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
first = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(first)
first.DATA, first.BOOKS, first.EXPECTED, first.PREFIX, first.UNIQUE, first.ABSENT = (
    DATA, BOOKS, EXPECTED, PREFIX, UNIQUE, ABSENT)
first.SIBLINGS, first.PAGE_OVERLAP_IS_ERROR = SIBLINGS, PAGE_OVERLAP_IS_ERROR

if __name__ == "__main__":
    sys.exit(first.main())
