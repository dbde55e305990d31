"""The OCI image dist/pushhub-V-oci.tar (scripts/dist/oci.sh, `make dist-oci`), checked with the
real tools: skopeo inspects the archive, umoci unpacks it into a runtime bundle whose root file
system runs the hub as uid 10001 (chroot, the bundle's own process spec), a second build gives the
same digest, `skopeo copy` to a docker-archive keeps the health check, and podman runs it when this
machine lets it (else the test skips with podman's error).

Environment: DIST_DIR (default dist), PUSHHUB_OCI_ARCHIVE (default DIST_DIR/pushhub-V-oci.tar),
PUSHHUB_OCI_STAGE (the binaries it was built from; default DIST_DIR/stage). Run as root (chroot,
setuid, podman)."""
import gzip
import hashlib
import http.client
import io
import json
import os
import re
import shutil
import signal
import subprocess
import tarfile
import time
import urllib.error
import urllib.request

import pytest

from distlib import (DIST_DIR, ROOT, RUNTIME_PACKAGES, STAGE as DIST_STAGE, VERSION, artifact,
                     assert_version_line, free_port, wait_listening)

REVISION = subprocess.check_output(["git", "-C", ROOT, "rev-parse", "HEAD"], text=True).strip()
EPOCH = int(os.environ.get("SOURCE_DATE_EPOCH")
            or subprocess.check_output(["git", "-C", ROOT, "log", "-1", "--format=%ct"], text=True))
ARCHIVE = os.environ.get("PUSHHUB_OCI_ARCHIVE", os.path.join(DIST_DIR, "pushhub-%s-oci.tar" % VERSION))
STAGE = os.environ.get("PUSHHUB_OCI_STAGE", DIST_STAGE)
UID = 10001
# The image's health check is deploy/Containerfile's (scripts/dist/oci.sh reads it): `hubctl probe
# live`, which asks the admin listener's /livez.
CONTAINERFILE = open(os.path.join(ROOT, "deploy", "Containerfile")).read()
HEALTHCHECK = re.search(r"^HEALTHCHECK (.*) \\\n\s+CMD (\[.*\])$", CONTAINERFILE, flags=re.M)
LIVE_PATH = "/livez"
# The packages of the libraries the binaries load (binaries.sh allows no other) and the CA bundle.
BASE_PACKAGES = RUNTIME_PACKAGES | {"ca-certificates"}
IMAGE_ENV = {"PUSHHUB_LISTEN": "0.0.0.0:8080", "PUSHHUB_ADMIN": "0.0.0.0:8081",
             "PUSHHUB_DATA": "/var/lib/pushhub", "PUSHHUB_DRAIN_TIMEOUT": "8s",
             "HUBCTL_URL": "http://127.0.0.1:8081"}


def run(*command, **kwargs):
    return subprocess.run(command, capture_output=True, text=True, timeout=kwargs.pop("timeout", 300), **kwargs)


def get(url):
    try:
        with urllib.request.urlopen(url, timeout=5) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def image_manifest(read):
    """The manifest of an OCI layout's one image; `read(name)` gives a layout file's bytes."""
    index = json.loads(read("index.json"))
    return json.loads(read("blobs/sha256/" + index["manifests"][0]["digest"][7:]))


@pytest.fixture(scope="module")
def archive():
    return artifact(ARCHIVE, make="`make dist-oci` (or `make oci-check`)")


@pytest.fixture(scope="module")
def raw_config(archive):
    """The config blob as stored (skopeo's parsed --config drops fields OCI does not define)."""
    result = run("skopeo", "inspect", "--config", "--raw", "oci-archive:" + archive)
    assert result.returncode == 0, result.stderr
    return json.loads(result.stdout)


