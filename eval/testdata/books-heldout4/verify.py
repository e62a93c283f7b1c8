#!/usr/bin/env python3
"""Verify heldout4.jsonl (beside this script) against the PDFs.

Only this set's tables live here; the checks are ../books-heldout3/verify.py's
(its main(), run over this set's file and tables, with the sibling sets in
SIBLINGS and PAGE_OVERLAP_IS_ERROR). Checks:
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
import importlib.util
import os
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

# Overlap check: no id, question, evidence sentence or gold page shared with
# these sets (all are errors).
SIBLINGS = [("books-dev", DEV), ("heldout3", HELDOUT3)]
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
