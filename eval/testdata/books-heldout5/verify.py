#!/usr/bin/env python3
"""Verify heldout5.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

UNIQUE = {
    "rintro5-01": [r"character\(0\)", r"numeric\(0\)"],
    "rintro5-02": [r"unclass\(winter\)", r"remove temporarily the effects of class"],
    "rintro5-03": [r"mismatching length"],
    "rintro5-04": [r"grand mean term"],
    "rintro5-05": [r"stem and leaf", r"stem-and-leaf", r"stem\(eruptions\)"],
    "rintro5-06": [r"Rprofile\.site, the user profile"],
    "rintro5-07": [r"UseMethod"],
    "rintro5-08": [r"0\.66", r"0\.83", r"reduction factor"],
    "debian5-01": [r"matches the initial"],
    "debian5-02": [r"who-uploads"],
    "debian5-03": [r"Dial-on-Demand", r"takes long time"],
    "debian5-04": [r"systemd-cat"],
    "debian5-05": [r"sysrq-trigger"],
    "debian5-06": [r"Despite its name", r"tune2fs -c 50"],
    "debian5-07": [r"qemu-nbd", r"network block device protocol"],
    "debian5-08": [r"set -x", r"print all of commands executed"],
    "lshort5-01": [r"从3\.0版开始支持8-bit"],
    "lshort5-02": [r"摘要环境abstract默认只在"],
    "lshort5-03": [r"多余的空行"],
    "lshort5-04": [r"omicron"],
    "lshort5-05": [r"倒立的标点符号", r"更加靠近ASCII"],
    "lshort5-06": [r"章标题默认为“Bibliography"],
    "lshort5-07": [r"同时填充和描边"],
    "lshort5-08": [r"在自己编写的宏包中调用其它宏包"],
}

ABSENT = {
    # Shiny web apps / dashboards
    "rintro5-u01": [r"Shiny", r"dashboard", r"web app", r"flexdashboard", r"slider"],
    # k-means / hierarchical clustering
    "rintro5-u02": [r"k-?means", r"hclust", r"cluster", r"dendrogram"],
    # web scraping
    "rintro5-u03": [r"scrap", r"rvest", r"read_html", r"httr", r"download\.file", r"web ?page"],
    # opinion: Julia
    "rintro5-u04": [r"Julia"],
    # Home Assistant / smart home
    "debian5-u01": [r"Home Assistant", r"smart.?home", r"home automation", r"Zigbee", r"MQTT", r"openHAB"],
    # web-based admin console
    "debian5-u02": [r"Cockpit", r"Webmin", r"web console", r"web-based admin", r"admin panel", r"dashboard"],
    # Mastodon / fediverse
    "debian5-u03": [r"Mastodon", r"fediverse", r"ActivityPub", r"Pleroma", r"Misskey"],
    # opinion: Devuan
    "debian5-u04": [r"Devuan", r"antiX", r"MX Linux", r"init freedom"],
    # chess diagrams
    "lshort5-u01": [r"棋", r"chess", r"skak"],
    # calendars
    "lshort5-u02": [r"日历", r"月历", r"农历", r"台历", r"calendar"],
    # mail merge / batch certificates from a CSV list
    "lshort5-u03": [r"csv", r"名单", r"批量", r"证书", r"奖状", r"datatool", r"mail ?merge", r"邮件合并"],
    # opinion: VS Code vs Vim/Emacs
    "lshort5-u04": [r"VS ?Code", r"Visual Studio", r"LaTeX Workshop", r"插件", r"\bVim\b", r"Emacs", r"Sublime"],
}

SIBLINGS = ['books-dev', 'heldout3', 'heldout4']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 5, UNIQUE, ABSENT, SIBLINGS))
