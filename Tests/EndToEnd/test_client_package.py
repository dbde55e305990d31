"""The Swift client as an app adds it (issue 29 item 0): a separate package made from the
Package.swift that docs/clients.md shows ("Adding it to an app"), with its `.package(url:)` line
swapped for `.package(path:)` to this checkout, builds `PushHubClient` as a dependency and runs
against a real hub: it gets the published tree with the hub's hash."""
import os
import re
import shutil
import subprocess

import pytest

from admin import publish
from conftest import Hub

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))

APP = r"""
import Foundation
import PushHubClient

let hub = PushHubClient(
    url: HubURL(CommandLine.arguments[1])!, credentials: .device("d-app-package"),
    app: AppInfo(platform: "ios", version: "5.3.0"))
let received = DispatchSemaphore(value: 0)
let home = hub.subscribe("home") { tree, meta in
    print("tree version=\(meta.version) hash=\(meta.hash) title=\(tree["title"]?.stringValue ?? "-")")
    received.signal()
}
let arrived = received.wait(timeout: .now() + 20) == .success
home.close()
hub.close()
exit(arrived ? 0 : 1)
"""


def documented_manifest():
    """The app Package.swift of docs/clients.md."""
    text = open(os.path.join(ROOT, "docs", "clients.md")).read()
    blocks = re.findall(r"```swift\n(// swift-tools-version.*?)```", text, re.S)
    assert len(blocks) == 1, "docs/clients.md should show one app Package.swift"
    return blocks[0]


def app_manifest(checkout):
    manifest = documented_manifest()
    url_line = re.search(r'^\s*\.package\(url: "[^"]*/(\w[\w.-]*?)(?:\.git)?", from: "[^"]+"\),\n', manifest, re.M)
    assert url_line, "the documented manifest has no .package(url:, from:) line"
    identity = url_line.group(1)
    assert '.product(name: "PushHubClient", package: "%s")' % identity in manifest, \
        "the documented product line should name the package by its identity, %r" % identity
    manifest = manifest.replace(url_line.group(0), '        .package(path: "%s"),\n' % checkout)
    manifest = manifest.replace('.target(name: "MyApp"', '.executableTarget(name: "MyApp"')
    return manifest, identity


@pytest.mark.skipif(shutil.which("swift") is None, reason="no swift")
def test_an_app_package_builds_the_client_from_the_documented_lines_and_runs(tmp_path):
    manifest, identity = app_manifest(str(tmp_path / "pushhub"))
    # The identity is the checkout's folder name: give this checkout the documented one.
    os.symlink(ROOT, tmp_path / identity)
    app = tmp_path / "app"
    (app / "Sources" / "MyApp").mkdir(parents=True)
    (app / "Package.swift").write_text(manifest)
    (app / "Sources" / "MyApp" / "main.swift").write_text(APP)
    build = subprocess.run(["swift", "build"], cwd=app, capture_output=True, text=True, timeout=1200)
    assert build.returncode == 0, build.stdout[-4000:] + build.stderr[-4000:]
    assert "warning:" not in build.stdout + build.stderr, build.stdout + build.stderr

    hub = Hub("--dev")
    try:
        published = publish(hub, "home", {"type": "screen", "title": "from the app package"})
        run = subprocess.run([str(app / ".build" / "debug" / "MyApp"), hub.url + "/v1/connect"],
                             capture_output=True, text=True, timeout=60)
        assert run.returncode == 0, run.stdout + run.stderr
        assert "tree version=%d hash=%s title=from the app package" % (published["version"], published["hash"]) \
            in run.stdout, run.stdout
    finally:
        hub.stop()
