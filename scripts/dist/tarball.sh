#!/bin/sh
# tarball.sh: dist/pushhub-V-linux-ARCH.tar.gz, the static binaries with what an operator needs
# beside them: one top folder pushhub-V-linux-ARCH/ holding bin/ (pushhub, hubctl from the stage
# that binaries.sh made), docs/, deploy/ (the systemd unit, env file, nginx site, container file,
# dashboards; not deploy/debian, which only builds the .deb), README.md, and SHA256SUMS for its
# own files (`cd pushhub-V-linux-ARCH && sha256sum -c SHA256SUMS`).
#
# Only files git tracks go in (a stray local file never ships), as they are in the work tree.
# Reproducible: every mtime is the commit's time (SOURCE_DATE_EPOCH unless set), names sorted,
# owner root, gzip without a name or time: the same commit and binaries give the same bytes.
#
# Usage: scripts/dist/tarball.sh [STAGE [OUT]]   (defaults: dist/stage, dist)
set -eu
root=$(cd "$(dirname "$0")/../.." && pwd)
stage=$(cd "${1:-$root/dist/stage}" && pwd)
mkdir -p "${2:-$root/dist}"
out=$(cd "${2:-$root/dist}" && pwd)
version=$("$root/scripts/version.sh")
name=pushhub-$version-linux-$(uname -m)
epoch=${SOURCE_DATE_EPOCH:-$(git -C "$root" log -1 --format=%ct 2>/dev/null || echo 0)}

for product in pushhub hubctl; do
    [ -x "$stage/bin/$product" ] || { echo "tarball.sh: no $stage/bin/$product (run scripts/dist/binaries.sh)" >&2; exit 1; }
done

mkdir -p "$out"
work=$(mktemp -d "$out/.tarball.XXXXXX")
trap 'rm -rf "$work"' EXIT
top=$work/$name
mkdir -p "$top/bin"
cp "$stage/bin/pushhub" "$stage/bin/hubctl" "$top/bin/"
# Tracked files of docs/, deploy/ (less deploy/debian/) and README.md, as in the work tree (one
# deleted there but not in git is left out).
# shellcheck disable=SC2016 # the inner sh expands $f
(cd "$root" && git ls-files -z -- README.md docs deploy ':!deploy/debian') |
    (cd "$root" && xargs -0 sh -c 'for f; do if [ -f "$f" ]; then printf "%s\n" "$f"; fi; done' sh) > "$work/files"
while IFS= read -r file; do
    mkdir -p "$top/$(dirname "$file")"
    cp "$root/$file" "$top/$file"
done < "$work/files"
chmod -R u+rwX,go+rX,go-w "$top"
(cd "$top" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum > "$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$top/SHA256SUMS"

tar -C "$work" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf - "$name" | gzip -9n > "$out/$name.tar.gz.tmp"
mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
