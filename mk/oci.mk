# The OCI image without a container engine or a registry (docs/container.md): scripts/dist/oci.sh
# builds dist/pushhub-V-oci.tar from Debian's .debs and the static binaries in $(OCI_STAGE)/bin;
# Tests/Dist/test_oci.py checks it with skopeo, umoci, a chroot, a second build and podman.
# Included by the Makefile (`include mk/oci.mk`).

# Where bin/pushhub and bin/hubctl are, and the target that makes them (dist's, mk/dist.mk). Set
# OCI_BINARIES= to use a stage made otherwise.
OCI_STAGE ?= dist/stage
OCI_BINARIES ?= dist-binaries

.PHONY: dist-oci oci-check oci-tools

# jq writes the image's JSON; skopeo, umoci, podman and runc are what the tests check it with
# (runc: crun refuses this machine's cgroup v1+v2 hybrid, see docs/container.md).
oci-tools:
	@{ command -v jq && command -v skopeo && command -v umoci && command -v podman && command -v runc; } >/dev/null 2>&1 || { \
	  echo "installing jq skopeo umoci podman runc (the OCI image and its tests)"; apt-get update -qq && \
	  apt-get install -y -qq --no-install-recommends jq skopeo umoci podman runc; }

dist-oci: $(OCI_BINARIES) oci-tools
	sh scripts/dist/oci.sh $(OCI_STAGE) dist

oci-check: dist-oci venv
	PUSHHUB_OCI_STAGE=$(OCI_STAGE) .venv/bin/python -m pytest -q Tests/Dist/test_oci.py
