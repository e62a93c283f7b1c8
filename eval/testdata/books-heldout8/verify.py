#!/usr/bin/env python3
"""Verify heldout8.jsonl (beside this script) against the PDFs with
../books-heldout3/verify.py's checks (its run_set: usage, checks and the
meaning of the tables are there). Only this set's tables live here: UNIQUE,
ABSENT, and the sets it must not repeat.
"""
import importlib.util
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))

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

SIBLINGS = ['books-dev', 'heldout', 'heldout2', 'heldout3', 'heldout4', 'heldout5', 'heldout6', 'heldout7']

if __name__ == "__main__":
    _spec = importlib.util.spec_from_file_location("verify_heldout3", os.path.join(HERE, "../books-heldout3/verify.py"))
    checks = importlib.util.module_from_spec(_spec)
    _spec.loader.exec_module(checks)
    sys.exit(checks.run_set(HERE, 8, UNIQUE, ABSENT, SIBLINGS))
