#!/bin/bash
# make arch-check: does every architecture still build with the series?
#   arch-check.sh [--no-image] [--defconfigs-only | --no-defconfigs] [--defconfig KARCH:NAME]...
#                 [--tree NAME] [--rows FILE] [--table FILE] [--fresh] [ARCH...]
#     ARCH: default every arch of configs/arch/<arch>.yaml; --tree: the tree checked
#     (default 6.1-patched; "6.1" is the negative control, whose defconfigs still turn
#     runtime disable on); --defconfigs-only: only the defconfig/savedefconfig part;
#     --no-defconfigs: without it (what the rerun line of failed builds uses); --defconfig:
#     only these of the nine defconfigs (as the table names them, x86:i386_defconfig); --rows: where
#     the rows go for python3 -m harness.archmerge (default results/arch-check/rows.tsv);
#     --table: where the table goes (default results/arch-check/table.txt; the suite's
#     negative controls write theirs elsewhere, so the slice's table is the one left);
#     --fresh: run every defconfig's kconfig again, even one whose result is kept.
# Per arch: its defconfig with every LSM the series touches turned on
# (configs/lsm-all.config merged on top, then the check.config options of the arch's data
# file where it has them, in both trees; i386's turns -Werror off), built through security/ and
# the other objects that include lsm_hooks.h (kernel/bpf/, and bpf_trace.o where BPF
# events are on) and, where the arch file lists it and --no-image is not given, the full
# image. The same build of the unpatched tree gives the baseline: a warning the patched
# build has that the baseline has not counts as a failure (a patched build with no warning
# needs no baseline). Then every defconfig that sets CONFIG_SECURITY_SELINUX_DISABLE goes
# through make <defconfig> and savedefconfig, and runtime disable must end up off. Prints a table. An arch whose cross compiler Debian does not ship is
# listed as not built, with why; an LSM the arch cannot have (BPF LSM needs a BPF JIT) is
# named in the note. An arch whose build fails the same way on the unpatched tree is
# listed as BASE BROKEN with the first error, and not counted against the series.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
images=yes builds=yes check_defconfigs=yes fresh=no tree=6.1-patched rows_file=$ROOT/results/arch-check/rows.tsv
only_defconfigs=()
table_file=$ROOT/results/arch-check/table.txt
while [ $# -gt 0 ]; do
	case $1 in
	--no-image) images=no ;;
	--defconfigs-only) builds=no ;;
	--no-defconfigs) check_defconfigs=no ;;
	--fresh) fresh=yes ;;
	--defconfig)
		[ -n "${2:-}" ] || die "--defconfig needs KARCH:NAME (x86:i386_defconfig)"
		only_defconfigs+=("$2")
		shift ;;
	--tree)
		[ $# -ge 2 ] || die "--tree needs a name (6.1-patched or 6.1)"
		tree=$2
		shift ;;
	--rows)
		[ -n "${2:-}" ] || die "--rows needs a file name"
		rows_file=$2
		shift ;;
	--table)
		[ -n "${2:-}" ] || die "--table needs a file name"
		table_file=$2
		shift ;;
	--*) die "unknown option '$1' (--no-image, --defconfigs-only, --no-defconfigs, --defconfig KARCH:NAME, --tree NAME, --rows FILE, --table FILE, --fresh)" ;;
	*) break ;;
	esac
	shift
