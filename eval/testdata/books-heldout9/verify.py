#!/usr/bin/env python3
"""Verify heldout9.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

UNIQUE = {
    "rintro9-01": [r"collapse=", r"single character string"],
    "rintro9-02": [r"given list arguments", r"joined together in sequence"],
    "rintro9-03": [r"discrete distribution", r"probably due to rounding"],
    "rintro9-04": [r"looks back in enclosing environments", r"without finding the symbol"],
    "rintro9-05": [r"Wilkinson", r"valid name character"],
    "rintro9-06": [r"conditioning intervals?", r"co\.intervals"],
    "rintro9-07": [r"loadedNamespaces", r"not available on the search list"],
    "rintro9-08": [r"R_USER", r"HOMEDRIVE"],
    "debian9-01": [r"berserk", r"some-binary-file"],
    "debian9-02": [r"about a month"],
    "debian9-03": [r"cgroups-v2", r"unified cgroup"],
    "debian9-04": [r"ssh-keygen -p"],
    "debian9-05": [r"still being used by some application", r"\(deleted\)"],
    "debian9-06": [r"hardcoding", r"secret-tool lookup"],
    "debian9-07": [r"pdfwrite", r"foo1\.pdf foo2\.pdf"],
    "debian9-08": [r"id -un", r"not be available under the execution environment"],
    "lshort9-01": [r"允许添加扩展名"],
    "lshort9-02": [r"会在上下文产生一个额外间距", r"没必要再用center环境"],
    "lshort9-03": [r"公用一个编号", r"编号位于公式的居中位置"],
    "lshort9-04": [r"0pt plus 1pt"],
    "lshort9-05": [r"gb7714-2015ay"],
    "lshort9-06": [r"pgffor", r"省略形式"],
    "lshort9-07": [r"belowcaptionskip", r"位于它下方的图表之间无间距"],
    "lshort9-08": [r"diagbox", r"斜线表头"],
}

ABSENT = {
    # ROC curve / AUC for a logistic regression
    "rintro9-u01": [r"\bROC\b", r"\bROCR\b", r"\bAUC\b", r"receiver operating", r"specificity",
                    r"area under the curve"],
    # recording package versions for a project (renv)
    "rintro9-u02": [r"\brenv\b", r"packrat", r"lockfile", r"snapshot", r"reproducib"],
    # calling Python from R (reticulate)
    "rintro9-u03": [r"python", r"reticulate", r"pandas", r"numpy"],
    # opinion: webR / WebAssembly replacing a local R installation
    "rintro9-u04": [r"webR", r"webassembly", r"\bwasm\b"],
    # Tor relay / onion service
    "debian9-u01": [r"\btor\b", r"onion", r"torrc", r"hidden service"],
    # two-factor authentication (TOTP) for SSH
    "debian9-u02": [r"two-factor", r"\b2fa\b", r"multi-factor", r"\btotp\b", r"authenticator", r"yubikey"],
    # zram compressed swap
    "debian9-u03": [r"zram", r"zswap", r"compressed swap", r"compressed (ram|memory)"],
    # opinion: Debian on an old Chromebook
    "debian9-u04": [r"chromebook", r"\bchromeos\b", r"coreboot", r"mrchromebox"],
    # sudoku puzzles
    "lshort9-u01": [r"数独", r"sudoku", r"九宫格", r"游戏"],
    # fillable PDF forms
    "lshort9-u02": [r"表单", r"复选框", r"文本框", r"单选", r"checkbox", r"textfield", r"acroform", r"可填写"],
    # formulas on a web page (MathJax / KaTeX)
    "lshort9-u03": [r"mathjax", r"katex", r"网页", r"浏览器", r"tex4ht", r"make4ht"],
    # opinion: LaTeX manuscripts more likely to be accepted by a journal
    "lshort9-u04": [r"录用", r"审稿", r"投稿", r"编辑部"],
}

SIBLINGS = ['books-dev', 'heldout', 'heldout2', 'heldout3', 'heldout4', 'heldout5', 'heldout6', 'heldout7', 'heldout8']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 9, UNIQUE, ABSENT, SIBLINGS))
