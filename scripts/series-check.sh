#!/bin/bash
# make series-check: bisectability. Every prefix of the series must build x86_64 with the
# selinux and lsm-all configs (and the prefix that adds a config option must configure).
# One tree, build/src/linux-6.1-series, gets the patches one at a time; after each, both
# configs are built incrementally in it (ccache keeps the untouched objects). Prints a
# table: patch, config, result, time.
#   series-check.sh [CONFIG...]     (default: selinux lsm-all)
set -euo pipefail
. "$(dirname "$0")/lib.sh"
"$ROOT/scripts/source.sh" 6.1 >/dev/null 2>&1 || die "make source failed"
configs=("$@")
[ ${#configs[@]} -gt 0 ] || configs=(selinux lsm-all)
for c in "${configs[@]}"; do check_config "$c"; done

SRC=$BUILD/src/linux-6.1
TREE=$BUILD/src/linux-6.1-series
DIR=$ROOT/patches/6.1
mapfile -t patches < <(grep -v '^#' "$DIR/series" | grep -v '^[[:space:]]*$')

info "fresh copy of linux-6.1 in $TREE"
rm -rf "$TREE"
mkdir -p "$TREE"
# A kernel build in the same tree (make test builds in the background) adds a build-*
# folder while tar reads ".": tar says "file changed as we read it" and exits 1, about a
# folder it leaves out anyway. Any other failure still stops the script.
{ (cd "$SRC" && tar --exclude='./build-*' --warning=no-file-changed -cf - .) || [ $? -eq 1 ]; } |
	tar -xpf - -C "$TREE"
rows=()
fails=0
build_all() { # build_all LABEL
	local c start out
	for c in "${configs[@]}"; do
		start=$SECONDS
		if out=$("$ROOT/scripts/kernel.sh" x86_64 6.1-series "$c" 2>&1); then
			rows+=("$(printf '%-66s %-8s %-8s %5ss' "$1" "$c" ok $((SECONDS - start)))")
		else
			fails=$((fails + 1))
			rows+=("$(printf '%-66s %-8s %-8s %5ss  %s' "$1" "$c" FAILED $((SECONDS - start)) \
				"$(echo "$out" | grep error | tail -1)")")
		fi
		info "$1 $c: $(echo "${rows[-1]}" | awk '{print $3, $4}')"
	done
}
build_all "(none: linux-6.1 as shipped)"
for p in "${patches[@]}"; do
	if ! (cd "$TREE" && patch -p1 --fuzz=0 -N -s <"$DIR/$p"); then
		die "$p does not apply to the series tree"
	fi
	echo "$p" >>"$TREE/.patched-with"
	build_all "$p"
done
printf '%-66s %-8s %-8s %6s\n' "series up to" config result time
printf '%s\n' "${rows[@]}"
echo "$fails failed, ${SECONDS}s"
[ "$fails" -eq 0 ]
