"""The Swift client's Apple build, as far as Linux can check it (issue 29 item 0):
scripts/check-client-portability.py passes on the tree, and fails, naming the file, when a module
the client compiles on iOS imports a Linux-only module outside an `#if`, imports Synchronization,
depends on a Linux module unconditionally, or stops compiling on the branch Apple takes."""
import os
import shutil
import subprocess
import sys

import pytest

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SCRIPT = os.path.join(ROOT, "scripts", "check-client-portability.py")


def check(root, *extra):
    return subprocess.run([sys.executable, SCRIPT, "--root", root, *extra], capture_output=True, text=True,
                          timeout=600)


@pytest.fixture
def copy(tmp_path):
    """What the check reads (Package.swift, Sources/, the CryptoKit stand-in) in a folder a test may break."""
    target = tmp_path / "package"
    for part in ("Sources", os.path.join("Tests", "Portability")):
        shutil.copytree(os.path.join(ROOT, part), target / part)
    shutil.copy(os.path.join(ROOT, "Package.swift"), target / "Package.swift")
    return target


def edit(path, old, new):
    text = path.read_text()
    assert old in text, "%s no longer holds %r: update the test" % (path, old)
    path.write_text(text.replace(old, new, 1))


def test_the_client_checks_clean():
    run = check(ROOT)
    assert run.returncode == 0, run.stdout + run.stderr
    assert "compiles: Portable, ScreenTree, PushHubClient" in run.stdout, run.stdout


def test_an_unguarded_linux_import_is_named(copy):
    storage = copy / "Sources" / "PushHubClient" / "ClientStorage.swift"
    edit(storage, "import Foundation\n", "import Foundation\nimport Glibc\n")
    run = check(str(copy), "--skip-compile")
    assert run.returncode == 1
    assert "ClientStorage.swift:2: imports Glibc outside an #if" in run.stdout, run.stdout


def test_a_condition_whose_apple_side_cannot_be_compiled_here_is_named(copy):
    transport = copy / "Sources" / "PushHubClient" / "PlatformTransport.swift"
    edit(transport, "#if PUSHHUB_SOCKET_TRANSPORT", "#if os(Linux)")
    run = check(str(copy), "--skip-compile")
    assert run.returncode == 1, run.stdout
    assert "PlatformTransport.swift:6: tests os(Linux), whose Apple side this check cannot compile" in run.stdout, \
        run.stdout


def test_synchronization_is_refused_even_inside_an_if(copy):
    digest = copy / "Sources" / "ScreenTree" / "Digest.swift"
    edit(digest, "#if canImport(CryptoKit)\n", "#if canImport(Synchronization)\n    import Synchronization\n#endif\n"
         "#if canImport(CryptoKit)\n")
    run = check(str(copy), "--skip-compile")
    assert run.returncode == 1 and "Digest.swift:2: imports Synchronization" in run.stdout, run.stdout


def test_an_unconditional_linux_dependency_is_named(copy):
    package = copy / "Package.swift"
    edit(package, '.target(name: "Sockets", condition: .when(platforms: linux))', '"Sockets"')
    edit(package, '"ScreenTree", "Portable",', '"ScreenTree", "Portable", "COpenSSL",')
    run = check(str(copy), "--skip-compile")
    assert run.returncode == 1, run.stdout
    assert "needs the system library COpenSSL" in run.stdout, run.stdout
    assert "BlockingSocket.swift:1: imports Glibc outside an #if" in run.stdout, run.stdout


@pytest.mark.skipif(shutil.which("swiftc") is None, reason="no swiftc")
def test_code_that_only_compiles_with_linux_modules_is_named(copy):
    # The Apple branch of the digest is type-checked against the CryptoKit stand-in…
    digest = copy / "Sources" / "ScreenTree" / "Digest.swift"
    edit(digest, "Array(SHA256.hash(data: bytes))", "Array(SHA256.hash(data: bytes).bytes)")
    run = check(str(copy))
    assert run.returncode == 1 and "ScreenTree does not compile without Linux's modules" in run.stdout, run.stdout
    assert "has no member 'bytes'" in run.stdout, run.stdout
    # …and the core may not use what only the socket transport's modules define.
    edit(digest, "Array(SHA256.hash(data: bytes).bytes)", "Array(SHA256.hash(data: bytes))")
    edit(copy / "Sources" / "PushHubClient" / "Transport.swift", "public protocol ClientTransport: Sendable {",
         "public typealias Trust = TLSTrust\n\npublic protocol ClientTransport: Sendable {")
    run = check(str(copy))
    assert run.returncode == 1 and "PushHubClient does not compile" in run.stdout, run.stdout
    assert "cannot find type 'TLSTrust'" in run.stdout, run.stdout
