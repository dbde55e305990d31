# The OCI image without a container engine or a registry (docs/container.md): scripts/dist/oci.sh
# builds DIR/pushhub-V-oci.tar (and DIR/oci/) from Debian's .debs and the static binaries in
# STAGE/bin; Tests/Dist/test_oci.py checks it with skopeo, umoci, a chroot, a second build and
# podman. Included by the Makefile after mk/dist.mk, whose DIST_DIR, DIST_STAGE, DIST_CHECK_DIR,
# DIST_PYTEST and dist-binaries it uses:
#   make dist-oci    the release image in dist/ (make dist depends on it)
#   make oci-check   `make test`'s check: the image from debug binaries in .build-dist/check/
#                    (DIST_CONFIG=debug, as dist-check) and the tests on it. When dist-check is
#                    among the goals too (`make test`, `make dist-check oci-check`), it runs after
#                    dist-check and packages the stage dist-check built instead of building again.
#   make oci-test    the same tests on make dist's release image in dist/

# Set OCI_BINARIES= to package a stage made otherwise (OCI_STAGE=...).
OCI_STAGE ?= $(DIST_STAGE)
OCI_BINARIES ?= dist-binaries
# Non-empty when this make runs dist-check too: oci-check then reuses its stage.
OCI_AFTER_DIST_CHECK := $(filter dist-check test,$(MAKECMDGOALS))

.PHONY: dist-oci oci-check oci-test oci-tools

# jq writes the image's JSON; skopeo, umoci, podman and runc are what the tests check it with
# (runc: crun refuses this machine's cgroup v1+v2 hybrid, see docs/container.md).
oci-tools:
	@{ command -v jq && command -v skopeo && command -v umoci && command -v podman && command -v runc; } >/dev/null 2>&1 || { \
	  echo "installing jq skopeo umoci podman runc (the OCI image and its tests)"; apt-get update -qq && \
	  apt-get install -y -qq --no-install-recommends jq skopeo umoci podman runc; }

dist-oci: $(OCI_BINARIES) oci-tools
	sh scripts/dist/oci.sh $(OCI_STAGE) $(DIST_DIR)

oci-check: venv $(if $(OCI_AFTER_DIST_CHECK),dist-check)
	$(MAKE) --no-print-directory dist-oci DIST_DIR=$(DIST_CHECK_DIR) DIST_CONFIG=debug $(if $(OCI_AFTER_DIST_CHECK),OCI_BINARIES=)
	DIST_DIR=$(DIST_CHECK_DIR) $(if $(filter command line,$(origin OCI_STAGE)),PUSHHUB_OCI_STAGE=$(OCI_STAGE)) \
	  $(DIST_PYTEST) Tests/Dist/test_oci.py

oci-test: dist-oci venv
	DIST_DIR=$(DIST_DIR) PUSHHUB_OCI_STAGE=$(OCI_STAGE) $(DIST_PYTEST) Tests/Dist/test_oci.py
