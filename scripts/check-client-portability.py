#!/usr/bin/env python3
"""Checks, on Linux, what can be checked here of the Swift client's Apple build (no Apple SDK):

1. The modules an iOS or macOS app compiles with PushHubClient: its dependencies in
   Package.swift (from `swift package dump-package`) that apply on iOS, followed transitively.
   None may be a system library (COpenSSL, CZlib, CLinux are Linux's).
2. Their imports: at the top level only Foundation, Dispatch and those modules; anything else
   (Glibc, FoundationNetworking, CryptoKit, the Linux-only WSProtocol and Sockets) only inside an
   `#if` (`#if canImport(CryptoKit)`); `Synchronization` nowhere: its `Mutex` and `Atomic` need
   iOS 18, above the package's iOS 16. No `#if` on what this check cannot take Apple's side of
   (`os(Linux)`, `canImport(Glibc)`): Linux-only code goes under `PUSHHUB_SOCKET_TRANSPORT`, which
   Package.swift defines on Linux and this check leaves undefined.
3. They type-check without the Linux-only modules, against a stand-in for CryptoKit
   (Tests/Portability/CryptoKit.swift): the branches Apple's platforms take compile, and nothing
   outside them reaches for OpenSSL, zlib, epoll or our sockets.

What stays unchecked: Apple's own frameworks (URLSession's Apple-only API, CryptoKit's real
signatures), availability, and Glibc functions reached through Linux's Foundation (which
re-exports Glibc, as Apple's re-exports Darwin); those need Xcode. docs/clients.md says so.

Usage: check-client-portability.py [--root DIR] [--swiftc PATH] [--skip-compile]
Exits 1 naming each problem."""
import argparse
import json
import os
import re
import subprocess
import sys
import tempfile

CLIENT = "PushHubClient"
APPLE = "ios"
ALWAYS_IMPORTABLE = {"Foundation", "Dispatch"}
NEVER_IMPORTABLE = {"Synchronization": "its Mutex and Atomic need iOS 18 (the package supports iOS 16)"}
IMPORT = re.compile(r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*import\s+(?:(?:struct|class|enum|protocol|typealias|func|var|let)\s+)?([A-Za-z_]\w*)")
CONDITION_OPEN = re.compile(r"^\s*#if\b")
CONDITION_CLOSE = re.compile(r"^\s*#endif\b")
LINUX_SIDED = re.compile(r"^\s*#(?:if|elseif)\b.*(os\(Linux\)|canImport\((?:Glibc|Musl)\))")


def package_targets(root):
    dump = subprocess.run(["swift", "package", "dump-package"], cwd=root, capture_output=True, text=True,
                          check=True)
    return {target["name"]: target for target in json.loads(dump.stdout)["targets"]}


def applies_on_apple(dependency):
    """The name of a target dependency and whether it applies when building for iOS."""
    (kind, fields), = dependency.items()
    name, condition = fields[0], fields[-1]
    if kind == "product":
        raise SystemExit("%s depends on a package product (%s): the package declares none" % (CLIENT, name))
    platforms = (condition or {}).get("platformNames")
    return name, platforms is None or APPLE in platforms


def apple_closure(targets):
    """The client's modules on Apple's platforms, dependencies first."""
    ordered, seen = [], set()

    def visit(name):
        if name in seen:
            return
        seen.add(name)
        for dependency in targets[name]["dependencies"]:
            child, applies = applies_on_apple(dependency)
            if applies:
                visit(child)
        ordered.append(name)

    visit(CLIENT)
    return ordered


def sources(root, target):
    folder = os.path.join(root, target.get("path") or os.path.join("Sources", target["name"]))
    found = []
    for directory, _, files in os.walk(folder):
        found += [os.path.join(directory, name) for name in files if name.endswith(".swift")]
    return sorted(found)


def import_problems(path, modules):
    """Each top-level import of a module an Apple build lacks, and each import of a banned one."""
    problems, depth = [], 0
    with open(path, encoding="utf-8") as file:
        for number, line in enumerate(file, 1):
            sided = LINUX_SIDED.match(line)
            if sided:
                problems.append("%s:%d: tests %s, whose Apple side this check cannot compile: use "
                                "PUSHHUB_SOCKET_TRANSPORT (defined on Linux by Package.swift)" % (path, number, sided.group(1)))
            if CONDITION_OPEN.match(line):
                depth += 1
            elif CONDITION_CLOSE.match(line):
                depth -= 1
            match = IMPORT.match(line)
            if not match:
                continue
            module = match.group(1)
            where = "%s:%d" % (path, number)
            if module in NEVER_IMPORTABLE:
                problems.append("%s: imports %s: %s" % (where, module, NEVER_IMPORTABLE[module]))
            elif depth == 0 and module not in ALWAYS_IMPORTABLE and module not in modules:
                problems.append("%s: imports %s outside an #if: an iOS build of %s has no such module"
                                % (where, module, CLIENT))
    return problems


def type_check(root, targets, closure, swiftc):
    """Compiles the closure, module by module, seeing only itself and the CryptoKit stand-in."""
    problems = []
    with tempfile.TemporaryDirectory() as modules:
        stand_in = os.path.join(root, "Tests", "Portability", "CryptoKit.swift")
        steps = [("CryptoKit", [stand_in])] + [(name, sources(root, targets[name])) for name in closure]
        for name, files in steps:
            command = [swiftc, "-swift-version", "6", "-parse-as-library", "-warnings-as-errors",
                       "-module-name", name, "-I", modules, "-emit-module",
                       "-emit-module-path", os.path.join(modules, name + ".swiftmodule"),
                       "-c", "-o", os.path.join(modules, name + ".o"), "-wmo", *files]
            run = subprocess.run(command, capture_output=True, text=True)
            if run.returncode != 0:
                problems.append("%s does not compile without Linux's modules:\n%s" % (name, run.stderr.strip()))
                break
    return problems


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--root", default=os.path.join(os.path.dirname(os.path.abspath(__file__)), ".."))
    parser.add_argument("--swiftc", default="swiftc")
    parser.add_argument("--skip-compile", action="store_true", help="only the dependency and import checks")
    options = parser.parse_args()
    root = os.path.abspath(options.root)
    targets = package_targets(root)
    closure = apple_closure(targets)
    problems = ["%s needs the system library %s on Apple's platforms: make that dependency Linux-only"
                % (CLIENT, name) for name in closure if targets[name]["type"] == "system"]
    for name in closure:
        for path in sources(root, targets[name]):
            problems += import_problems(path, set(closure))
    if not problems and not options.skip_compile:
        problems += type_check(root, targets, closure, options.swiftc)
    print("%s on Apple's platforms compiles: %s" % (CLIENT, ", ".join(closure)))
    for problem in problems:
        print("problem: " + problem)
    print("ok" if not problems else "%d problem(s)" % len(problems))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
