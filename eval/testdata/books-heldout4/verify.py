#!/usr/bin/env python3
"""Verify heldout4.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

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

SIBLINGS = ['books-dev', 'heldout3']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 4, UNIQUE, ABSENT, SIBLINGS))
