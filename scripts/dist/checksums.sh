#!/bin/sh
# checksums.sh: DIR/SHA256SUMS, one `sha256sum` line for each artifact of this version in DIR (the
# tarball, the .deb, the OCI image tar when it is there), so that `cd DIR && sha256sum -c
# SHA256SUMS` checks a download. Runs after the artifacts are made (make dist).
#
# Usage: scripts/dist/checksums.sh [DIR]   (default dist)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
dir=${1:-$root/dist}
version=$("$root/scripts/version.sh")
debversion=$(printf '%s' "$version" | tr - '~') # scripts/version.sh --debian
tarball=pushhub-$version-linux-$(uname -m).tar.gz
deb=pushhub_${debversion}_$(dpkg --print-architecture).deb
oci=pushhub-$version-oci.tar

cd "$dir"
for required in "$tarball" "$deb"; do
    [ -f "$required" ] || { echo "checksums.sh: no $dir/$required" >&2; exit 1; }
done
files="$tarball $deb"
if [ -f "$oci" ]; then files="$files $oci"; fi
# shellcheck disable=SC2086 # the names have no spaces
sha256sum $files > SHA256SUMS.tmp || { rm -f SHA256SUMS.tmp; exit 1; }
mv SHA256SUMS.tmp SHA256SUMS
cat SHA256SUMS
