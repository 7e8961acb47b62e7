#!/bin/bash
# Build (or reuse) the minimal guest: only the kernel + busybox initramfs
# both lanes boot (tests/vmlib/common.sh, vm_build_boot), in
# $VMCACHE/vmlib/boot-<hash>; the guest's root is the host's own.
# Idempotent and safe to run concurrently (flock). Installs nothing; needs
# root for apt-get update when the package lists are missing.
# Exit status: 0 built or up to date, 77 the guest cannot be had here
# (missing tools, no kernel package), 1 an error.
set -euo pipefail
. "$(dirname "$0")/vm-common.sh"
trap 'log "ERROR: vm-build.sh failed at line $LINENO"' ERR
vm_build_boot
