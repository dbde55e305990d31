#!/bin/sh
# debs.sh: Debian's .deb of each PACKAGE, the version apt's candidate names (this machine's apt
# sources, Debian 12 here), downloaded once into the cache .build-dist/debs/ (DIST_CACHE/debs) and
# kept there; prints their paths, one a line, in the order given. The one fetcher of .debs:
# oci.sh builds the image's base from them, the tests (Tests/Dist/distlib.py, bookworm_deb)
# install libssl3 in the bare Debian root from them. A new candidate (after `apt-get update`) is
# downloaded beside the old one; the pinned version keeps a build reproducible until then.
#
# Usage: scripts/dist/debs.sh PACKAGE...
# Needs apt-get and apt-cache; not root.
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
debs=${DIST_CACHE:-$root/.build-dist}/debs
[ $# -gt 0 ] || { echo "usage: debs.sh PACKAGE..." >&2; exit 2; }
mkdir -p "$debs"

# "package version" of each candidate, from one apt-cache call.
candidates=$(apt-cache show --no-all-versions "$@" 2> /dev/null |
    awk '/^Package: / { p = $2 } /^Version: / { print p, $2 }')
for package in "$@"; do
    version=$(printf '%s\n' "$candidates" | awk -v p="$package" '$1 == p { print $2; exit }')
    [ -n "$version" ] || { echo "debs.sh: apt has no $package (apt-get update?)" >&2; exit 1; }
    pool=$(printf '%s' "$version" | sed 's/:/%3a/') # pool names quote an epoch's colon
    found=""
    for attempt in cached downloaded; do
        for file in "$debs/${package}_${pool}_"*.deb; do
            if [ -e "$file" ]; then found=$file; break 2; fi
        done
        [ "$attempt" = cached ] || break
        (cd "$debs" && apt-get download -q -o APT::Sandbox::User=root "$package=$version" > /dev/null)
    done
    [ -n "$found" ] || { echo "debs.sh: apt-get download $package=$version left no .deb in $debs" >&2; exit 1; }
    printf '%s\n' "$found"
done
