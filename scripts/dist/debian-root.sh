#!/bin/sh
# debian-root.sh: a bare Debian 12 root for checking the tarball's binaries and installing the
# .deb on a system that has nothing of this machine's (no Swift, no -dev packages).
#
# The root is `debootstrap --variant=minbase bookworm` (what a minimal server has: libc6,
# libstdc++6, libgcc-s1, zlib1g, but not libssl3), made once and cached as a tarball under
# .build-dist/ (a second run, and every test, unpacks that instead of bootstrapping again: ~1 s
# against minutes). The mirror is the first `URIs:` of /etc/apt/sources.list.d/debian.sources (or
# the first `deb` line of /etc/apt/sources.list), else http://deb.debian.org/debian.
#
# Usage: scripts/dist/debian-root.sh cache          make the cache if missing; print its path
#        scripts/dist/debian-root.sh unpack DIR     a fresh copy of the root in DIR (made empty)
# (The .debs installed in it, libssl3 for one, come from scripts/dist/debs.sh.)
# Needs root (debootstrap, chroot ownership) and debootstrap (apt-get install debootstrap).
set -eu
here=$(cd "$(dirname "$0")/../.." && pwd)
cache_dir=${DIST_CACHE:-$here/.build-dist}
tarball=$cache_dir/bookworm-minbase.tar

mirror() {
    m=""
    if [ -f /etc/apt/sources.list.d/debian.sources ]; then
        m=$(sed -n 's/^URIs:[[:space:]]*\([^[:space:]]*\).*/\1/p' /etc/apt/sources.list.d/debian.sources | grep -v security | head -n 1)
    fi
    if [ -z "$m" ] && [ -f /etc/apt/sources.list ]; then
        m=$(sed -n 's/^deb[[:space:]]\{1,\}\(\[[^]]*\][[:space:]]*\)\{0,1\}\([^[:space:]]*\).*/\2/p' /etc/apt/sources.list | grep -v security | head -n 1)
    fi
    printf '%s\n' "${m:-http://deb.debian.org/debian}"
}

make_cache() {
    if [ -f "$tarball" ]; then return 0; fi
    command -v debootstrap > /dev/null || { echo "debian-root.sh: needs debootstrap (apt-get install debootstrap)" >&2; exit 1; }
    mkdir -p "$cache_dir"
    work=$cache_dir/bootstrap.$$
    rm -rf "$work"
    trap 'rm -rf "$work" "$work.tar"' EXIT
    trap 'exit 130' INT
    trap 'exit 143' TERM
    echo "debian-root.sh: debootstrap --variant=minbase bookworm from $(mirror) (once; cached as $tarball)" >&2
    debootstrap --variant=minbase bookworm "$work" "$(mirror)" > "$cache_dir/debootstrap.log" 2>&1 ||
        { tail -n 20 "$cache_dir/debootstrap.log" >&2; exit 1; }
    # No apt lists or downloaded .debs in the cache: the root is for dpkg -i, not apt.
    rm -rf "$work"/var/cache/apt/archives/*.deb "$work"/var/lib/apt/lists/*
    tar -C "$work" -cf "$work.tar" .
    mv "$work.tar" "$tarball"
    rm -rf "$work"
    trap - EXIT INT TERM
}

case "${1:-}" in
    cache)
        make_cache
        printf '%s\n' "$tarball"
        ;;
    unpack)
        dir=${2:?usage: debian-root.sh unpack DIR}
        make_cache
        rm -rf "$dir"
        mkdir -p "$dir"
        tar -C "$dir" -xf "$tarball"
        ;;
    *)
        echo "usage: debian-root.sh cache | unpack DIR" >&2
        exit 2
        ;;
esac
