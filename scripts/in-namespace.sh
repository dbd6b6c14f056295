#!/usr/bin/env bash
# Runs a command in a user and mount namespace of its own, as its root: there it may mount a small tmpfs (the tests of a
# disk that fills up or turns read-only) without being root on the machine, and the mounts vanish with it. Linux only.
set -euo pipefail
if ! command -v unshare >/dev/null 2>&1; then
  echo "in-namespace: unshare (util-linux) is missing; the tests that mount a tmpfs need Linux with util-linux" >&2
  exit 1
fi
if ! probe=$(unshare --user --map-root-user --mount true 2>&1); then
  echo "in-namespace: this machine refuses $(id -un) a user namespace ($probe)." >&2
  echo "  The tests that mount a tmpfs need one: allow unprivileged user namespaces (sysctl" >&2
  echo "  kernel.unprivileged_userns_clone=1, or kernel.apparmor_restrict_unprivileged_userns=0 on Ubuntu), or run as root." >&2
  exit 1
fi
exec unshare --user --map-root-user --mount -- "$@"
