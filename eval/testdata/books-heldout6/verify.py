#!/usr/bin/env python3
"""Verify heldout6.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

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

SIBLINGS = ['books-dev', 'heldout3', 'heldout4', 'heldout5']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 6, UNIQUE, ABSENT, SIBLINGS))
