#!/usr/bin/env bash
# Creates .venv/ with the Python test peers (websockets) unless it is already there.
set -euo pipefail
cd "$(dirname "$0")/.."
if [ -x .venv/bin/python ] && .venv/bin/python -c 'import websockets, pytest, jsonpatch, rfc8785, jwt, h11, scipy, statsmodels, jsonschema, h2, cryptography' 2>/dev/null; then exit 0; fi
if ! python3 -m venv --help >/dev/null 2>&1; then
  apt-get update -qq && apt-get install -y -qq python3-venv
fi
python3 -m venv .venv
.venv/bin/pip install -q --disable-pip-version-check -r Tests/requirements.txt
