#!/usr/bin/python3
"""Exit 0 when a crosscheck.json's cases that did not agree all could not
tell for want of steady rounds (fewer than 3: the machine's speed changed
during every attempt at the others), and there is at least one: on such a
host there is nothing to judge (bench/crosscheck/README.md).  Exit 1 otherwise.

usage: crosscheck_unjudged.py CROSSCHECK.json
"""
import json
import sys

cases = json.load(open(sys.argv[1]))["cases"]
bad = [c for c in cases if not c["skipped"] and c["verdict"] != "agree"]
sys.exit(0 if bad and all(c["verdict"] == "cannot tell" and c["ratio"]["rounds"] < 3 for c in bad) else 1)
