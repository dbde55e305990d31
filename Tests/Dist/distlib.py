"""What the Tests/Dist tests share: where the artifacts are, the version they are named after, and
a throwaway Debian 12 root (`debootstrap --variant=minbase bookworm`, cached by
scripts/dist/debian-root.sh under .build-dist/) to run the binaries and install the .deb in with
chroot.

The artifacts are in DIST_DIR (default dist/, what `make dist` makes; `make dist-check` points it at
.build-dist/check/, the same packages from debug binaries). No conftest.py here on purpose: the
tests import Tests/EndToEnd's systemd EnvironmentFile parser, whose module imports that folder's
conftest by name."""
import glob
import json
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
DIST_DIR = os.path.join(ROOT, os.environ.get("DIST_DIR", "dist"))
STAGE = os.path.join(DIST_DIR, "stage")  # binaries.sh's bin/pushhub, bin/hubctl
SCRIPTS = os.path.join(ROOT, "scripts")

sys.path.insert(0, os.path.join(ROOT, "Tests", "EndToEnd"))
# The one EnvironmentFile parser and free-port finder; the tests import them from here.
from test_deploy import free_port, systemd_environment_file  # noqa: E402,F401


def version(*flags):
    return subprocess.run([os.path.join(SCRIPTS, "version.sh"), *flags], check=True,
                          capture_output=True, text=True).stdout.strip()


VERSION = version()
DEBVERSION = version("--debian")
ARCH = os.uname().machine
DEBARCH = subprocess.run(["dpkg", "--print-architecture"], check=True, capture_output=True, text=True).stdout.strip()
TARBALL = os.path.join(DIST_DIR, "pushhub-%s-linux-%s.tar.gz" % (VERSION, ARCH))
DEB = os.path.join(DIST_DIR, "pushhub_%s_%s.deb" % (DEBVERSION, DEBARCH))

# The packages the binaries may load libraries from, and the sonames they hold (docs/packages.md).
RUNTIME_PACKAGES = {"libc6", "libstdc++6", "libgcc-s1", "libssl3", "zlib1g"}

# /readyz: 200 once the installed hub takes clients (docs/operations.md "Probes").
READY_PATH = "/readyz"


def artifact(path, make="`make dist` (or `make dist-check`, DIST_DIR=.build-dist/check)"):
    """`path`, or a failure saying how to make it (`make`)."""
    if not os.path.exists(path):
        pytest.fail("%s is missing: run %s" % (path, make))
    return path


def head_commit():
    return subprocess.run(["git", "-C", ROOT, "rev-parse", "--short=12", "HEAD"], check=True,
                          capture_output=True, text=True).stdout.strip()


def assert_version_line(output, program):
    """`program --version` names scripts/version.sh's version and HEAD's commit (a build from a work
    tree with uncommitted changes adds ", with uncommitted changes")."""
    line = output.strip()
    expected = "%s %s (commit %s" % (program, VERSION, head_commit())
    assert line.startswith(expected), "%r does not start with %r" % (line, expected)


def needed_libraries(binary):
    """The DT_NEEDED sonames of an ELF file (readelf -d)."""
    out = subprocess.run(["readelf", "-d", binary], check=True, capture_output=True, text=True).stdout
    return [line.split("[", 1)[1].split("]", 1)[0] for line in out.splitlines() if "(NEEDED)" in line]


CHROOT = shutil.which("chroot", path="/usr/sbin:/usr/bin:/sbin:/bin") or "chroot"

needs_root = pytest.mark.skipif(os.geteuid() != 0, reason="chroot, mount and dpkg in a root need root")
needs_debootstrap = pytest.mark.skipif(
    shutil.which("debootstrap") is None and shutil.which("debootstrap", path="/usr/sbin:/sbin") is None
    and not glob.glob(os.path.join(ROOT, ".build-dist", "bookworm-minbase.tar")),
    reason="debootstrap is not installed (apt-get install -y debootstrap)")


