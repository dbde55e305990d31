"""The documented commands work (issue 10: docs had drifted from the code). Every command line in
a ```sh block of README.md and docs/*.md is either run, in order, against a real hub — hubctl
as documented, with the deployed token path pointed at the test hub's — or on a list of lines
that need a machine of their own (systemd, nginx, apt); a line of a new kind fails the test
until it is put in one of the two."""
import glob
import os
import re
import subprocess

import pytest

from admin import call
from conftest import BIN, ROOT

#: First words of lines that administer a machine (run by hand on a deployed host; the deploy
#: tests check the files they install).
MACHINE = {"make", "swift", "install", "useradd", "systemctl", "journalctl", "apt-get", "ln", "editor", "nginx",
           "curl", "#"}
#: First words this test runs.
RUN = {"hubctl", ".build/release/hubctl", "echo", "sed"}


def documented_lines(path):
    lines, inside = [], False
    for line in open(path):
        if line.startswith("```"):
            inside = line.strip() == "```sh"
            continue
        if inside and line.strip():
            lines.append(line.rstrip("\n"))
    return lines


def headings(path):
    """The anchors GitHub makes of a Markdown file's headings."""
    return {re.sub(r"[^a-z0-9 _-]", "", line.lstrip("#").strip().lower()).replace(" ", "-")
            for line in open(path) if line.startswith("#")}


@pytest.mark.parametrize("doc", ["README.md"] + sorted(os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "docs", "*.md"))))
def test_documented_commands_run(doc, hub_factory, tmp_path):
    lines = documented_lines(os.path.join(ROOT, doc))
    runnable = []
    for line in lines:
        first = line.split()[0]
        assert first in RUN or first in MACHINE, "%s: add '%s' to RUN or MACHINE in test_docs.py" % (doc, line)
        if first in RUN:
            runnable.append(line)
    if not runnable:
        return
    hub = hub_factory("--dev")
    token_file = os.path.join(hub.data, "data", "admin.token")
    # What a deployed hub already has (a screen to diff against and roll back to), and the
    # operator's own file the walkthroughs publish.
    assert call(hub, "PUT", "/v1/screens/home", {"type": "screen", "children": []})[0] == 200
    (tmp_path / "home.json").write_text('{"type":"screen","children":[{"id":"title","type":"text","text":"Hi"}]}')
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    os.symlink(os.path.join(BIN, "hubctl"), bin_dir / "hubctl")
    script = ["set -e", "trap 'kill $(jobs -p) 2>/dev/null || true' EXIT"]
    for line in runnable:
        line = line.replace(".build/release/hubctl", "hubctl").replace("/var/lib/pushhub/admin.token", token_file)
        script.append(line)
    script.append("sleep 0.5")
    result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                            env={**os.environ, "PATH": "%s:%s" % (bin_dir, os.environ["PATH"]),
                                 "HUBCTL_URL": "http://127.0.0.1:%d" % hub.admin_port,
                                 "HUBCTL_TOKEN": hub.token})
    assert result.returncode == 0, "%s:\n%s\n%s" % (doc, result.stdout[-2000:], result.stderr[-2000:])


def test_the_docs_stand_on_their_own():
    """Issue 24 item 13: docs/DESIGN.md was a copy of the contract we were given, and the pages
    sent readers to it ("contract: DESIGN §N"). It is gone; every page says what it means itself,
    and every link between the pages leads to a file (and heading) that exists."""
    assert not os.path.exists(os.path.join(ROOT, "docs", "DESIGN.md"))
    for path in [os.path.join(ROOT, "README.md")] + sorted(glob.glob(os.path.join(ROOT, "docs", "*.md"))):
        text = open(path).read()
        assert "DESIGN" not in text, "%s still sends readers to DESIGN" % os.path.relpath(path, ROOT)
        for target, anchor in re.findall(r"\]\(([^)#\s]*)(?:#([^)\s]*))?\)", text):
            if re.match(r"[a-z]+:", target):
                continue  # http(s):, mailto:
            linked = os.path.normpath(os.path.join(os.path.dirname(path), target)) if target else path
            assert os.path.exists(linked), "%s links to %s, which does not exist" % (os.path.relpath(path, ROOT), target)
            if anchor and linked.endswith(".md"):
                assert anchor in headings(linked), "%s links to %s#%s: no such heading" % (os.path.relpath(path, ROOT), target, anchor)


def test_every_metric_the_docs_name_is_exported(hub, hub_factory):
    """Issue 10: `pushhub_coalesced_total` was documented but not exported. A hub scaled out over
    Redis exports `pushhub_redis_up` as well (a standalone hub does not: issue 24)."""
    from redis_server import RedisServer

    def exported_by(some_hub):
        status, text = call(some_hub, "GET", "/metrics")
        # Labelled series too, and a labelled family with no series now (its TYPE line: the gauges
        # of rolling releases when none rolls).
        return set(re.findall(r"^(?:# TYPE )?(pushhub_[a-z_]+)[ {]", text, re.M))

    documented = set()
    for path in [os.path.join(ROOT, "README.md")] + glob.glob(os.path.join(ROOT, "docs", "*.md")):
        documented |= set(re.findall(r"`(pushhub_[a-z_]+)`", open(path).read()))
    standalone = exported_by(hub)
    assert "pushhub_redis_up" not in standalone
    redis = RedisServer()
    try:
        exported = standalone | exported_by(hub_factory("--redis", redis.url))
    finally:
        redis.stop()
    assert documented and documented <= exported, "documented, not exported: %s" % sorted(documented - exported)
