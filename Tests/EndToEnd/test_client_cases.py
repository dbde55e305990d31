"""The shared client cases (Tests/ClientCases/cases.json, issue 29 item 4) say what independent
tools say: generate.py rebuilds the file from its sources, checking every canonical form and hash
with Python's `rfc8785` and `hashlib` and every patch result with `jsonpatch`, and --check fails
when the committed file differs. The Swift (ClientCasesTests), JavaScript (client-cases.test.js)
and Java (ClientCasesTest) runners read the file."""
import os
import subprocess
import sys

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))


def test_the_cases_are_what_rfc8785_hashlib_and_jsonpatch_say():
    run = subprocess.run([sys.executable, os.path.join(ROOT, "Tests", "ClientCases", "generate.py"), "--check"],
                         capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, run.stdout + run.stderr
