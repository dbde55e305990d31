"""The tarball and the static binaries in it (scripts/dist/binaries.sh, tarball.sh): one top folder
with bin/, docs/, deploy/, README.md and a SHA256SUMS that checks; no Swift runtime among the
libraries the binaries load; `--version`; and on a bare Debian 12 (debootstrap minbase) they fail
naming libssl.so.3 until libssl3 is installed, then run, and the hub serves."""
import json
import os
import re
import subprocess
import tarfile
import urllib.request

import pytest

from distlib import (ARCH, CHROOT, READY_PATH, RUNTIME_PACKAGES, TARBALL, VERSION, artifact, assert_version_line,
                     bookworm_deb, debian_root, free_port, needed_libraries, needs_debootstrap, needs_root,
                     wait_listening)  # noqa: F401

TOP = "pushhub-%s-linux-%s" % (VERSION, ARCH)
# Sonames the five runtime packages give (docs/packages.md); the dynamic loader and vDSO aside.
ALLOWED_SONAMES = {"libc.so.6", "libm.so.6", "libstdc++.so.6", "libgcc_s.so.1", "libssl.so.3", "libcrypto.so.3",
                   "libz.so.1", "ld-linux-x86-64.so.2"}


@pytest.fixture(scope="module")
def unpacked(tmp_path_factory):
    """The tarball extracted into a temporary folder (pytest removes it)."""
    folder = tmp_path_factory.mktemp("tarball")
    with tarfile.open(artifact(TARBALL)) as tar:
        tar.extractall(folder, filter="tar")
    return os.path.join(folder, TOP)


def test_one_top_folder_with_binaries_docs_deploy_and_readme():
    with tarfile.open(artifact(TARBALL)) as tar:
        members = tar.getmembers()
    names = [m.name for m in members]
    assert {name.split("/", 1)[0] for name in names} == {TOP}
    for required in ["bin/pushhub", "bin/hubctl", "README.md", "SHA256SUMS", "deploy/pushhub.service",
                     "deploy/pushhub.env", "docs/operations.md", "docs/packages.md"]:
        assert TOP + "/" + required in names, required + " is not in the tarball"
    assert not [n for n in names if n.startswith(TOP + "/deploy/debian")], "deploy/debian only builds the .deb"
    for member in members:
        assert member.uid == 0 and member.gid == 0, member.name
        if member.name.startswith(TOP + "/bin/") and member.isfile():
            assert member.mode & 0o777 == 0o755, member.name


def test_its_sha256sums_check_every_file(unpacked):
    listed = [line.split("  ", 1)[1] for line in open(os.path.join(unpacked, "SHA256SUMS")).read().splitlines()]
    present = sorted(os.path.relpath(os.path.join(d, f), unpacked)
                     for d, _, files in os.walk(unpacked) for f in files if f != "SHA256SUMS" or d != unpacked)
    assert sorted(listed) == present
    result = subprocess.run(["sha256sum", "--check", "--strict", "SHA256SUMS"], cwd=unpacked, capture_output=True, text=True)
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.parametrize("program", ["pushhub", "hubctl"])
def test_no_swift_runtime_among_the_libraries_it_loads(unpacked, program):
    binary = os.path.join(unpacked, "bin", program)
    ldd = subprocess.run(["ldd", binary], check=True, capture_output=True, text=True).stdout
    for runtime in ["libswift", "libFoundation", "libdispatch", "libBlocksRuntime", "lib_FoundationICU", "libicu"]:
        assert runtime not in ldd, "%s loads %s:\n%s" % (program, runtime, ldd)
    needed = set(needed_libraries(binary))
    assert needed <= ALLOWED_SONAMES, "%s needs %s, outside %s" % (program, needed - ALLOWED_SONAMES, sorted(RUNTIME_PACKAGES))
    assert "libssl.so.3" in needed
    dynamic = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    assert "RPATH" not in dynamic and "RUNPATH" not in dynamic, "no library is loaded from beside the binary"
    assert re.search(r"\(FLAGS(_1)?\).*\bNOW\b", dynamic), "bound at start (-z now, full RELRO)"


def test_the_hub_carries_no_foundation(unpacked):
    """The hub imports no Foundation (docs/architecture.md "Modules"): linked statically, Foundation
    and its ICU data were 50 of the hub's 62 MB. An `import Foundation` anywhere in the hub's
    modules brings them back, and their type names and ICU data with them."""
    contents = open(os.path.join(unpacked, "bin", "pushhub"), "rb").read()
    assert contents.count(b"FoundationEssentials") == 0 and contents.count(b"icudt") == 0
    assert len(contents) < 25 << 20, "pushhub is %.1f MB" % (len(contents) / 1e6)
    # The check can fail: hubctl keeps Foundation, and shows both.
    assert open(os.path.join(unpacked, "bin", "hubctl"), "rb").read().count(b"icudt") > 0


@pytest.mark.parametrize("program", ["pushhub", "hubctl"])
def test_version_is_the_scripts_version(unpacked, program):
    result = subprocess.run([os.path.join(unpacked, "bin", program), "--version"], capture_output=True, text=True, timeout=10)
    assert result.returncode == 0, result.stderr
    assert_version_line(result.stdout, program)


@needs_root
@needs_debootstrap
def test_runs_on_a_bare_debian_12_with_only_libssl3_added(unpacked, debian_root):
    opt = debian_root.file("/opt")
    subprocess.run(["cp", "-a", unpacked, opt], check=True)
    bin_dir = "/opt/%s/bin" % TOP
    debian_root.mount_proc()
    # minbase has libc6, libstdc++6, libgcc-s1 and zlib1g, not libssl3: the loader names it.
    for program in ["pushhub", "hubctl"]:
        result = debian_root.run(bin_dir + "/" + program, "--version", check=False, timeout=10)
        assert result.returncode == 127, result
        assert "libssl.so.3: cannot open shared object file" in result.stderr, result.stderr
    debian_root.install_debs(bookworm_deb("libssl3"))
    for program in ["pushhub", "hubctl"]:
        assert_version_line(debian_root.run(bin_dir + "/" + program, "--version", timeout=10).stdout, program)

    # The hub starts there from the tarball's files and answers; hubctl reads its data dir.
    client, admin = free_port(), free_port()
    log_path = debian_root.file("/tmp/hub.log")
    with open(log_path, "w") as log:
        hub = subprocess.Popen([CHROOT, debian_root.path, bin_dir + "/pushhub", "--listen", "127.0.0.1:%d" % client,
                                "--admin", "127.0.0.1:%d" % admin, "--data", "/tmp/data"],
                               stderr=log, env={"PATH": "/usr/bin:/bin"})
    try:
        wait_listening(log_path, hub)
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (admin, READY_PATH), timeout=5) as response:
            assert response.status == 200
        status = debian_root.run(bin_dir + "/hubctl", "--url", "http://127.0.0.1:%d" % admin, "--data", "/tmp/data",
                                 "--json", "status", timeout=20)
        assert json.loads(status.stdout), status.stdout
    finally:
        hub.terminate()
        hub.wait(timeout=15)
    assert hub.returncode == 0, open(log_path).read()

