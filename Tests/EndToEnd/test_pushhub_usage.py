"""pushhub's command line (issue 24 item 12): a flag or config error is one line saying what is
wrong and one pointing at `--help`, exit 2 — not followed by the 60-line usage, which buried the
message in journald. `--help` prints the usage."""
import json
import os
import subprocess

import pytest

from conftest import BIN


def pushhub(*args, env=None):
    return subprocess.run([os.path.join(BIN, "pushhub"), *args], capture_output=True, text=True, timeout=20,
                          env={**os.environ, **(env or {})}, cwd="/")


def config(tmp_path, **settings):
    path = tmp_path / "hub.json"
    path.write_text(json.dumps({"data": str(tmp_path / "data"), **settings}))
    return str(path)


def assert_one_line_and_a_hint(result, names):
    assert result.returncode == 2, result
    lines = result.stderr.splitlines()
    assert len(lines) == 2 and lines[0].startswith("Error: ") and names in lines[0], result.stderr
    assert lines[1] == "See 'pushhub --help'."
    assert result.stdout == ""


@pytest.mark.parametrize("args,env,names", [
    (("--loops", "0"), {}, "--loops"),
    (("--bogus",), {}, "--bogus"),
    (("--listen",), {}, "--listen"),
    (("--ping-interval", "5"), {}, "--ping-interval"),
    (("--tls-cert", "/nonexistent.pem"), {}, "--tls-key"),
    (("--config", "/nonexistent/hub.json"), {}, "/nonexistent/hub.json"),
    ((), {"PUSHHUB_DEV": "7es"}, "--dev"),
])
def test_a_flag_error_is_one_line_and_a_hint(args, env, names):
    assert_one_line_and_a_hint(pushhub(*args, env=env), names)


def test_a_config_file_error_is_one_line_and_a_hint(tmp_path):
    assert_one_line_and_a_hint(pushhub("--check-config", config(tmp_path, keep_verions=4)), "keep_verions")
    assert_one_line_and_a_hint(pushhub("--config", config(tmp_path, loops=0)), "loops")


def test_help_prints_the_usage_and_a_valid_config_says_so(tmp_path):
    helped = pushhub("--help")
    assert helped.returncode == 0 and helped.stdout.startswith("USAGE: pushhub") and "--drain-timeout" in helped.stdout
    checked = pushhub("--check-config", config(tmp_path, drain_timeout="1m30s"), "--idle-timeout", "1d")
    assert checked.returncode == 0 and "valid" in checked.stdout, checked


@pytest.mark.parametrize("binary", ["pushhub", "hubctl"])
def test_without_proc_the_binaries_refuse_instead_of_ignoring_their_flags(binary, tmp_path):
    """Issue 32: Swift reads the command line from /proc/self/cmdline on Linux, so in a root
    without /proc (a bare chroot, the OCI image run by hand) `pushhub --version` saw no flags and
    started a hub on the defaults in the working directory. Now both binaries say why and stop."""
    script = 'umount -l /proc && exec "$0" --version'
    run = subprocess.run(["unshare", "--mount", "--propagation", "private", "sh", "-c", script,
                          os.path.join(BIN, binary)], capture_output=True, text=True, timeout=10, cwd=tmp_path)
    assert run.returncode == 2 and "/proc/self/cmdline is missing" in run.stderr, run
    assert not os.path.exists(tmp_path / "data")
