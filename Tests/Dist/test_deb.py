"""The .deb (scripts/dist/deb.sh, deploy/debian/): its control fields and Depends against the
libraries the binaries really load, its files and conffiles, lintian with only the explained
overrides left, and in a bare Debian 12 root (debootstrap minbase, chroot): dpkg -i makes the
pushhub user and /var/lib/pushhub, the hub starts from the installed unit's ExecStart=,
Environment= and EnvironmentFile= as that user and answers, remove keeps the conffiles and the
data, purge leaves only the user (docs/packages.md)."""
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import urllib.request

import pytest

from distlib import (DEB, DEBVERSION, DEBARCH, READY_PATH, ROOT, RUNTIME_PACKAGES, STAGE, artifact,  # noqa: F401
                     bookworm_deb, debian_root, free_port, needed_libraries, needs_debootstrap, needs_root,
                     systemd_environment_file, wait_listening)

CONFFILES = ["/etc/pushhub/pushhub.env", "/etc/pushhub/pushhub.json"]
OVERRIDES = os.path.join(ROOT, "deploy", "debian", "lintian-overrides")
UNIT = "/lib/systemd/system/pushhub.service"


def field(name):
    return subprocess.run(["dpkg-deb", "--field", artifact(DEB), name], check=True, capture_output=True,
                          text=True).stdout.strip()


class PackageData:
    """The .deb's data tar (`dpkg-deb --fsys-tarfile`, 140 MB for debug binaries), decompressed
    once: `files` is {path: TarInfo}, `read(path)` a file's bytes."""

    def __init__(self, deb):
        self.tar = subprocess.run(["dpkg-deb", "--fsys-tarfile", deb], check=True, capture_output=True).stdout
        with tarfile.open(fileobj=io.BytesIO(self.tar)) as tar:
            self.files = {m.name.lstrip(".") or "/": m for m in tar.getmembers()}

    def read(self, path):
        with tarfile.open(fileobj=io.BytesIO(self.tar)) as tar:
            return tar.extractfile("." + path).read()


@pytest.fixture(scope="module")
def package():
    return PackageData(artifact(DEB))


def control_file(name):
    return subprocess.run(["dpkg-deb", "--info", artifact(DEB), name], check=True, capture_output=True,
                          text=True).stdout


def test_control_names_the_version_and_architecture():
    assert field("Package") == "pushhub"
    assert field("Version") == DEBVERSION
    assert field("Architecture") == DEBARCH
    assert field("Section") and field("Priority") == "optional" and field("Maintainer")


def test_depends_is_the_packages_whose_libraries_the_binaries_load(package, tmp_path):
    depends = {re.split(r"[ (]", item.strip(), maxsplit=1)[0] for item in field("Depends").split(",")}
    assert depends == RUNTIME_PACKAGES
    for program in ["pushhub", "hubctl"]:
        path = os.path.join(tmp_path, program)
        with open(path, "wb") as out:
            out.write(package.read("/usr/bin/" + program))
        for soname in needed_libraries(path):
            owner = subprocess.run(["dpkg", "-S", "*/" + soname], capture_output=True, text=True).stdout
            packages = {line.split(":", 1)[0] for line in owner.splitlines()}
            assert packages & RUNTIME_PACKAGES, "%s needs %s from %s, not in Depends" % (program, soname, packages)


def test_files_modes_and_conffiles(package):
    files = package.files
    expected = {"/usr/bin/pushhub": 0o755, "/usr/bin/hubctl": 0o755, UNIT: 0o644,
                "/etc/pushhub/pushhub.json": 0o644, "/etc/pushhub/pushhub.env": 0o644,
                "/usr/share/doc/pushhub/copyright": 0o644, "/usr/share/doc/pushhub/changelog.gz": 0o644,
                "/usr/share/lintian/overrides/pushhub": 0o644}
    regular = {name: m.mode & 0o7777 for name, m in files.items() if m.isfile()}
    assert regular == expected
    # Directories too (deb.sh's umask, not the caller's): 0755 each, "/" included.
    directories = {name: m.mode & 0o7777 for name, m in files.items() if m.isdir()}
    assert "/" in directories and "/etc/pushhub" in directories
    assert {name: oct(mode) for name, mode in directories.items() if mode != 0o755} == {}
    assert all(m.uid == 0 and m.gid == 0 for m in files.values())
    assert control_file("conffiles").split() == CONFFILES


