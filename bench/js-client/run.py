"""Client-side cost of the JavaScript client in headless Chromium (issue 13, "Measured"): apply a
one-leaf patch to a 10,000-node screen and verify its hash (goal: under 5 ms), with SubtleCrypto
and with the built-in SHA-256 (React Native's path); and the module's size raw, gzipped, and
minified + gzipped (when Debian's esbuild is installed).

    .venv/bin/python bench/js-client/run.py
"""
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.abspath(os.path.join(HERE, "..", ".."))
sys.path.insert(0, os.path.join(ROOT, "Tests", "EndToEnd"))
from chromium import Browser, PageServer, client_bundle, find_chromium  # noqa: E402

BENCH = open(os.path.join(HERE, "bench.js")).read()
PAGE = '<!doctype html><meta charset="utf-8"><script type="module" src="/bench.js"></script>'


def sizes():
    raw = client_bundle()
    path = os.path.join(tempfile.mkdtemp(), "pushhub-client.js")
    with open(path, "wb") as file:
        file.write(raw)
    out = {"raw": len(raw), "gzip": len(gzip.compress(raw, 9))}
    if shutil.which("esbuild"):
        minified = subprocess.run(["esbuild", "--minify", "--format=esm", path], capture_output=True, check=True).stdout
        out["minified"] = len(minified)
        out["minified_gzip"] = len(gzip.compress(minified, 9))
    return out


def main():
    binary = find_chromium()
    if binary is None:
        sys.exit("chromium is not installed (apt-get install chromium)")
    server = PageServer({"/bench.js": ("text/javascript", BENCH), "/": ("text/html", PAGE)})
    browser = Browser(binary)
    try:
        browser.open(server.url("/"), ready="window.benchReady === true")
        result = browser.evaluate("runBench()", timeout=120)
    finally:
        browser.close()
        server.close()
    print("screen: %d nodes, canonical form %d bytes" % (result["nodes"], result["bytes"]))
    for name, figures in result["timings"].items():
        print("%-40s median %6.2f ms   p95 %6.2f ms   (%d runs)" % (name, figures["median"], figures["p95"], figures["runs"]))
    s = sizes()
    line = "pushhub-client.js: %d bytes raw, %d gzipped" % (s["raw"], s["gzip"])
    if "minified" in s:
        line += "; minified (esbuild) %d bytes, %d gzipped" % (s["minified"], s["minified_gzip"])
    print(line)
    print(json.dumps({"timings": result["timings"], "sizes": s}))


if __name__ == "__main__":
    main()
