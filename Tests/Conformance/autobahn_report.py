#!/usr/bin/env python3
"""Judges an Autobahn|Testsuite report (wstest exits 0 whatever happened).

usage: autobahn_report.py OUTDIR AGENT EXPECTED_CASE_COUNT EXPECTED_FAILURES_FILE

A case passes when its behavior and behaviorClose are OK, NON-STRICT or INFORMATIONAL, or when
expected-failures.txt lists it (with a reason). A report with fewer cases than asked for (the
peer died mid-run) fails. Prints the counts per behavior and a plain closing line
`autobahn: N passed, N failed`.
"""
import json
import os
import sys
from collections import Counter

ACCEPTED = {"OK", "NON-STRICT", "INFORMATIONAL"}


def main():
    outdir, agent, expected_count, failures_file = sys.argv[1], sys.argv[2], int(sys.argv[3]), sys.argv[4]
    with open(os.path.join(outdir, "index.json")) as f:
        index = json.load(f)
    cases = index.get(agent, {})
    expected_failures = {}
    if os.path.exists(failures_file):
        for line in open(failures_file):
            line = line.split("#", 1)[0].strip()
            if line:
                case, _, reason = line.partition(" ")
                expected_failures[case] = reason.strip()
    behaviors = Counter()
    failed = []
    for case, result in sorted(cases.items(), key=lambda kv: [int(p) for p in kv[0].split(".")]):
        behavior, close = result.get("behavior"), result.get("behaviorClose")
        behaviors[behavior] += 1
        if (behavior not in ACCEPTED or close not in ACCEPTED) and case not in expected_failures:
            failed.append("%s behavior=%s close=%s" % (case, behavior, close))
    missing = expected_count - len(cases)
    print("%s: %d cases reported of %d asked; %s" % (agent, len(cases), expected_count,
          ", ".join("%s %d" % kv for kv in sorted(behaviors.items()))))
    for line in failed:
        print("FAILED " + line)
    if missing > 0:
        print("FAILED %d cases missing from the report (did the peer die?)" % missing)
    failed_count = len(failed) + max(missing, 0)
    print("autobahn: %d passed, %d failed" % (len(cases) - len(failed), failed_count))
    sys.exit(1 if failed_count else 0)


if __name__ == "__main__":
    main()