class DebianRoot:
    """A fresh copy of the cached bare Debian 12 root in a temporary folder. `mount_proc()` mounts
    /proc in it (the static binaries read their arguments from /proc/self/cmdline); `close()`
    kills what still runs in it, unmounts and deletes it."""

    def __init__(self):
        self.path = tempfile.mkdtemp(prefix="pushhub-debian-root-")
        self.proc_mounted = False
        subprocess.run([os.path.join(SCRIPTS, "dist", "debian-root.sh"), "unpack", self.path], check=True)

    def file(self, inside):
        return os.path.join(self.path, inside.lstrip("/"))

    def mount_proc(self):
        if not self.proc_mounted:
            subprocess.run(["mount", "-t", "proc", "proc", self.file("/proc")], check=True)
            self.proc_mounted = True

    def unmount_proc(self):
        if self.proc_mounted:
            subprocess.run(["umount", self.file("/proc")], check=True)
            self.proc_mounted = False

    def run(self, *command, check=True, timeout=120):
        """Runs `command` chrooted, as root; returns the CompletedProcess (text)."""
        result = subprocess.run([CHROOT, self.path, *command], capture_output=True, text=True, timeout=timeout,
                                env={"PATH": "/usr/sbin:/usr/bin:/sbin:/bin", "LC_ALL": "C"})
        if check:
            assert result.returncode == 0, "%s: exit %d\n%s%s" % (command, result.returncode, result.stdout, result.stderr)
        return result

    def install_debs(self, *debs):
        """`dpkg -i` of host .deb files inside the root."""
        inside = []
        for deb in debs:
            shutil.copy(deb, self.file("/tmp"))
            inside.append("/tmp/" + os.path.basename(deb))
        result = self.run("dpkg", "-i", *inside)
        for name in inside:
            os.remove(self.file(name))
        return result

    def user(self, name):
        """(uid, gid, home, shell) of `name` in the root's /etc/passwd, or None."""
        for line in open(self.file("/etc/passwd")):
            fields = line.rstrip("\n").split(":")
            if fields[0] == name:
                return int(fields[2]), int(fields[3]), fields[5], fields[6]
        return None

    def group(self, name):
        for line in open(self.file("/etc/group")):
            fields = line.rstrip("\n").split(":")
            if fields[0] == name:
                return int(fields[2])
        return None

    def processes(self):
        """PIDs of processes whose root is this folder."""
        found = []
        for entry in os.listdir("/proc"):
            if entry.isdigit():
                try:
                    if os.readlink("/proc/%s/root" % entry) == self.path:
                        found.append(int(entry))
                except OSError:
                    pass
        return found

    def close(self):
        for pid in self.processes():
            try:
                os.kill(pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
        deadline = time.time() + 5
        while self.processes() and time.time() < deadline:
            time.sleep(0.05)
        if self.proc_mounted:
            if subprocess.run(["umount", self.file("/proc")]).returncode != 0:
                subprocess.run(["umount", "-l", self.file("/proc")], check=True)
            self.proc_mounted = False
        # Never delete through a mount that is still there.
        with open("/proc/self/mounts") as mounts:
            assert not any(" %s/" % self.path in line for line in mounts), "a mount is left in " + self.path
        shutil.rmtree(self.path)


@pytest.fixture
def debian_root():
    """A bare Debian 12 root (minbase: libc6, libstdc++6, libgcc-s1, zlib1g; no libssl3)."""
    root = DebianRoot()
    try:
        yield root
    finally:
        root.close()


def bookworm_deb(package):
    """A bookworm .deb of `package` (e.g. libssl3), apt's candidate, downloaded once into
    .build-dist/debs/ (scripts/dist/debs.sh, which oci.sh takes the image's .debs from too)."""
    path = subprocess.run([os.path.join(SCRIPTS, "dist", "debs.sh"), package], check=True,
                          capture_output=True, text=True).stdout.strip()
    assert path.endswith(".deb") and os.path.exists(path), "no .deb for " + package
    return path


def wait_listening(log_path, process, timeout=15):
    """The hub's `listening` log entry (JSON lines on its stderr, written to `log_path`)."""
    deadline = time.time() + timeout
    while time.time() < deadline:
        for line in open(log_path):
            if line.startswith("{") and json.loads(line).get("msg") == "listening":
                return json.loads(line)
        assert process.poll() is None, "pushhub exited: " + open(log_path).read()
        time.sleep(0.05)
    raise AssertionError("pushhub did not log 'listening' within %d s: %s" % (timeout, open(log_path).read()))
