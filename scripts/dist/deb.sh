#!/bin/sh
# deb.sh: dist/pushhub_DEBV_DEBARCH.deb with `dpkg-deb --root-owner-group --build` alone (no
# debhelper): the static binaries from the stage (binaries.sh), the systemd unit derived from
# deploy/pushhub.service, /etc/pushhub/{pushhub.json,pushhub.env} as conffiles and the maintainer
# scripts, copyright, changelog and lintian overrides of deploy/debian/. docs/packages.md says
# what it installs and what remove/purge leave.
#
# The unit: deploy/pushhub.service with ExecStart=/usr/bin/pushhub (not /usr/local/bin) and
# Environment=PUSHHUB_CONFIG=/etc/pushhub/pushhub.json; its install-by-hand header comment is
# replaced. Depends: dpkg-shlibdeps over the two binaries (dpkg-dev), i.e. the packages whose
# libraries they load, with the versions their symbols need.
# Reproducible: mtimes and the changelog's date are the commit's time (SOURCE_DATE_EPOCH).
#
# Usage: scripts/dist/deb.sh [STAGE [OUT]]   (defaults: dist/stage, dist)
#        DEB_COMPRESS=xz|gzip (default xz, dpkg-deb's own default), DEB_COMPRESS_LEVEL=1..9
#        (default: dpkg-deb's; `make test` uses gzip -1 on its debug binaries: seconds, not a minute)
set -eu
# umask 022 (common.sh): the package's directories are 0755 whatever the caller's umask.
# shellcheck source-path=SCRIPTDIR source=common.sh
. "$(dirname "$0")/common.sh"
dist_setup "$@"
debian=$root/deploy/debian
debversion=$(printf '%s' "$version" | tr - '~') # scripts/version.sh --debian
debarch=$(dpkg --print-architecture)
commit=$(git -C "$root" rev-parse --short=12 HEAD 2>/dev/null || echo unknown)
compress=${DEB_COMPRESS:-xz}
level=${DEB_COMPRESS_LEVEL:+-z$DEB_COMPRESS_LEVEL}
command -v dpkg-shlibdeps > /dev/null || { echo "deb.sh: needs dpkg-shlibdeps (apt-get install dpkg-dev)" >&2; exit 1; }

pkg=$work/pkg
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/lib/systemd/system" "$pkg/etc/pushhub" \
    "$pkg/usr/share/doc/pushhub" "$pkg/usr/share/lintian/overrides"

install -m 0755 "$stage/bin/pushhub" "$stage/bin/hubctl" "$pkg/usr/bin/"
install -m 0644 "$debian/pushhub.json" "$pkg/etc/pushhub/pushhub.json"
install -m 0644 "$root/deploy/pushhub.env" "$pkg/etc/pushhub/pushhub.env"
install -m 0644 "$debian/copyright" "$pkg/usr/share/doc/pushhub/copyright"
install -m 0644 "$debian/lintian-overrides" "$pkg/usr/share/lintian/overrides/pushhub"
sed -e "s|@DEBVERSION@|$debversion|g" -e "s|@VERSION@|$version|g" -e "s|@COMMIT@|$commit|g" \
    -e "s|@DATE@|$(LC_ALL=C date -u -R -d "@$epoch")|g" "$debian/changelog.in" > "$work/changelog"
gzip -9n < "$work/changelog" > "$pkg/usr/share/doc/pushhub/changelog.gz"
chmod 0644 "$pkg/usr/share/doc/pushhub/changelog.gz"

# The unit. Each edit must apply once: a changed deploy/pushhub.service fails here, not silently.
unit=$pkg/lib/systemd/system/pushhub.service
{
    echo "# pushhub.service as installed by the pushhub .deb (docs/packages.md): deploy/pushhub.service"
    echo "# with ExecStart=/usr/bin/pushhub and PUSHHUB_CONFIG=/etc/pushhub/pushhub.json. Override it"
    echo "# with \`systemctl edit pushhub\`; settings go in /etc/pushhub/pushhub.env or pushhub.json."
    echo "#"
    # Drop the header up to its first bare "#" line (install-by-hand steps that do not apply here).
    awk 'skipping && $0 == "#" { skipping = 0; next } !skipping' skipping=1 "$root/deploy/pushhub.service"
} > "$work/unit"
sed -e 's|^ExecStart=/usr/local/bin/pushhub$|ExecStart=/usr/bin/pushhub|' \
    -e 's|^\(Environment=PUSHHUB_DATA=.*\)$|\1\nEnvironment=PUSHHUB_CONFIG=/etc/pushhub/pushhub.json|' "$work/unit" > "$unit"
chmod 0644 "$unit"
for expected in '^ExecStart=/usr/bin/pushhub$' '^Environment=PUSHHUB_CONFIG=/etc/pushhub/pushhub.json$' '^EnvironmentFile=-/etc/pushhub/pushhub.env$' '^# Hardening:'; do
    [ "$(grep -c -e "$expected" "$unit")" = 1 ] ||
        { echo "deb.sh: deploy/pushhub.service changed: no single line matching $expected in the derived unit" >&2; exit 1; }
done

# Depends, from the libraries the binaries load (dpkg-shlibdeps wants a debian/control to run in).
mkdir -p "$work/shlibs/debian"
printf 'Source: pushhub\n\nPackage: pushhub\nArchitecture: any\n' > "$work/shlibs/debian/control"
# Its output to a file, then sed: in a pipe its failure would go unseen (sh has no pipefail).
(cd "$work/shlibs" && dpkg-shlibdeps -O "$pkg/usr/bin/pushhub" "$pkg/usr/bin/hubctl" > "$work/shlibs.out" 2> "$work/shlibs.log") ||
    { cat "$work/shlibs.log" >&2; echo "deb.sh: dpkg-shlibdeps failed" >&2; exit 1; }
depends=$(sed -n 's/^shlibs:Depends=//p' "$work/shlibs.out")
[ -n "$depends" ] || { cat "$work/shlibs.log" >&2; echo "deb.sh: dpkg-shlibdeps found no Depends" >&2; exit 1; }

for maintainer_script in postinst prerm postrm; do
    install -m 0755 "$debian/$maintainer_script" "$pkg/DEBIAN/$maintainer_script"
done
install -m 0644 "$debian/conffiles" "$pkg/DEBIAN/conffiles"
# md5sums: every file but the conffiles (dpkg tracks those itself), as dh_md5sums writes it.
sed 's|^/||' "$pkg/DEBIAN/conffiles" > "$work/conffiles.rel"
(cd "$pkg" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
    grep -v -x -F -f "$work/conffiles.rel" | xargs -d '\n' md5sum) > "$pkg/DEBIAN/md5sums"
chmod 0644 "$pkg/DEBIAN/md5sums"
installed_size=$(du -s -k --apparent-size --exclude=DEBIAN "$pkg" | cut -f1)
sed -e "s|@DEBVERSION@|$debversion|" -e "s|@DEBARCH@|$debarch|" -e "s|@DEPENDS@|$depends|" \
    -e "s|@INSTALLED_SIZE@|$installed_size|" "$debian/control.in" > "$pkg/DEBIAN/control"
chmod 0644 "$pkg/DEBIAN/control"

find "$pkg" -exec touch -h -d "@$epoch" {} +
deb=$out/pushhub_${debversion}_${debarch}.deb
# shellcheck disable=SC2086 # $level is empty or one word
dpkg-deb --root-owner-group -Z"$compress" $level --build "$pkg" "$work/pushhub.deb" > /dev/null
mv "$work/pushhub.deb" "$deb"
echo "$deb"