@pytest.fixture(scope="module")
def bundle(archive, tmp_path_factory):
    """The image unpacked by umoci into a runtime bundle: rootfs/ and the OCI runtime config.json
    that umoci derives from the image config (user, args, env, cwd)."""
    work = tmp_path_factory.mktemp("oci")
    layout = work / "layout"
    layout.mkdir()
    with tarfile.open(archive) as tar:
        tar.extractall(layout)
    result = run("umoci", "unpack", "--image", "%s:pushhub:%s" % (layout, VERSION), str(work / "bundle"))
    assert result.returncode == 0, result.stderr
    # Every runtime mounts /proc; the binaries need it (Swift reads the arguments from
    # /proc/self/cmdline: without it they exit 2 saying so).
    proc = work / "bundle" / "rootfs" / "proc"
    proc.mkdir(exist_ok=True)
    subprocess.run(["mount", "-t", "proc", "proc", str(proc)], check=True)
    try:
        yield work / "bundle", layout
    finally:
        subprocess.run(["umount", str(proc)], check=True)
        shutil.rmtree(work)


@pytest.fixture
def scratch(tmp_path):
    """tmp_path, emptied afterwards (archives of 60 MB; pytest keeps the last three runs' dirs)."""
    yield tmp_path
    shutil.rmtree(tmp_path, ignore_errors=True)


# The tag of the Docker-format copy: podman loads it, and removes it afterwards by this name (not
# one a real image of this machine could have).
DOCKER_TAG = "localhost/pushhub-oci-test:%d" % os.getpid()


@pytest.fixture(scope="module")
def docker_archive(archive, tmp_path_factory):
    """The image copied by `skopeo copy` to Docker's archive format (what `docker load` and
    `podman load` read), once for the tests that use it."""
    folder = tmp_path_factory.mktemp("docker")
    target = folder / "docker.tar"
    result = run("skopeo", "copy", "-q", "oci-archive:" + archive, "docker-archive:%s:%s" % (target, DOCKER_TAG))
    assert result.returncode == 0, result.stderr
    yield target
    shutil.rmtree(folder, ignore_errors=True)


def test_skopeo_inspect_shows_the_image(archive, raw_config):
    result = run("skopeo", "inspect", "oci-archive:" + archive)
    assert result.returncode == 0, result.stderr
    image = json.loads(result.stdout)
    assert image["Os"] == "linux" and image["Architecture"] == "amd64"
    assert image["Labels"]["org.opencontainers.image.version"] == VERSION
    assert image["Labels"]["org.opencontainers.image.revision"] == REVISION
    assert image["Labels"]["org.opencontainers.image.source"]
    env = dict(entry.split("=", 1) for entry in image["Env"])
    assert {k: env[k] for k in IMAGE_ENV} == IMAGE_ENV
    assert image["Created"] == time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(EPOCH))

    # skopeo's parsed config (OCI's fields) shows the same, without Docker's Healthcheck.
    parsed = run("skopeo", "inspect", "--config", "oci-archive:" + archive)
    assert parsed.returncode == 0, parsed.stderr
    oci_config = json.loads(parsed.stdout)["config"]
    assert {k: v for k, v in raw_config["config"].items() if k != "Healthcheck"} == oci_config

    config = raw_config["config"]
    assert config["User"] == "%d:%d" % (UID, UID)
    assert set(config["ExposedPorts"]) == {"8080/tcp", "8081/tcp"}
    assert config["Entrypoint"] == ["/usr/local/bin/pushhub"]
    assert config["WorkingDir"] == "/var/lib/pushhub"
    assert set(config["Volumes"]) == {"/var/lib/pushhub"}
    assert config["StopSignal"] == "SIGTERM"
    # Docker's field (OCI has none): Podman and Docker apply it once the image is in Docker's
    # format (test_docker_archive_keeps_the_health_check).
    health = config["Healthcheck"]
    assert health["Test"] == ["CMD"] + json.loads(HEALTHCHECK.group(2))
    options = dict(re.findall(r"--([a-z-]+)=(\d+)", HEALTHCHECK.group(1)))
    assert health["Interval"] == int(options["interval"]) * 10**9 and health["Timeout"] == int(options["timeout"]) * 10**9
    assert health["StartPeriod"] == int(options["start-period"]) * 10**9 and health["Retries"] == int(options["retries"])
    # The Docker-engine image (deploy/Containerfile) has the same defaults.
    containerfile_env = dict(re.findall(r"\b([A-Z_]+)=(\S+)", CONTAINERFILE[CONTAINERFILE.index("\nENV "):CONTAINERFILE.index("\nUSER ")]))
    assert containerfile_env == IMAGE_ENV
    drain = re.fullmatch(r"(\d+)s", env["PUSHHUB_DRAIN_TIMEOUT"])
    assert drain and int(drain.group(1)) < 10  # Docker's and Podman's default stop timeout


