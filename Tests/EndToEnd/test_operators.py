"""Operator safety (issue 10): one hub per data dir, one hub per port — a second start fails fast
and says why, instead of two writers on one journal or two hubs answering in turn."""
import os
import signal
import subprocess
import tempfile

from conftest import BIN, Hub


def start_second(*flags):
    """Runs a pushhub that is expected to refuse to start; returns (exit code, stderr)."""
    process = subprocess.run(
        [os.path.join(BIN, "pushhub"), *flags], stdout=subprocess.PIPE, stderr=subprocess.PIPE, timeout=10, text=True)
    return process.returncode, process.stderr


def test_a_second_hub_on_the_same_data_dir_refuses_to_start_naming_the_first(hub_factory):
    first = hub_factory()
    data = os.path.join(first.data, "data")
    code, err = start_second("--listen", "127.0.0.1:0", "--admin", "127.0.0.1:0", "--data", data)
    assert code != 0 and "pid %d" % first.process.pid in err and "hub.lock" in err, err
    assert first.process.poll() is None
    first.process.send_signal(signal.SIGKILL)  # the kernel drops the lock with the process
    first.process.wait()
    again = Hub(data=first.data)
    try:
        assert again.process.poll() is None
    finally:
        again.process.kill()
        again.process.wait()


def test_a_second_hub_on_the_same_ports_refuses_to_start(hub_factory):
    first = hub_factory()
    other = tempfile.mkdtemp(prefix="pushhub-e2e-")
    for flags, named in (
        (("--listen", "127.0.0.1:%d" % first.port, "--admin", "127.0.0.1:0"), "--listen"),
        (("--listen", "127.0.0.1:0", "--admin", "127.0.0.1:%d" % first.admin_port), "--admin"),
    ):
        code, err = start_second(*flags, "--data", os.path.join(other, "data"))
        assert code != 0 and "already in use" in err and named in err, err
    assert first.process.poll() is None
