#!/bin/bash
# real_btf.sh TEST_BINARY [VMLINUX]
#
# Runs test_agent_bpf_decide against a real kernel image: the controllers'
# v1 interfaces decided from its BTF (btf__parse reads the file, nothing is
# loaded) must agree with the image's .config. Without VMLINUX the patched
# 6.1 guest kernel that kernel/build made is used (kernel/build --print);
# its config is the `config` file beside the image. A missing image fails.
set -uo pipefail

BIN=${1:?usage: real_btf.sh TEST_BINARY [VMLINUX]}
VMLINUX=${2:-}
SRC=$(cd "$(dirname "$0")/../../../.." && pwd)

if [ -z "$VMLINUX" ]; then
	VMLINUX=$("$SRC/kernel/build" --print | sed -n 's/^vmlinux=//p')
	[ -n "$VMLINUX" ] || {
		echo "FAIL: kernel/build --print names no vmlinux: run kernel/build first" >&2
		exit 1
	}
fi
CONFIG=$(dirname "$VMLINUX")/config
[ -f "$VMLINUX" ] || { echo "FAIL: $VMLINUX missing" >&2; exit 1; }
[ -f "$CONFIG" ] || { echo "FAIL: $CONFIG (the image's .config) missing" >&2; exit 1; }
echo "kernel image: $VMLINUX"
exec "$BIN" "$VMLINUX" "$CONFIG"