def test_layers_are_reproducible_tars(bundle):
    """Sorted entries, one mtime (the commit's), owned by root except the data directory."""
    _, layout = bundle
    manifest = image_manifest(lambda name: (layout / name).read_bytes())
    entries = {}
    for layer in manifest["layers"]:
        assert layer["mediaType"] == "application/vnd.oci.image.layer.v1.tar+gzip"
        path = layout / "blobs" / "sha256" / layer["digest"][7:]
        assert hashlib.sha256(path.read_bytes()).hexdigest() == layer["digest"][7:]
        with gzip.open(path) as stream, tarfile.open(fileobj=stream) as tar:
            members = tar.getmembers()
        names = [m.name for m in members]
        assert names == sorted(names)
        for member in members:
            assert member.mtime == EPOCH, member.name
            entries[member.name] = member
    data = entries["var/lib/pushhub"]
    assert (data.uid, data.gid, data.mode) == (UID, UID, 0o700)
    others = [m.name for m in entries.values() if m.name != "var/lib/pushhub" and (m.uid, m.gid) != (0, 0)]
    assert others == []
    # distroless-style: no shell, no package manager, no setuid file.
    for absent in ("bin/sh", "usr/bin/sh", "bin/bash", "usr/bin/apt", "usr/bin/dpkg", "sbin/ldconfig"):
        assert absent not in entries
    assert [m.name for m in entries.values() if m.mode & 0o6000] == []
    assert {"usr/local/bin/pushhub", "usr/local/bin/hubctl", "etc/ssl/certs/ca-certificates.crt"} <= set(entries)