def test_the_unit_is_deploys_with_the_installed_paths(package):
    unit = package.read(UNIT).decode()
    source = open(os.path.join(ROOT, "deploy", "pushhub.service")).read()
    assert "ExecStart=/usr/bin/pushhub\n" in unit and "/usr/local/bin" not in unit.split("[Unit]", 1)[1]
    assert "Environment=PUSHHUB_CONFIG=/etc/pushhub/pushhub.json\n" in unit
    assert "EnvironmentFile=-/etc/pushhub/pushhub.env\n" in unit
    # Everything from [Unit] on is deploy/pushhub.service's, but for those two lines.
    body = unit.split("[Unit]", 1)[1].replace("Environment=PUSHHUB_CONFIG=/etc/pushhub/pushhub.json\n", "")
    assert body == source.split("[Unit]", 1)[1].replace("ExecStart=/usr/local/bin/pushhub", "ExecStart=/usr/bin/pushhub")


def test_the_default_config_is_valid():
    """/etc/pushhub/pushhub.json passes `pushhub --check-config` (the stage's binary, on this host)."""
    stage_pushhub = os.path.join(STAGE, "bin", "pushhub")
    result = subprocess.run([artifact(stage_pushhub), "--check-config",
                             os.path.join(ROOT, "deploy", "debian", "pushhub.json")],
                            capture_output=True, text=True, timeout=10,
                            env={k: v for k, v in os.environ.items() if not k.startswith("PUSHHUB_")})
    assert result.returncode == 0, result.stdout + result.stderr


LINTIAN = shutil.which("lintian")


@pytest.mark.skipif(LINTIAN is None, reason="lintian is not installed (apt-get install -y lintian)")
def test_lintian_reports_nothing_but_the_explained_overrides():
    # One run (lintian takes a minute on release binaries): --show-overrides prints the overridden
    # tags as "O:" lines beside the others. Not --fail-on: it counts shown overrides too (2.116
    # exits 2 on an overridden warning), so any E/W/I/P/X line is the failure.
    result = subprocess.run([LINTIAN, "--display-info", "--pedantic", "--show-overrides", "--fail-on", "none",
                             artifact(DEB)], capture_output=True, text=True, timeout=300)
    tags = [line for line in result.stdout.splitlines() if re.match(r"^[EWIPX]: ", line)]
    assert not tags and result.returncode == 0, result.stdout + result.stderr
    # Each override has a comment saying why, right above its group.
    lines = open(OVERRIDES).read().splitlines()
    for index, line in enumerate(lines):
        if line.startswith("pushhub: "):
            above = index - 1
            while above >= 0 and lines[above].startswith("pushhub: "):
                above -= 1
            assert above >= 0 and lines[above].startswith("#"), "override without a comment: " + line
    # ... and every override is still used (lintian would not say so without --show-overrides).
    for line in lines:
        if line.startswith("pushhub: "):
            tag = line.split()[1]
            assert "O: pushhub: " + tag in result.stdout, "override no longer needed: " + line


def unit_settings(text):
    """[Service] settings of a unit: {key: [values]} in order (no line continuations in ours)."""
    settings, section = {}, None
    for line in text.splitlines():
        line = line.strip()
        if not line or line[0] in "#;":
            continue
        if line.startswith("["):
            section = line
            continue
        if section == "[Service]":
            key, value = line.split("=", 1)
            settings.setdefault(key, []).append(value)
    return settings


def unit_environment(root, settings):
    """The hub's environment as systemd builds it from Environment= then EnvironmentFile= (the file
    wins; a leading "-" makes a missing file fine)."""
    environment = {}
    for assignment in settings.get("Environment", []):
        for word in assignment.split():
            key, value = word.split("=", 1)
            environment[key] = value
    for name in settings.get("EnvironmentFile", []):
        optional = name.startswith("-")
        path = root.file(name.lstrip("-"))
        if not os.path.exists(path) and optional:
            continue
        environment.update(systemd_environment_file(open(path).read()))
    return environment


