#!/bin/sh
# Prints PushHub's version, the one in --version, in every artifact's name and in the .deb:
#   - on a commit tagged vX.Y.Z:             X.Y.Z
#   - otherwise:                              B-dev.N.gSHA
#     B is the base in the file VERSION (the release being worked towards), N the number of commits
#     since the last vX.Y.Z tag (or since the first commit when there is none), SHA the commit's
#     first 12 hex digits. `-dev.N` sorts below B in SemVer and, as `~dev.N`, in Debian.
#   - outside a git checkout (a source tarball): B-dev.0.unknown
# `--debian` prints the same with - turned into ~ (Debian's "sorts before the release").
# Usage: scripts/version.sh [--debian] [ROOT]   (ROOT: the checkout; default: this script's parent)
set -eu
debian=false
if [ "${1:-}" = "--debian" ]; then debian=true; shift; fi
root=${1:-$(cd "$(dirname "$0")/.." && pwd)}
base=$(tr -d ' \n\r\t' < "$root/VERSION")
if exact=$(git -C "$root" describe --tags --exact-match --match 'v[0-9]*' HEAD 2>/dev/null); then
    version=${exact#v}
elif sha=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null); then
    if last=$(git -C "$root" describe --tags --abbrev=0 --match 'v[0-9]*' HEAD 2>/dev/null); then
        count=$(git -C "$root" rev-list --count "$last..HEAD")
    else
        count=$(git -C "$root" rev-list --count HEAD)
    fi
    version="$base-dev.$count.g$sha"
else
    version="$base-dev.0.unknown"
fi
if $debian; then version=$(printf '%s' "$version" | tr '-' '~'); fi
printf '%s\n' "$version"
