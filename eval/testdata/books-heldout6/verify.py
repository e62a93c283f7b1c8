#!/usr/bin/env python3
"""Verify heldout6.jsonl (beside this script) against the PDFs.

Only this set's tables live here; the checks are ../books-heldout3/verify.py's
(its main(), run over this set's file and tables, with the sibling sets in
SIBLINGS and PAGE_OVERLAP_IS_ERROR), exactly as ../books-heldout4/verify.py
does it. Checks:
  * every line parses as a JSON object with exactly the keys id, question,
    books, answerable, gold (citebook's jsonl eval format, as in books-dev);
  * ids are unique and follow the naming scheme (rintro6-NN / rintro6-uNN,
    debian6-..., lshort6-...); books are known; pages are in range; questions
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
    held-out sets heldout3, heldout4 and heldout5 (all are errors).

Usage: python3 verify.py [heldout6.jsonl] [books_dir] [books-dev.jsonl]
Needs poppler-utils (pdftotext, pdfinfo). Prints "ok: ..." and exits 0 when
nothing failed; otherwise prints FAIL lines and exits 1.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
DATA = sys.argv[1] if len(sys.argv) > 1 else os.path.join(HERE, "heldout6.jsonl")
BOOKS = sys.argv[2] if len(sys.argv) > 2 else os.path.join(HERE, "../../../../shared/corpora/books")
DEV = sys.argv[3] if len(sys.argv) > 3 else os.path.join(HERE, "../../../../shared/corpora/books-dev/books-dev.jsonl")
HELDOUT3 = os.path.join(HERE, "../books-heldout3/heldout3.jsonl")
HELDOUT4 = os.path.join(HERE, "../books-heldout4/heldout4.jsonl")
HELDOUT5 = os.path.join(HERE, "../books-heldout5/heldout5.jsonl")

EXPECTED = {  # book -> (answerable, unanswerable)
    "R-intro": (8, 4),
    "debian-reference.en": (8, 4),
    "lshort-zh-cn": (8, 4),
}
PREFIX = {"R-intro": "rintro6-", "debian-reference.en": "debian6-", "lshort-zh-cn": "lshort6-"}

# Distinctive answer terms: regexes that must match the gold page and no other
# page. Patterns with CJK characters are matched on the page text with ALL
# whitespace removed; ASCII patterns on the whitespace-normalised text (for
# lshort-zh-cn on both forms, a hit in either counts). Case-insensitive.
UNIQUE = {
    "rintro6-01": [r"exactly reversible", r"roundoff"],
    "rintro6-02": [r"minimum number of letters", r"Lst\$coe\b"],
    "rintro6-03": [r"short-circuit", r"only evaluate their second argument"],
    "rintro6-04": [r"update\(fm05", r"corresponding part of the old model formula"],
    "rintro6-05": [r'type="n"', r"suppresses the points"],
    "rintro6-06": [r"always affect the global values"],
    "rintro6-07": [r"good general compromise", r"much slower compression"],
    "rintro6-08": [r"10,000 bytes"],
    "debian6-01": [r"Esc \+ 0", r"Esc \+ n-key"],
    "debian6-02": [r"success is treated as the logical TRUE", r"somewhat non-intuitive"],
    "debian6-03": [r"sponge", r"moreutils may not exist"],
    "debian6-04": [r"hosts: files dns"],
    "debian6-05": [r"ttf-mscorefonts-installer", r"Core fonts for the Web"],
    "debian6-06": [r"UTC=yes", r"/etc/default/rcS"],
    "debian6-07": [r"\+\+ff=dos", r"so called shift-JIS"],
    "debian6-08": [r"Collate=True"],
    "lshort6-01": [r"2018年4月"],
    "lshort6-02": [r"多个X列格式平均分配列宽", r"根据表格宽度自动计算列宽"],
    "lshort6-03": [r"加\\not前缀"],
    "lshort6-04": [r"mathptmx", r"newtxmath"],
    "lshort6-05": [r"实际上只影响输出区域"],
    "lshort6-06": [r"sort&compress"],
    "lshort6-07": [r"按X直接退出编译", r"S/R/Q"],
    "lshort6-08": [r"Option clash", r"以不同选项重复调用宏包造成冲突"],
}

# Key terms (and synonyms) of unanswerable questions: none may occur anywhere
# in the book. Same matching rules as UNIQUE (CJK patterns on
# whitespace-stripped text, others on whitespace-normalised text,
# case-insensitive).
ABSENT = {
    # Shiny web dashboard
    "rintro6-u01": [r"shiny", r"dashboard", r"web app", r"interactive web", r"plotly"],
    # random forest classifier, variable importance
    "rintro6-u02": [r"random ?forest", r"\branger\b", r"xgboost", r"boosting", r"classifier",
                    r"machine learning", r"importance"],
    # Kaplan-Meier survival curves, log-rank test
    "rintro6-u03": [r"Kaplan", r"survival", r"survfit", r"log.?rank", r"censor", r"\bCox\b"],
    # opinion: data.table vs dplyr for big data
    "rintro6-u04": [r"data\.table", r"dplyr", r"fread", r"tidyverse", r"\bbig data"],
    # Home Assistant, Zigbee
    "debian6-u01": [r"Home ?Assistant", r"Zigbee", r"MQTT", r"Mosquitto", r"smart.?home", r"openHAB"],
    # Proxmox VE
    "debian6-u02": [r"Proxmox", r"\bPVE\b"],
    # Matrix Synapse homeserver
    "debian6-u03": [r"\bMatrix\b", r"Synapse", r"homeserver", r"conduit"],
    # opinion: Debian vs Rocky Linux / AlmaLinux
    "debian6-u04": [r"Rocky", r"AlmaLinux", r"\bRHEL\b", r"CentOS", r"Enterprise Linux"],
    # mind maps
    "lshort6-u01": [r"思维导图", r"脑图", r"mindmap", r"mind map"],
    # (lunar) calendars
    "lshort6-u02": [r"日历", r"年历", r"月历", r"农历", r"calendar"],
    # embedded video / audio
    "lshort6-u03": [r"视频", r"音频", r"media9", r"movie15", r"multimedia", r"动画", r"animate"],
    # opinion: Source Han Serif vs Founder Shusong
    "lshort6-u04": [r"思源", r"方正", r"书宋", r"Source Han", r"Noto"],
}

# Overlap check: no id, question, evidence sentence or gold page shared with
# these sets (all are errors).
SIBLINGS = [("books-dev", DEV), ("heldout3", HELDOUT3), ("heldout4", HELDOUT4), ("heldout5", HELDOUT5)]
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
