#!/bin/bash
# Build tests/host/fuzz-migrate-check.c with AddressSanitizer and UndefinedBehaviorSanitizer
# and run it for a bounded time. Any sanitizer report, failed property or crash exits
# non-zero. Prints the number of inputs tried.
#   fuzz-migrate-check.sh [SECONDS (default 20)] [SEED]
set -euo pipefail
secs=${1:-20}
seed=${2:-0x5e11}
here=$(cd "$(dirname "$0")" && pwd)
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
cc=${CC:-}
if [ -z "$cc" ]; then
	if command -v clang >/dev/null 2>&1; then cc=clang; else cc=gcc; fi
fi
# gcc warns about display strings cut short on purpose; clang has no such warning.
extra=()
if grep -q "Free Software Foundation" <<<"$("$cc" --version)"; then extra=(-Wno-format-truncation); fi
# The harness includes the tool with its main() left out, so some helpers go unused.
"$cc" -g -O1 -fno-omit-frame-pointer -fsanitize=address,undefined -fno-sanitize-recover=all \
	-Wall -Wextra -Werror -Wno-unused-function "${extra[@]}" \
	-o "$out/fuzz" "$here/fuzz-migrate-check.c"
rc=0
ASAN_OPTIONS=detect_leaks=1:abort_on_error=0 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
	timeout $((secs + 60)) "$out/fuzz" "$secs" "$seed" || rc=$?
if [ "$rc" -ne 0 ]; then
	echo "fuzz-migrate-check: FAILED (exit $rc, $cc, seed $seed)" >&2
	exit 1
fi
