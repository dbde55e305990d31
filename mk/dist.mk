# make dist: what an operator installs (docs/packages.md, docs/container.md), in dist/:
#   dist/stage/bin/{pushhub,hubctl}          static Swift runtime, stripped (scripts/dist/binaries.sh)
#   dist/pushhub-V-linux-ARCH.tar.gz         binaries, docs, deploy/, SHA256SUMS (scripts/dist/tarball.sh)
#   dist/pushhub_DEBV_DEBARCH.deb            the Debian 12 package (scripts/dist/deb.sh)
#   dist/pushhub-V-oci.tar                   the OCI image (mk/oci.mk)
#   dist/SHA256SUMS                          every artifact above (scripts/dist/checksums.sh)
# V is scripts/version.sh's version. Included by the Makefile.
#
# dist-check (part of `make test`) builds the same packages from debug binaries (DIST_CONFIG=debug:
# the same static link, a fraction of a clean release build's minutes) into .build-dist/check/ and
# runs Tests/Dist on them; dist-test runs those tests on `make dist`'s release artifacts in dist/.
# The tests unpack a cached `debootstrap --variant=minbase` Debian 12 root (.build-dist/, made
# once: scripts/dist/debian-root.sh) to run the binaries and install the .deb with chroot.

.PHONY: dist dist-binaries dist-tarball dist-deb dist-checksums dist-check dist-test dist-tools

DIST_DIR ?= dist
DIST_CONFIG ?= release
DIST_STAGE ?= $(DIST_DIR)/stage
DIST_CHECK_DIR := .build-dist/check
DIST_PYTEST ?= .venv/bin/python -m pytest -q

# dpkg-shlibdeps (dpkg-dev) for the .deb's Depends, lintian to check it, debootstrap for the
# throwaway Debian 12 root, binutils for strip/readelf.
dist-tools:
	@{ command -v dpkg-shlibdeps && command -v lintian && command -v debootstrap && command -v strip; } >/dev/null 2>&1 || { \
	  echo "installing dpkg-dev, lintian, debootstrap, binutils (make dist)"; apt-get update -qq && \
	  apt-get install -y -qq dpkg-dev lintian debootstrap binutils; }

dist-binaries: deps dist-tools
	DIST_CONFIG=$(DIST_CONFIG) SWIFT=$(SWIFT) sh scripts/dist/binaries.sh $(DIST_STAGE)

dist-tarball: dist-binaries
	sh scripts/dist/tarball.sh $(DIST_STAGE) $(DIST_DIR)

dist-deb: dist-binaries
	sh scripts/dist/deb.sh $(DIST_STAGE) $(DIST_DIR)

# After every artifact, the OCI image included (dist-oci, mk/oci.mk).
dist-checksums: dist-tarball dist-deb dist-oci
	sh scripts/dist/checksums.sh $(DIST_DIR)

dist: dist-checksums
	@ls -l $(DIST_DIR)/pushhub* $(DIST_DIR)/SHA256SUMS

# `make test`'s check: debug binaries (see above), a gzip -1 .deb (xz on 140 MB of debug binaries
# costs a minute), the whole Tests/Dist suite.
dist-check: venv
	rm -f $(DIST_CHECK_DIR)/pushhub-*-linux-*.tar.gz $(DIST_CHECK_DIR)/pushhub_*.deb $(DIST_CHECK_DIR)/SHA256SUMS
	$(MAKE) --no-print-directory dist-tarball dist-deb DIST_DIR=$(DIST_CHECK_DIR) DIST_CONFIG=debug DEB_COMPRESS=gzip DEB_COMPRESS_LEVEL=1
	sh scripts/dist/checksums.sh $(DIST_CHECK_DIR)
	DIST_DIR=$(DIST_CHECK_DIR) $(DIST_PYTEST) Tests/Dist --ignore-glob='Tests/Dist/test_oci*'

# The same tests on `make dist`'s release artifacts.
dist-test: dist venv
	DIST_DIR=$(DIST_DIR) $(DIST_PYTEST) Tests/Dist --ignore-glob='Tests/Dist/test_oci*'
