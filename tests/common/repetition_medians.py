#!/usr/bin/env python3
"""How many repetition medians the runs hold for one benchmark: what
`compare` and the report pool for it (a quick run's six, or more where the
steady-state check extended the run past a level shift).

  repetition_medians.py BENCHMARK RESULT.JSON...   prints the count
"""
import json
import sys

name, files = sys.argv[1], sys.argv[2:]
print(sum(len(b["traced"]["repetition_medians_cycles"]) for f in files for b in json.load(open(f))["benchmarks"]
          if b["name"] == name))
