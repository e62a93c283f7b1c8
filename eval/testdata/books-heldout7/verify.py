#!/usr/bin/env python3
"""Verify heldout7.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

UNIQUE = {
    "rintro7-01": [r"x\[is\.na\(x\)\] <- 0", r"missing values in x by zeros"],
    "rintro7-02": [r"1 in 20"],
    "rintro7-03": [r"masks it with another variable", r"not visible until the data frame is detached"],
    "rintro7-04": [r'"SJ"'],
    "rintro7-05": [r"only way to terminate repeat loops"],
    "rintro7-06": [r"through the origin", r"y ?~ ?0 ?\+ ?x"],
    "rintro7-07": [r"always horizontal", r"las=1"],
    "rintro7-08": [r"onefile"],
    "debian7-01": [r"link count of any new directory starts at 2"],
    "debian7-02": [r"-i\.bak"],
    "debian7-03": [r"press .U. to get all", r"upgraded to the candidate version in the visual interface"],
    "debian7-04": [r"Red .●. indicates", r".failed. or .error. state"],
    "debian7-05": [r"Ambiguous-wide", r"NCURSES_NO_UTF8_ACS"],
    "debian7-06": [r"zip -rX", r"de-facto cross platform archive"],
    "debian7-07": [r"col -b -x"],
    "debian7-08": [r"rpm2cpio", r"extract data from RPM format"],
    "lshort7-01": [r"脚注会出现在盒子底部", r"小写字母编号"],
    "lshort7-02": [r"上下标只对后面的一个符号起作用"],
    "lshort7-03": [r"n⟩默认为10"],
    "lshort7-04": [r"使用直立体文字"],
    "lshort7-05": [r"浮动体丢失"],
    "lshort7-06": [r"最多支持三级"],
    "lshort7-07": [r"shapes\.geometric", r"默认可用rectangle和circle"],
    "lshort7-08": [r"\\roman\{1\}", r"不能直接用于数字"],
}

ABSENT = {
    # interactive maps of coordinates (leaflet)
    "rintro7-u01": [r"leaflet", r"latitude", r"longitude", r"choropleth", r"shapefile", r"geospatial",
                    r"spatial"],
    # Bayesian regression with Stan / brms, MCMC convergence
    "rintro7-u02": [r"Bayes", r"MCMC", r"\bStan\b", r"\brstan\b", r"brms", r"posterior", r"Gibbs"],
    # sentiment analysis, word clouds
    "rintro7-u03": [r"sentiment", r"word ?cloud", r"text mining", r"tidytext", r"\bcorpus", r"token"],
    # opinion: Stata vs R for an economics career
    "rintro7-u04": [r"Stata", r"econometric", r"economics", r"career"],
    # Pi-hole network-wide ad blocking
    "debian7-u01": [r"pi-?hole", r"AdGuard", r"\bad.?block", r"advert", r"blocklist"],
    # JupyterHub / Jupyter notebooks
    "debian7-u02": [r"jupyter", r"notebook", r"ipython"],
    # Vaultwarden / Bitwarden password manager
    "debian7-u03": [r"bitwarden", r"vaultwarden", r"pass(word)? ?manager", r"keepass"],
    # opinion: openSUSE Tumbleweed vs Debian
    "debian7-u04": [r"SUSE", r"Tumbleweed", r"zypper", r"YaST"],
    # Feynman diagrams
    "lshort7-u01": [r"费曼", r"Feynman", r"feyn"],
    # business cards
    "lshort7-u02": [r"名片", r"business ?card", r"bizcard", r"卡片"],
    # family trees / genealogy
    "lshort7-u03": [r"族谱", r"家谱", r"家族", r"世系", r"genealogy", r"family ?tree"],
    # opinion: LaTeX on an iPad / phone
    "lshort7-u04": [r"iPad", r"平板", r"手机", r"Android", r"\biOS\b", r"移动"],
}

SIBLINGS = ['books-dev', 'heldout', 'heldout2', 'heldout3', 'heldout4', 'heldout5', 'heldout6']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 7, UNIQUE, ABSENT, SIBLINGS))
