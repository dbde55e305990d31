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
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
dist_setup "$@"
name=pushhub-$version-linux-$(uname -m)

top=$work/$name
mkdir -p "$top/bin"
cp "$stage/bin/pushhub" "$stage/bin/hubctl" "$top/bin/"
# Tracked files of docs/, deploy/ (less deploy/debian/) and README.md, as in the work tree (one
# deleted there but not in git is left out).
(cd "$root" && git ls-files -z -- README.md docs deploy ':!deploy/debian') > "$work/files.z"
tr '\0' '\n' < "$work/files.z" > "$work/files"
while IFS= read -r file; do
    [ -f "$root/$file" ] || continue
    mkdir -p "$top/$(dirname "$file")"
    cp "$root/$file" "$top/$file"
done < "$work/files"
chmod -R u+rwX,go+rX,go-w "$top"
(cd "$top" && find . -type f | sed 's|^\./||' | LC_ALL=C sort | xargs -d '\n' sha256sum > "$work/SHA256SUMS")
mv "$work/SHA256SUMS" "$top/SHA256SUMS"

# tar, then gzip: a failing tar fails the script (sh has no pipefail).
tar -C "$work" --sort=name --mtime="@$epoch" --owner=0 --group=0 --numeric-owner \
    --format=gnu -cf "$work/$name.tar" "$name"
gzip -9n "$work/$name.tar"
mv "$work/$name.tar.gz" "$out/$name.tar.gz"
echo "$out/$name.tar.gz"
