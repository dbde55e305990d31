"""The JavaScript client's modules (clients/js/src/, issue 25 item 5) without a hub: their unit
tests in node (clients/js/test/: the protocol state machine fed message by message, as
ClientSessionTests feeds the Swift one; the link with a fake WebSocket; the shell over it), and
the one-file bundle clients/js/bundle.sh makes of them (what the hub's build embeds and serves
at /v1/client.js, test_fetch.py): that it imports nothing, and that it exports what
pushhub-client.d.ts declares."""
import glob
import os
import re
import shutil
import subprocess
import tempfile

import pytest

from chromium import client_bundle

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
CLIENT = os.path.join(ROOT, "clients", "js")


def node_or_skip():
    node = shutil.which("node")
    if node is None:
        pytest.skip("node is not installed (Debian: apt-get install nodejs; `make e2e` installs it)")
    return node


def test_the_unit_tests_of_the_modules_pass():
    node = node_or_skip()
    tests = sorted(glob.glob(os.path.join(CLIENT, "test", "*.test.js")))
    assert tests, "no clients/js/test/*.test.js"
    run = subprocess.run([node, "--no-warnings", "--test", "--test-reporter=tap", *tests], cwd=CLIENT,
                         capture_output=True, text=True, timeout=300)
    summary = dict(re.findall(r"^# (tests|pass|fail|cancelled|skipped|todo) (\d+)$", run.stdout, re.M))
    print("node --test clients/js/test: %s" % summary)
    failures = [block for block in re.split(r"\n(?=\S|    # Subtest)", run.stdout) if "not ok" in block]
    assert run.returncode == 0 and summary.get("fail") == "0", "\n".join(failures) or run.stdout + run.stderr
    assert int(summary["pass"]) >= 30 and summary.get("skipped") == "0", summary


def test_the_bundle_stands_alone_and_exports_what_the_declarations_declare():
    node = node_or_skip()
    bundle = client_bundle()
    module = bundle.decode()
    assert not re.search(r"^\s*import\b|\bimport\(", module, re.M), "the bundle imports something"
    declared = set(re.findall(r"^export declare (?:const|class|function) (\w+)",
                              open(os.path.join(CLIENT, "pushhub-client.d.ts")).read(), re.M))
    with tempfile.TemporaryDirectory() as alone:  # no package.json, no sibling modules
        path = os.path.join(alone, "client.mjs")
        with open(path, "wb") as file:
            file.write(bundle)
        names = subprocess.run([node, "--input-type=module", "-e",
                                "const m = await import(%r); console.log(Object.keys(m).join(' '))" % path],
                               capture_output=True, text=True, check=True).stdout.split()
    assert set(names) == declared, "exported but not declared: %s; declared but not exported: %s" % (
        sorted(set(names) - declared), sorted(declared - set(names)))