done
case $tree in 6.1-patched | 6.1) ;; *) die "unknown tree '$tree' (6.1-patched or 6.1)" ;; esac
[ "$builds" = yes ] || [ $# -eq 0 ] || die "--defconfigs-only takes no arch"
[ "$builds" = yes ] || [ "$check_defconfigs" = yes ] || die "--defconfigs-only and --no-defconfigs leave nothing to do"
[ "$check_defconfigs" = yes ] || [ ${#only_defconfigs[@]} -eq 0 ] || die "--defconfig and --no-defconfigs leave nothing to do"
# The defconfigs that set the removed symbol (the series leaves their stale line alone, as
# stable rules ask).
defconfigs=(x86:x86_64_defconfig x86:i386_defconfig s390:defconfig s390:debug_defconfig
	mips:bigsur_defconfig mips:loongson2k_defconfig mips:loongson3_defconfig
	loongarch:loongson3_defconfig powerpc:ppc6xx_defconfig)
declare -A known=() asked=()
for d in "${defconfigs[@]}"; do known[$d]=1; done
for d in "${only_defconfigs[@]}"; do
	[ -n "${known[$d]:-}" ] || die "unknown defconfig $(printf '%q' "$d") (one of: ${defconfigs[*]})"
	[ -z "${asked[$d]:-}" ] || die "--defconfig $d given twice"
	asked[$d]=1
done
[ ${#only_defconfigs[@]} -eq 0 ] || defconfigs=("${only_defconfigs[@]}")
# HARNESS_ARCH_DIR: another folder of arch data files (the tests use one with a faulty
# compiler); harness/arch.py reads it instead of configs/arch.
need_pkgs python3 python3-yaml
if [ $# -gt 0 ]; then
	arches=("$@")
else
	read -r -a arches <<<"$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch names)"
fi
for a in "${arches[@]}"; do
	err=$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch shell "$a" 2>&1 >/dev/null) || die "${err#error: }"
done
"$ROOT/scripts/patch.sh" >/dev/null 2>&1 || die "make patch failed (run it alone to see why)"
T=$BUILD/src/linux-$tree
need_pkgs build-essential bc bison flex libssl-dev libelf-dev ccache

ccache_env
export KBUILD_BUILD_TIMESTAMP=1970-01-01
unset MAKEFLAGS MAKELEVEL MFLAGS
rows=() tsv=()
# The fields as one tab-separated line; a tab, newline or backslash in a field (a compiler's
# error line may hold one) is escaped, so a reader gets the fields back exactly as printed.
tsv_line() {
	local f line esc=()
	for f in "$@"; do
		f=${f//\\/\\\\} f=${f//$'\t'/\\t}
		esc+=("${f//$'\n'/\\n}")
	done
	printf -v line '%s\t' "${esc[@]}"
	printf '%s' "${line%$'\t'}"
}
fails=0 broken=0 failed_arches="" failed_defconfigs=""
# row KIND COUNTED ARCH COMPILER BUILT RESULT TIME NOTE: a finished row goes into the table
# at the end and, as progress, out at once. KIND: arch or defconfig; COUNTED: failed, broken
# (before the series) or -. The counts come from here only, so the rows file, which records
# both, holds all that the summary and the rerun lines are made of (harness/archmerge.py
# makes the same table from several runs' rows).
row() {
	local kind=$1 counted=$2
	shift 2
	case $counted in
	failed)
		fails=$((fails + 1))
		if [ "$kind" = arch ]; then failed_arches="$failed_arches $1"; else failed_defconfigs="$failed_defconfigs --defconfig $1:${3%% *}"; fi ;;
	broken) broken=$((broken + 1)) ;;
	esac
	rows+=("$(printf '%-10s %-11s %-34s %-11s %5s  %s' "$@")")
	tsv+=("$(tsv_line "$kind" "$counted" "$@")")
	info "done: $1 $3: $4 in $5 (${#rows[@]} rows, $((SECONDS - total))s so far)"
}
total=$SECONDS

# build TREE ARCH TARGETS...: defconfig + LSMs, then the targets, output in check.log.
# Returns 1 if a step failed, 3 if olddefconfig left SELinux off.
build() {
	local tree=$1 a=$2 o t
	shift 2
	o=$BUILD/src/linux-$tree/build-archcheck-$a
	mkdir -p "$o"
	rm -f "$o/check.log"
	local mk=(make -C "$BUILD/src/linux-$tree" O="$o" ARCH="$KARCH" CROSS_COMPILE="$CROSS_COMPILE"
		CC="ccache ${CROSS_COMPILE}gcc" HOSTCC="$CCACHE_HOSTCC" -j"$(nproc)")
	"${mk[@]}" "$DEFCONFIG" >"$o/check.log" 2>&1 || return 1
	local frags
	mapfile -t frags < <(config_chain lsm-all)
	# the arch's own extra options (check.config in its data file)
	if [ -n "$CHECK_CONFIG" ]; then
		printf '%s\n' "$CHECK_CONFIG" >"$o/arch-check-extra.config"
		frags+=("$o/arch-check-extra.config")
	fi
	(cd "$BUILD/src/linux-$tree" && ./scripts/kconfig/merge_config.sh -m -O "$o" "$o/.config" \
		"${frags[@]}") >>"$o/check.log" 2>&1 || return 1
	"${mk[@]}" olddefconfig >>"$o/check.log" 2>&1 || return 1
	# Without SELinux the series' own code is not compiled, and "ok" would mean nothing.
	if ! grep -q '^CONFIG_SECURITY_SELINUX=y' "$o/.config"; then
		echo "arch-check: CONFIG_SECURITY_SELINUX is off after olddefconfig" >>"$o/check.log"
		return 3
	fi
	t=(security/)
	grep -q '^CONFIG_BPF_SYSCALL=y' "$o/.config" && t+=(kernel/bpf/)
	grep -q '^CONFIG_BPF_EVENTS=y' "$o/.config" && t+=(kernel/trace/bpf_trace.o)
	"${mk[@]}" "${t[@]}" "$@" >>"$o/check.log" 2>&1 || return 1
}

# The LSM options of lsm-all (and the selinux config it requires) that olddefconfig
# dropped on this arch.
vanished() {
	local o=$1 opt
	# shellcheck disable=SC2046 # the chain's file names have no spaces
	grep -hoE '^CONFIG_(SECURITY_[A-Z_]+|BPF_LSM)=y' $(config_chain lsm-all) | cut -d= -f1 |
		while read -r opt; do
			grep -q "^$opt=y" "$o/.config" || printf '%s ' "${opt#CONFIG_}"
		done || true # only a note: no LSM option found (grep's 1) means none vanished
}

[ "$builds" = yes ] || arches=()
for a in "${arches[@]}"; do
	eval "$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch shell "$a")"
	start=$SECONDS
	if [ -n "$CROSS_PKG" ] && ! [[ $(dpkg-query -W -f='${Status}' "$CROSS_PKG" 2>/dev/null) == *"ok installed"* ]]; then
		if ! apt-cache show "$CROSS_PKG" >/dev/null 2>&1; then
			row arch - "$a" "-" "-" "not built" "-" "Debian bookworm has no $CROSS_PKG"
			continue
		fi
		need_pkgs "$CROSS_PKG"
	fi
	cc=$("${CROSS_COMPILE}gcc" -dumpfullversion 2>/dev/null || echo "?")
	targets=()
	[ "$images" = no ] || [ -z "$IMAGE" ] || targets=("$IMAGE")
	what="security/ bpf ${targets[*]:-}"
	info "$a: building linux-$tree ($DEFCONFIG + lsm-all: $what)"
	o=$T/build-archcheck-$a
	rc=0
	build "$tree" "$a" "${targets[@]}" || rc=$?
	if [ "$rc" -eq 0 ] && [ ! -f "$o/security/selinux/hooks.o" ]; then
		echo "arch-check: the build made no security/selinux/hooks.o" >>"$o/check.log"
		rc=3
	fi
	# 3: built, or stopped before building, without SELinux; 1: the build failed.
	if [ "$rc" -eq 3 ]; then
		row arch failed "$a" "gcc $cc" "$what" "FAILED" "$((SECONDS - start))s" \
			"$(tail -1 "$o/check.log" | sed 's/^arch-check: //'), so the series was not built (log: ${o#"$ROOT"/}/check.log)"
		continue
	fi
	if [ "$rc" -ne 0 ]; then
		err=$(first_error "$o/check.log")
		# Broken before the series? Then the series is not what a packager must look at.
		if [ "$tree" != 6.1 ] && ! build 6.1 "$a" "${targets[@]}" &&
			[ "$(first_error "$BUILD/src/linux-6.1/build-archcheck-$a/check.log")" = "$err" ]; then
			row arch broken "$a" "gcc $cc" "$what" "BASE BROKEN" "$((SECONDS - start))s" \
				"unpatched 6.1 fails the same way: $err (log: ${o#"$ROOT"/}/check.log)"
			continue
		fi
		row arch failed "$a" "gcc $cc" "$what" "FAILED" "$((SECONDS - start))s" "$err (log: ${o#"$ROOT"/}/check.log)"
		continue
	fi
	gone=$(vanished "$o")
	note=${gone:+not on this arch: $gone}
	base=$BUILD/src/linux-6.1/build-archcheck-$a/check.log
	# A build with no warning at all cannot have a new one: the baseline, a second full
	# build (an image link and all), would only confirm that.
	if [ -z "$("$ROOT/scripts/new-warnings.sh" "$o/check.log" /nonexistent)" ]; then
		info "$a: no warning in the patched build, so no baseline build is needed"
		note="${note:+$note; }no warnings, baseline not built"
	else
		info "$a: building the unpatched tree for the warning baseline"
		if ! build 6.1 "$a" "${targets[@]}"; then
			info "$a: the unpatched build failed; every warning of the patched one counts as new"
			base=/nonexistent
		fi
	fi
	"$ROOT/scripts/new-warnings.sh" "$o/check.log" "$base" >"$o/new-warnings"
	new=$(wc -l <"$o/new-warnings")
	[ -z "$CHECK_CONFIG" ] || note="${note:+$note; }also merged: $(echo "$CHECK_CONFIG" | paste -sd' ')"
	if [ "$new" -gt 0 ]; then
		row arch failed "$a" "gcc $cc" "$what" "NEW WARN" "$((SECONDS - start))s" \
			"$new warnings not in the unpatched build: ${o#"$ROOT"/}/new-warnings; $note"
	else
		row arch - "$a" "gcc $cc" "$what" "ok" "$((SECONDS - start))s" "$note"
	fi
done

# Each defconfig that sets the removed symbol: after make <defconfig> and savedefconfig,
# neither runtime disable nor writable hooks may be on, and savedefconfig must not write
# the symbol back. (make <defconfig> resolves every symbol as olddefconfig would: an
# olddefconfig after it leaves .config byte for byte as it is, checked on four of them.)
# Each is one single-threaded kconfig run, all at once. kconfig's own program is compiled
# in each folder: through ccache (HOSTCC), every folder after the first replays it.
# A row's result is kept in its folder with the key of what the run reads: the tree (its
# stamps, written by source.sh and patch.sh), the arch and defconfig, this function and
# the host compiler. A folder whose key matches is not run again (as make leaves a target
# whose inputs did not change) and its row says so; --fresh runs every one. A failed run
# is not kept.
defconfig_check() {
	local k=${1%%:*} c=${1#*:} o res start=$SECONDS
	o=$T/build-defconfig-$k-$c
	mkdir -p "$o"
	if [ "$fresh" = no ] && [ -f "$o/result" ] && [ "$(cat "$o/key" 2>/dev/null)" = "$2" ]; then
		touch "$o/kept"
		return
	fi
	rm -f "$o/result" "$o/key" "$o/kept"
	res=ok
	if ! make -C "$T" O="$o" ARCH="$k" HOSTCC="$CCACHE_HOSTCC" "$c" savedefconfig >"$o/log" 2>&1; then
		res=FAILED
	elif grep -qE '^CONFIG_SECURITY_(SELINUX_DISABLE|WRITABLE_HOOKS)=y' "$o/.config" ||
		grep -q SECURITY_SELINUX_DISABLE "$o/defconfig"; then
		res="RUNTIME DISABLE ON"
	fi
	echo "$res|$((SECONDS - start))" >"$o/result"
	[ "$res" = FAILED ] || echo "$2" >"$o/key"
}
[ "$check_defconfigs" = yes ] || defconfigs=()
[ ${#defconfigs[@]} -eq 0 ] ||
	info "make <defconfig> + savedefconfig of the ${#defconfigs[@]} defconfigs that set the removed symbol"
defconfig_inputs=""
[ ${#defconfigs[@]} -eq 0 ] || defconfig_inputs=$({
	cat "$T/.unpacked-from" "$T/.patched-with" 2>/dev/null || true
	declare -f defconfig_check
	gcc -dumpfullversion
} | sha256sum)
running=0
for d in "${defconfigs[@]}"; do
	defconfig_check "$d" "$d ${defconfig_inputs%% *}" &
	running=$((running + 1))
	[ "$running" -lt "$(nproc)" ] || { wait -n || true; running=$((running - 1)); }
done
wait
for d in "${defconfigs[@]}"; do
	k=${d%%:*} c=${d#*:}
	r=$(cat "$T/build-defconfig-$k-$c/result" 2>/dev/null || echo "FAILED|?")
	res=${r%|*} took=${r#*|} counted=-
	[ "$res" = ok ] || counted=failed
	note=$([ "$res" = ok ] && echo "runtime disable off" || echo "linux-$tree builds runtime disable from it")
	[ ! -f "$T/build-defconfig-$k-$c/kept" ] || { note="$note (kept: tree, defconfig and check unchanged since a run of ${took}s)" took=0; }
	row defconfig "$counted" "$k" "-" "$c savedefconfig" "$res" "${took}s" "$note"
done

# The table, the command that reruns what failed, the summary: on stdout, and in
# results/arch-check/table.txt for CI to keep (written whole or not at all).
report() {
	printf '%-10s %-11s %-34s %-11s %5s  %s\n' arch compiler built result time note
	printf '%s\n' "${rows[@]}"
	local cmd="scripts/arch-check.sh" opts=""
	[ -z "${HARNESS_ARCH_DIR:-}" ] || cmd="HARNESS_ARCH_DIR=$HARNESS_ARCH_DIR $cmd"
	[ "$tree" = 6.1-patched ] || opts=" --tree $tree"
	[ "$images" = yes ] || [ -z "$failed_arches" ] || opts="$opts --no-image"
	[ -z "$failed_arches" ] || echo "rerun the failed builds: $cmd$opts --no-defconfigs$failed_arches"
	[ -z "$failed_defconfigs" ] || echo "rerun the failed defconfigs: $cmd --defconfigs-only${opts%% --no-image}$failed_defconfigs"
	# a table of fewer than the nine defconfig rows says it was asked for
	[ ${#only_defconfigs[@]} -eq 0 ] || echo "only the defconfigs asked for: ${only_defconfigs[*]}"
	summary="$fails failed"
	[ "$broken" -eq 0 ] || summary="$summary, $broken broken before the series (not counted)"
	echo "$summary, ${elapsed}s"
}
# The rows for python3 -m harness.archmerge, which makes this table from the rows of several
# runs (the fleet's job per arch): the run's settings, then each row's fields, counted or not.
rows_tsv() {
	printf '%s\n' '# scripts/arch-check.sh rows (docs/arch-check.md), tab-separated, \\ \t \n escaped:' \
		'# run TREE IMAGES BUILDS DEFCONFIGS HARNESS_ARCH_DIR SECONDS' \
		'# arch|defconfig failed|broken|- ARCH COMPILER BUILT RESULT TIME NOTE'
	# DEFCONFIGS: yes (the nine), no, or the --defconfig names, comma-separated
	local which=$check_defconfigs
	[ ${#only_defconfigs[@]} -eq 0 ] || which=$(IFS=,; echo "${only_defconfigs[*]}")
	tsv_line run "$tree" "$images" "$builds" "$which" "${HARNESS_ARCH_DIR:-}" "$elapsed"
	echo
	[ ${#tsv[@]} -eq 0 ] || printf '%s\n' "${tsv[@]}"
}
elapsed=$((SECONDS - total))
mkdir -p "$(dirname "$table_file")"
report | tee "$table_file.tmp"
mv "$table_file.tmp" "$table_file"
mkdir -p "$(dirname "$rows_file")"
rows_tsv >"$rows_file.tmp"
mv "$rows_file.tmp" "$rows_file"
[ "$fails" -eq 0 ]
