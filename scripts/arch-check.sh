#!/bin/bash
# make arch-check: does every architecture still build with the series?
#   arch-check.sh [ARCH...]      (default: every configs/arch-check/<arch>.conf)
# Per arch: its defconfig with every LSM the series touches turned on
# (configs/lsm-all.config merged on top), built through security/ and, where the arch file
# lists it, the full image; the same build of the unpatched tree gives the baseline, and
# a warning the patched build has that the baseline has not counts as a failure. Then
# every defconfig that used to set CONFIG_SECURITY_SELINUX_DISABLE goes through
# olddefconfig and savedefconfig with no trace of the symbol left. Prints a table.
# An arch whose cross compiler Debian does not ship is listed as not built, with why.
set -eu
. "$(dirname "$0")/lib.sh"
"$ROOT/scripts/patch.sh" >/dev/null 2>&1 || die "make patch failed"
need_pkgs build-essential bc bison flex libssl-dev libelf-dev ccache

dir=$ROOT/configs/arch-check
if [ $# -gt 0 ]; then arches=("$@"); else mapfile -t arches < <(names_in "$dir" .conf | tr ' ' '\n'); fi
for a in "${arches[@]}"; do
	[ -f "$dir/$a.conf" ] || die "unknown arch '$a' (one of: $(names_in "$dir" .conf))"
done
export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=true
export CCACHE_COMPILERCHECK=content KBUILD_BUILD_TIMESTAMP=1970-01-01
unset MAKEFLAGS MAKELEVEL MFLAGS
rows=()
row() { rows+=("$(printf '%-10s %-14s %-22s %-10s %6s  %s' "$@")"); }
fails=0

# build TREE ARCH TARGETS...: defconfig + LSMs, then the targets; warnings to a file.
build() {
	local tree=$1 a=$2 o
	shift 2
	o=$BUILD/src/linux-$tree/build-archcheck-$a
	mkdir -p "$o"
	local mk=(make -C "$BUILD/src/linux-$tree" O="$o" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE"
		CC="ccache ${CROSS_COMPILE}gcc" -j"$(nproc)")
	"${mk[@]}" "$DEFCONFIG" >"$o/check.log" 2>&1 || return 1
	(cd "$BUILD/src/linux-$tree" && ./scripts/kconfig/merge_config.sh -m -O "$o" "$o/.config" \
		"$ROOT/configs/lsm-all.config") >>"$o/check.log" 2>&1 || return 1
	"${mk[@]}" olddefconfig >>"$o/check.log" 2>&1 || return 1
	"${mk[@]}" "$@" >>"$o/check.log" 2>&1 || return 1
	# Warnings without line numbers or build paths, so the two trees compare.
	grep -E 'warning:' "$o/check.log" | sed -E 's/:[0-9]+:[0-9]+:/:/; s|/work/[^ ]*/linux-[^/]*/||' |
		sort -u >"$o/warnings"
}

for a in "${arches[@]}"; do
	KARCH="" CROSS_COMPILE="" CROSS_PKG="" DEFCONFIG="" TARGETS=""
	# shellcheck source=/dev/null
	. "$dir/$a.conf"
	start=$SECONDS
	if [ -n "$CROSS_PKG" ] && ! dpkg-query -W -f='${Status}' "$CROSS_PKG" 2>/dev/null | grep -q "ok installed"; then
		if ! apt-cache show "$CROSS_PKG" >/dev/null 2>&1; then
			row "$a" "-" "-" "not built" "-" "Debian bookworm has no $CROSS_PKG"
			continue
		fi
		need_pkgs "$CROSS_PKG"
	fi
	cc=$("${CROSS_COMPILE}gcc" -dumpfullversion 2>/dev/null || echo "?")
	info "$a: building the patched tree ($TARGETS)"
	# shellcheck disable=SC2086
	if ! build 6.1-patched "$a" $TARGETS; then
		fails=$((fails + 1))
		row "$a" "gcc $cc" "$TARGETS" "FAILED" "$((SECONDS - start))s" \
			"see build/src/linux-6.1-patched/build-archcheck-$a/check.log"
		continue
	fi
	info "$a: building the unpatched tree for the warning baseline"
	# shellcheck disable=SC2086
	build 6.1 "$a" $TARGETS || true
	new=$(comm -23 "$BUILD/src/linux-6.1-patched/build-archcheck-$a/warnings" \
		"$BUILD/src/linux-6.1/build-archcheck-$a/warnings" 2>/dev/null | wc -l)
	if [ "$new" -gt 0 ]; then
		fails=$((fails + 1))
		row "$a" "gcc $cc" "$TARGETS" "NEW WARN" "$((SECONDS - start))s" "$new warnings not in the unpatched build"
	else
		row "$a" "gcc $cc" "$TARGETS" "ok" "$((SECONDS - start))s" ""
	fi
done

# The defconfigs that carried the stale symbol: olddefconfig + savedefconfig, no trace.
for d in x86:x86_64_defconfig x86:i386_defconfig s390:defconfig s390:debug_defconfig \
	mips:bigsur_defconfig mips:loongson2k_defconfig mips:loongson3_defconfig \
	loongarch:loongson3_defconfig powerpc:ppc6xx_defconfig; do
	k=${d%%:*} c=${d#*:}
	o=$BUILD/src/linux-6.1-patched/build-defconfig-$k-$c
	mkdir -p "$o"
	res=ok
	if ! make -C "$BUILD/src/linux-6.1-patched" O="$o" ARCH="$k" "$c" savedefconfig >"$o/log" 2>&1; then
		res="FAILED (see $o/log)"
	elif grep -q SECURITY_SELINUX_DISABLE "$o/.config" "$o/defconfig" \
		"$BUILD/src/linux-6.1-patched/arch/$k/configs/$c"; then
		res="SYMBOL LEFT"
	fi
	[ "$res" = ok ] || fails=$((fails + 1))
	row "$k" "-" "$c savedefconfig" "$res" "-" "no CONFIG_SECURITY_SELINUX_DISABLE"
done

printf '%-10s %-14s %-22s %-10s %6s  %s\n' arch compiler built result time note
printf '%s\n' "${rows[@]}"
echo "$fails failed"
[ "$fails" -eq 0 ]