def test_rootfs_holds_what_the_binaries_need(bundle):
    directory, _ = bundle
    rootfs = directory / "rootfs"
    packages = set(os.listdir(rootfs / "var" / "lib" / "dpkg" / "status.d"))
    assert BASE_PACKAGES <= packages
    passwd = (rootfs / "etc" / "passwd").read_text()
    assert re.search(r"^pushhub:x:%d:%d:.*:/var/lib/pushhub:/sbin/nologin$" % (UID, UID), passwd, re.M)
    assert re.search(r"^pushhub:x:%d:$" % UID, (rootfs / "etc" / "group").read_text(), re.M)
    # OpenSSL's default paths (SSL_CTX_set_default_verify_paths) reach the bundle.
    bundle_file = os.path.realpath(str(rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt"))
    link = rootfs / "usr" / "lib" / "ssl" / "cert.pem"
    assert os.path.normpath(os.path.join(link.parent, os.readlink(link))) == bundle_file
    assert (rootfs / "etc" / "ssl" / "certs" / "ca-certificates.crt").read_text().count("BEGIN CERTIFICATE") > 100
    assert "bookworm" in (rootfs / "etc" / "os-release").read_text()


def test_rootfs_runs_the_hub_as_10001(bundle, raw_config):
    """The bundle's own process (umoci's config.json from the image config) in a chroot as 10001:
    the hub answers the liveness path on its admin port, the health check's command passes, SIGTERM
    drains it to exit 0, and the health check then fails."""
    directory, _ = bundle
    rootfs = str(directory / "rootfs")
    spec = json.load(open(directory / "config.json"))["process"]
    assert (spec["user"]["uid"], spec["user"]["gid"]) == (UID, UID)
    assert spec["args"] == ["/usr/local/bin/pushhub"] and spec["cwd"] == "/var/lib/pushhub"
    env = dict(entry.split("=", 1) for entry in spec["env"])
    # The image's 0.0.0.0:8080/8081 would collide with other hubs on this host (no network namespace).
    env["PUSHHUB_LISTEN"] = "127.0.0.1:%d" % free_port()
    env["PUSHHUB_ADMIN"] = "127.0.0.1:%d" % free_port()
    env["HUBCTL_URL"] = "http://" + env["PUSHHUB_ADMIN"]

    def enter():
        os.chroot(rootfs)
        os.chdir(spec["cwd"])
        os.setgroups([])
        os.setgid(spec["user"]["gid"])
        os.setuid(spec["user"]["uid"])

    version = run(*spec["args"], "--version", env=env, preexec_fn=enter, timeout=30)
    assert version.returncode == 0, version
    assert_version_line(version.stdout, "pushhub")
    log_path = os.path.join(str(directory), "hub.log")
    with open(log_path, "w") as log:
        hub = subprocess.Popen(spec["args"], env=env, preexec_fn=enter, stderr=log)
    try:
        wait_listening(log_path, hub)
        status, _ = get("http://%s%s" % (env["PUSHHUB_ADMIN"], LIVE_PATH))
        assert status == 200
        # The image config's Healthcheck command (what umoci unpacked is that config blob).
        test = raw_config["config"]["Healthcheck"]["Test"]
        assert test[0] == "CMD"
        check = test[1:]
        assert run(*check, env=env, preexec_fn=enter, timeout=10).returncode == 0
        owner = os.stat(os.path.join(rootfs, "var/lib/pushhub/admin.token"))
        assert (owner.st_uid, owner.st_gid) == (UID, UID)
        hub.send_signal(signal.SIGTERM)
        assert hub.wait(timeout=12) == 0
        assert run(*check, env=env, preexec_fn=enter, timeout=10).returncode != 0
    finally:
        if hub.poll() is None:
            hub.kill()
            hub.wait()


def test_second_build_gives_the_same_digest(archive, scratch):
    """scripts/dist/oci.sh again from the same stage and commit: byte-identical archive."""
    started = time.time()
    result = run("sh", os.path.join(ROOT, "scripts", "dist", "oci.sh"), STAGE, str(scratch), timeout=900)
    assert result.returncode == 0, result.stderr
    print("rebuild: %.1f s" % (time.time() - started))
    again = scratch / os.path.basename(archive)
    digest = lambda path: hashlib.sha256(open(path, "rb").read()).hexdigest()  # noqa: E731
    if digest(again) != digest(archive):
        with tarfile.open(archive) as tar:
            before = package_versions(lambda name: tar.extractfile(name).read())
        after = package_versions(lambda name: open(scratch / "oci" / name, "rb").read())
        changed = {p: (before.get(p), after.get(p)) for p in set(before) | set(after) if before.get(p) != after.get(p)}
        assert not changed, "Debian's packages changed since %s was built (apt-get update): %s" % (archive, changed)
        raise AssertionError("not reproducible (or %s was built from another stage: make dist-oci)" % archive)
    assert json.load(open(scratch / "oci" / "index.json")) == json.loads(
        tarfile.open(archive).extractfile("index.json").read())


def package_versions(read):
    """{package: version} from the base layer's var/lib/dpkg/status.d/ of a layout; `read(name)`
    gives a layout file's bytes."""
    manifest = image_manifest(read)
    layer = read("blobs/sha256/" + manifest["layers"][0]["digest"][7:])
    versions = {}
    with tarfile.open(fileobj=io.BytesIO(gzip.decompress(layer))) as tar:
        for member in tar.getmembers():
            if member.name.startswith("var/lib/dpkg/status.d/") and member.isfile():
                fields = dict(re.findall(r"^(Package|Version): (.*)$", tar.extractfile(member).read().decode(), re.M))
                versions[fields["Package"]] = fields["Version"]
    return versions


def test_docker_archive_keeps_the_health_check(docker_archive, raw_config):
    """`skopeo copy` to Docker's format keeps the config blob byte for byte, Healthcheck included:
    what `docker load` and `podman load` of that archive apply."""
    with tarfile.open(docker_archive) as tar:
        manifest = json.load(tar.extractfile("manifest.json"))
        config = json.load(tar.extractfile(manifest[0]["Config"]))
    assert manifest[0]["RepoTags"] == [DOCKER_TAG]
    assert config == raw_config


def podman(*args, timeout=120):
    return run("podman", "--runtime", "runc", *args, timeout=timeout)


# What this sandbox refuses (measured): crun cannot start under cgroups v1+v2 "hybrid" mode even
# with --cgroups=disabled, so the test uses runc; podman lowers its own RLIMIT_NPROC to 32768 and,
# without CAP_SYS_RESOURCE, cannot raise the container's back to the host's value.
SANDBOX_ERRORS = ("cgroups in hybrid mode", "setrlimit", "Operation not permitted", "not compatible with NoCgroups")


def test_podman_runs_the_image(docker_archive):
    """podman loads the Docker-format copy (so the health check applies), runs it with its ports
    published on free loopback ports, answers the liveness path, `podman healthcheck run` passes, and
    `podman stop` (SIGTERM) ends it with exit 0."""
    for tool in ("podman", "runc"):
        if shutil.which(tool) is None:
            pytest.skip("%s is not installed (make oci-tools)" % tool)
    name = "pushhub-oci-test-%d" % os.getpid()
    tag = DOCKER_TAG
    try:
        loaded = podman("load", "-q", "-i", str(docker_archive))
        assert loaded.returncode == 0, loaded.stderr
        inspected = podman("image", "inspect", tag, "--format", "{{json .HealthCheck}}")
        assert json.loads(inspected.stdout)["Test"][1] == "/usr/local/bin/hubctl"
        listen, admin = free_port(), free_port()
        # The image's own Env (0.0.0.0:8080/8081 inside, HUBCTL_URL for the health check), its
        # ports published on free loopback ports.
        started = podman("run", "-d", "--name", name,
                         "--ulimit", "nofile=1024:%d" % os.sysconf("SC_OPEN_MAX"),
                         "--ulimit", "nproc=32768:32768",
                         "-p", "127.0.0.1:%d:8080" % listen, "-p", "127.0.0.1:%d:8081" % admin, tag)
        if started.returncode != 0 and any(e in started.stderr for e in SANDBOX_ERRORS):
            pytest.skip("podman cannot run containers here: " + started.stderr.strip())
        assert started.returncode == 0, started.stderr
        deadline = time.time() + 15
        while True:
            try:
                status, _ = get("http://127.0.0.1:%d%s" % (admin, LIVE_PATH))
                break
            except (OSError, http.client.HTTPException):
                logs = podman("logs", name)
                assert time.time() < deadline, logs.stdout + logs.stderr
                time.sleep(0.1)
        assert status == 200
        # hubctl in the container finds the hub (HUBCTL_URL) and its token (/var/lib/pushhub).
        status_line = podman("exec", name, "/usr/local/bin/hubctl", "status")
        assert status_line.returncode == 0 and "connections:" in status_line.stdout, status_line
        # Periodic checks need systemd timers (none here); `healthcheck run` runs the image's once.
        health = podman("healthcheck", "run", name)
        assert health.returncode == 0, health.stdout + health.stderr
        assert podman("stop", "-t", "20", name).returncode == 0
        state = podman("inspect", name, "--format", "{{.State.ExitCode}}")
        assert state.stdout.strip() == "0"
        logs = podman("logs", name)
        assert '"msg":"stopped"' in logs.stdout + logs.stderr
    finally:
        podman("rm", "-f", "-v", name)  # -v: the anonymous volume of VOLUME /var/lib/pushhub
        podman("rmi", "-f", tag)
