#!/bin/sh
# binaries.sh: pushhub and hubctl with the Swift runtime and Foundation linked in
# (--static-swift-stdlib), stripped, in STAGE/bin/ (default dist/stage/bin/). The tarball, the
# .deb and the OCI image all package these two files, so they are built once, here.
#
# They need only libc6, libstdc++6, libgcc-s1, libssl3 and zlib1g at run time; this script fails
# when `ldd` shows a libswift*/libFoundation* (the runtime was not linked in) or a library outside
# that set (e.g. libcurl from Foundation's URLSession).
#
# DIST_CONFIG=release (default) or debug: `make test` checks the packages with debug binaries
# (the same static link, minutes less to build); `make dist` ships release ones.
#
# The build has its own folder, .build-dist/swift (DIST_SCRATCH), incremental like .build/: objects
# compiled for --static-swift-stdlib name the static libraries (-lCoreFoundation, ...) to link, and
# SwiftPM does not recompile them when a later `swift build` in the same folder links dynamically
# (that link then fails), nor the other way round.
#
# Usage: scripts/dist/binaries.sh [STAGE]     (STAGE: default dist/stage)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=${1:-$root/dist/stage}
config=${DIST_CONFIG:-release}
scratch=${DIST_SCRATCH:-$root/.build-dist/swift}
swift=${SWIFT:-swift}
case "$config" in release | debug) ;; *) echo "binaries.sh: DIST_CONFIG is release or debug, not $config" >&2; exit 2 ;; esac

cd "$root"
# -z now: every symbol bound at start, so the GOT can be read-only (full RELRO; lintian's
# hardening-no-bindnow). --disable-local-rpath: no RUNPATH $ORIGIN (nothing is loaded from beside
# the binary; lintian's custom-library-search-path). PUSHHUB_DIST=1: Package.swift leaves
# URLSession (FoundationNetworking, which links libcurl) out of the Linux client library that
# hubctl links; on Linux the client uses its socket transport anyway.
#
# --version must name this version and commit. BuildInfoPlugin reruns when .git/HEAD, .git/index
# or the tags change, which a commit or a tag need not touch (nor exist in a git worktree, where
# .git is a file): a stale BuildCommit.swift (another version, as after tagging a commit already
# built, another commit, or another modified state) is removed so that it runs again (only a stale
# one: a rerun recompiles PushHub, all of it in release).
version=$(sh scripts/version.sh "$root")
head=$(git rev-parse HEAD 2> /dev/null || echo unknown)
if [ -n "$(git status --porcelain --untracked-files=no 2> /dev/null)" ]; then modified=true; else modified=false; fi
find "$scratch/plugins/outputs" -path '*/BuildInfoPlugin/Generated/BuildCommit.swift' 2> /dev/null |
    while IFS= read -r generated; do
        if ! grep -q -x -F "let buildVersion = \"$version\"" "$generated" ||
            ! grep -q -x -F "let buildCommit = \"$head\"" "$generated" ||
            ! grep -q -x -F "let buildHasUncommittedChanges = $modified" "$generated"; then
            rm -f "$generated"
        fi
    done
for product in pushhub hubctl; do
    PUSHHUB_DIST=1 "$swift" build -c "$config" --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now \
        --scratch-path "$scratch" --product "$product"
done
bin=$(PUSHHUB_DIST=1 "$swift" build -c "$config" --static-swift-stdlib --disable-local-rpath -Xlinker -z -Xlinker now \
    --scratch-path "$scratch" --show-bin-path)

mkdir -p "$stage/bin"
for product in pushhub hubctl; do
    rm -f "$stage/bin/$product"
    cp "$bin/$product" "$stage/bin/$product.tmp"
    strip --remove-section=.comment "$stage/bin/$product.tmp"
    chmod 0755 "$stage/bin/$product.tmp"
    mv "$stage/bin/$product.tmp" "$stage/bin/$product"
    if readelf -d "$stage/bin/$product" | grep -q -E 'RPATH|RUNPATH'; then
        echo "binaries.sh: $product has an RPATH/RUNPATH" >&2
        exit 1
    fi
    # Every library the binary loads must come from one of the five packages above.
    libs=$(ldd "$stage/bin/$product" | awk '{print $1}')
    for lib in $libs; do
        case "$lib" in
            linux-vdso.so.* | /lib64/ld-linux-*.so.* | libc.so.* | libm.so.* | libstdc++.so.* | \
                libgcc_s.so.* | libssl.so.3 | libcrypto.so.3 | libz.so.*) ;;
            *)
                echo "binaries.sh: $product loads $lib, outside libc6/libstdc++6/libgcc-s1/libssl3/zlib1g" >&2
                ldd "$stage/bin/$product" >&2
                exit 1
                ;;
        esac
    done
done
# The whole line, as BuildInfo.description writes it: "pushhub VERSION (commit SHA12)", with
# ", with uncommitted changes" before the ")" when tracked files differ from the commit.
commit=$(printf '%.12s' "$head")
if $modified; then changes=", with uncommitted changes"; else changes=""; fi
for product in pushhub hubctl; do
    printed=$("$stage/bin/$product" --version)
    expected="$product $version (commit $commit$changes)"
    if [ "$printed" != "$expected" ]; then
        echo "binaries.sh: $product --version prints '$printed', not '$expected'" >&2
        exit 1
    fi
done
ls -l "$stage/bin" >&2