@needs_root
@needs_debootstrap
def test_install_start_as_the_user_remove_and_purge(debian_root):
    root = debian_root
    root.install_debs(bookworm_deb("libssl3"))
    root.install_debs(artifact(DEB))

    # postinst: a system user and group, its data dir, the unit enabled (deb-systemd-helper).
    user = root.user("pushhub")
    assert user is not None, "no pushhub user"
    uid, gid, home, shell = user
    assert uid < 1000 and gid == root.group("pushhub")
    assert (home, shell) == ("/var/lib/pushhub", "/usr/sbin/nologin")
    data = os.stat(root.file("/var/lib/pushhub"))
    assert (data.st_uid, data.st_gid, data.st_mode & 0o7777) == (uid, gid, 0o700)
    assert os.path.islink(root.file("/etc/systemd/system/multi-user.target.wants/pushhub.service"))
    conffiles = root.run("dpkg-query", "--showformat=${Conffiles}", "--show", "pushhub").stdout
    assert sorted(line.split()[0] for line in conffiles.strip().splitlines()) == CONFFILES
    # Every installed file matches the package's md5sums (and the conffiles dpkg's own record).
    assert root.run("dpkg", "--verify", "pushhub").stdout == ""
    # Installing again (a reinstall runs postinst again) keeps the user as it is.
    root.install_debs(artifact(DEB))
    assert root.user("pushhub") == user

    # The hub as systemd would start it: the installed unit's ExecStart=, User=/Group=,
    # WorkingDirectory=, Environment= and EnvironmentFile= (no systemd runs in a chroot). The
    # ports: free ones instead of the env file's 8080/8081, which this machine may be using.
    settings = unit_settings(open(root.file(UNIT)).read())
    assert settings["User"] == ["pushhub"] and settings["Group"] == ["pushhub"]
    environment = unit_environment(root, settings)
    assert environment["PUSHHUB_CONFIG"] == "/etc/pushhub/pushhub.json"
    assert environment["PUSHHUB_DATA"] == "/var/lib/pushhub"
    client, admin = free_port(), free_port()
    assert environment["PUSHHUB_LISTEN"] == "127.0.0.1:8080" and environment["PUSHHUB_ADMIN"] == "127.0.0.1:8081"
    environment.update(PUSHHUB_LISTEN="127.0.0.1:%d" % client, PUSHHUB_ADMIN="127.0.0.1:%d" % admin)
    command = settings["ExecStart"][0].split()
    working = settings["WorkingDirectory"][0]

    def as_the_user():
        os.chroot(root.path)
        os.chdir(working)
        os.setgroups([])
        os.setgid(gid)
        os.setuid(uid)
        os.umask(int(settings["UMask"][0], 8))

    root.mount_proc()  # the static binary reads its arguments from /proc/self/cmdline
    log_path = root.file("/tmp/hub.log")
    with open(log_path, "w") as log:
        hub = subprocess.Popen(command, preexec_fn=as_the_user, stderr=log, env=environment)
    try:
        listening = wait_listening(log_path, hub)
        assert listening["data"] == "/var/lib/pushhub"
        with urllib.request.urlopen("http://127.0.0.1:%d%s" % (admin, READY_PATH), timeout=5) as response:
            assert response.status == 200
        token = os.stat(root.file("/var/lib/pushhub/admin.token"))
        assert (token.st_uid, token.st_mode & 0o777) == (uid, 0o600)
        assert os.stat("/proc/%d" % hub.pid).st_uid == uid
        # hubctl, as root in the root, finds the token in /var/lib/pushhub by itself.
        status = root.run("/usr/bin/hubctl", "--url", "http://127.0.0.1:%d" % admin, "--json", "status", timeout=20)
        assert json.loads(status.stdout)
    finally:
        hub.send_signal(signal.SIGTERM)
        hub.wait(timeout=20)
    assert hub.returncode == 0, open(log_path).read()
    root.unmount_proc()

    # remove: binaries and unit go; the conffiles (an edited one as edited) and the data stay.
    with open(root.file("/etc/pushhub/pushhub.env"), "a") as env_file:
        env_file.write("PUSHHUB_LOG_LEVEL=debug\n")
    root.run("dpkg", "--remove", "pushhub")
    for gone in ["/usr/bin/pushhub", "/usr/bin/hubctl", UNIT]:
        assert not os.path.exists(root.file(gone)), gone
    assert "PUSHHUB_LOG_LEVEL=debug" in open(root.file("/etc/pushhub/pushhub.env")).read()
    assert os.path.exists(root.file("/etc/pushhub/pushhub.json"))
    assert os.path.exists(root.file("/var/lib/pushhub/admin.token"))
    status = root.run("dpkg-query", "--showformat=${Status}", "--show", "pushhub").stdout
    assert status == "deinstall ok config-files"

    # purge: /etc/pushhub and /var/lib/pushhub go; the user and group stay (docs/packages.md).
    root.run("dpkg", "--purge", "pushhub")
    for gone in ["/etc/pushhub", "/var/lib/pushhub", "/etc/systemd/system/multi-user.target.wants/pushhub.service"]:
        assert not os.path.lexists(root.file(gone)), gone
    assert root.run("dpkg-query", "--show", "pushhub", check=False).returncode != 0
    assert root.user("pushhub") == user and root.group("pushhub") == gid
    leftovers = subprocess.run(["find", ".", "-xdev", "-name", "*pushhub*", "-not", "-path", "./tmp/*"], cwd=root.path,
                               capture_output=True, text=True).stdout.split()
    assert leftovers == [], leftovers

