# The checks of the slow tier of "make test", in the order they run. Run by
# tests/slow/test_suite.py (harness/bashsuite.py); each t_NAME runs in its own bash process with errexit, nounset and pipefail (so every command counts,
# except one on the left of && or ||, or in a condition: write checks as plain commands
# or with "|| { echo why; return 1; }"), its output going to results/test/NAME.log. Exit 0 = pass,
# 4 = skip, anything else = fail. Kernels are built on demand (cached, so the second test
# that needs one pays nothing).
# shellcheck shell=bash

S=$ROOT/scripts
H=$ROOT/tests/host
B=$ROOT/build

# Build (or reuse) a kernel and print its build folder.
kbuild() {
	"$S/kernel.sh" "$@" | tail -1
}

# configured_copy BUILD NEW: a new build folder holding BUILD's configuration and no
# object: kernel.sh finds it configured for the same config and tree and skips its
# configuring step, and make finds kconfig's output (include/config, include/generated)
# newer than .config and skips syncconfig: each a kconfig run, about 9 s of the compiler
# probes in the Kconfig files.
configured_copy() {
	mkdir -p "$2/include"
	cp -p "$1/.config" "$1/.config-from" "$2/"
	cp -a "$1/include/config" "$1/include/generated" "$2/include/"
}

# The checks matching BESIDE run in order on a pytest worker of their own, beside the others
# (tests/slow/test_suite.py): the two plain boots, the matrix's and make ci-local's, and the
# lost-option check's two kconfig runs (first in that worker's order: they end before the
# boots start, and the two workers then take about as long in a warm run). A boot mostly
# keeps one core busy while the other checks are kconfig, make and git runs that often
# leave one idle. The harness checks' boots stay with the others, for the same balance
# (docs/measurements.md). None of them needs a check of the other group to have run: a
# kernel or image is built on demand, under its lock.
# shellcheck disable=SC2034 # read by tests/slow/test_suite.py
BESIDE='^(boot_|matrix_|ci_local_|kernel_option_lost_)'

# Started by tests/conftest.py in the background with the first check, niced, when a test
# matching BACKGROUND_FOR is selected; it fills what the checks and the fast tier leave of
# the cores (a kernel link runs on one, a boot test on one, debootstrap mostly waits on
# the network). First the guest images, then
# the kernels, of every arch and kernel in matrix.yaml's test set (the matrix names them;
# this list does not), the one that shares no objects first. A test that needs one of them
# waits on its lock.
# shellcheck disable=SC2034 # read by tests/conftest.py
BACKGROUND_FOR='^(boot_|harness_|matrix_test_set)'
# shellcheck disable=SC2034 # read by tests/conftest.py
BACKGROUND_WHAT="the guest images and kernels of matrix.yaml's test set"
background() {
	local builds a t c
	builds=$("$S/matrix.sh" --set test --list-builds)
	# Another tree than 6.1's (6.12) shares nothing and is the longest: it goes first. Of
	# the 6.1 trees, the selinux builds next: another config of the same tree and arch
	# starts from a copy of one (kernel.sh), and the other tree's builds find their
	# objects in ccache instead of compiling them beside it.
	builds=$(awk '$2 !~ /^6\.1(-|$)/' <<<"$builds"
		awk '$2 ~ /^6\.1(-|$)/ && $3 == "selinux"' <<<"$builds"
		awk '$2 ~ /^6\.1(-|$)/ && $3 != "selinux"' <<<"$builds")
	while read -r a; do
		"$ROOT/rootfs/build.sh" "$a"
	done < <(awk '!seen[$1]++ { print $1 }' <<<"$builds")
	renice -n 19 -p "$BASHPID" >/dev/null
	while read -r a t c; do
		kbuild "$a" "$t" "$c"
	done <<<"$builds"
}

# --- the repo's own scripts ------------------------------------------------------------
t_shellcheck() {
	"$S/need.sh" shellcheck
	cd "$ROOT" && shellcheck -x qemu-run.sh scripts/*.sh rootfs/build.sh rootfs/customize.sh rootfs/stage2-init tests/*.sh tests/host/*.sh tests/host/fixtures/*.sh .ci/run
}

# The admins' tool's parsers under ASan and UBSan for a minute of CPU, from other seeds than
# the fast tier's few seconds (tests/fast/test_selinux_migrate_check.py): two runs of half a
# minute side by side, one a core. Each run's status counts.
t_migrate_check_fuzz() {
	local a b rc=0
	"$H/fuzz-migrate-check.sh" 30 0x6e12 &
	a=$!
	"$H/fuzz-migrate-check.sh" 30 0x6e13 &
	b=$!
	wait "$a" || { echo "not ok: the run from seed 0x6e12 failed"; rc=1; }
	wait "$b" || { echo "not ok: the run from seed 0x6e13 failed"; rc=1; }
	return "$rc"
}

# --- the series ---------------------------------------------------------------------
t_series_patch_p1() {
	"$S/patch.sh"
}

t_series_git_am() {
	"$S/source.sh" 6.1
	"$H/series-git-am.sh" "$B/src/linux-6.1"
}

# Negative control: a mail whose body starts with an in-body "From:" line makes git am
# record that person as the author; the check against commits.tsv must catch it.
t_series_git_am_author_change_caught() {
	"$S/source.sh" 6.1
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	cp "$ROOT"/patches/6.1/* "$d/"
	sed -i '0,/^commit f22f9aaf6c3d/s//From: Paul Moore <paul@paul-moore.com>\n\n&/' "$d"/0001-*.patch
	rc=0
	out=$(SERIES_DIR=$d "$H/series-git-am.sh" "$B/src/linux-6.1") || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: a changed author passed"; return 1; }
	grep -q "^not ok 2 0001-.*author 'Paul Moore <paul@paul-moore.com>'" <<<"$out" ||
		{ echo "not ok: the author change was not named"; return 1; }
	[ "$(grep -c '^not ok' <<<"$out")" = 1 ] || { echo "not ok: other patches failed too"; return 1; }
	echo "ok: an in-body From: line that changes the author fails, naming the patch"
}

# The Debian form: quilt push -a on a fresh tree, no fuzz or offset, same tree as git am.
t_debian_patches_quilt() {
	"$S/source.sh" 6.1
	"$S/need.sh" quilt
	"$H/quilt-export.sh" "$B/src/linux-6.1"
}

# Negative control: the same check on a tree where SafeSetID's file has one line more at
# its top must report the offset and fail.
t_debian_patches_offset_caught() {
	"$S/source.sh" 6.1
	"$S/need.sh" quilt
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	# the folders the series touches, from the pristine tree
	(cd "$B/src/linux-6.1" && tar -cf - Documentation/ABI Documentation/admin-guide include/linux security) |
		tar -xf - -C "$d"
	sed -i '1i /* one line more */' "$d/security/safesetid/lsm.c"
	rc=0
	out=$("$H/quilt-export.sh" "$d") || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: an offset passed"; return 1; }
	grep -q '^not ok 2 quilt applied with fuzz or offset' <<<"$out" || { echo "not ok: offset not named"; return 1; }
	grep -q 'offset' <<<"$out" || { echo "not ok: no offset line shown"; return 1; }
	echo "ok: an offset fails the quilt check"
}

# A series change keeps the patched tree's build folders (patch.sh), and make goes by
# times: the file only a dropped patch changed (SafeSetID's, back to its archive content)
# must come out newer than the objects, and a file both series change alike (Yama's) keep
# its time. patch.sh runs on a copy of the repo's scripts and series, over the series'
# files of the stock tree. The control is the archive time such a file has without that
# step: older than the objects, so make would keep them.
t_patch_series_change_times() {
	local d y0
	r=$(mktemp -d)
	trap 'rm -rf "$r"' EXIT
	"$S/source.sh" 6.1
	mkdir -p "$r/root" "$r/build/src/linux-6.1"
	cp -a "$ROOT/scripts" "$ROOT/patches" "$r/root/"
	mapfile -t files < <(sed -n 's|^--- a/||p' "$ROOT"/patches/6.1/0*.patch | sort -u)
	(cd "$B/src/linux-6.1" && tar -cf - .unpacked-from "${files[@]}") | tar -xf - -C "$r/build/src/linux-6.1"
	BUILD=$r/build "$r/root/scripts/patch.sh"
	d=$r/build/src/linux-6.1-patched
	y0=$(stat -c %y "$d/security/yama/yama_lsm.c")
	mkdir "$d/build-x86_64-selinux"
	touch "$d/build-x86_64-selinux/object"
	sed -i '/^0009-/d' "$r/root/patches/6.1/series"
	BUILD=$r/build "$r/root/scripts/patch.sh"
	[ -f "$d/build-x86_64-selinux/object" ] || { echo "not ok: the build folder was not kept"; return 1; }
	cmp "$d/security/safesetid/lsm.c" "$B/src/linux-6.1/security/safesetid/lsm.c" ||
		{ echo "not ok: SafeSetID's file is not back to stock"; return 1; }
	[ "$d/security/safesetid/lsm.c" -nt "$d/build-x86_64-selinux/object" ] ||
		{ echo "not ok: SafeSetID's file is older than the objects: make would keep them"; return 1; }
	[ "$(stat -c %y "$d/security/yama/yama_lsm.c")" = "$y0" ] ||
		{ echo "not ok: Yama's file, the same in both series, got a new time"; return 1; }
	echo "ok: the file the dropped patch changed is newer than the objects, the unchanged one kept its time"
}

t_series_apply_failure_named() {
	"$S/source.sh" 6.1
	"$H/apply-fail.sh" "$B/src/linux-6.1"
}

t_checkpatch() {
	"$S/source.sh" 6.1
	"$H/checkpatch.sh" "$B/src/linux-6.1"
}

# Negative control: a patch with a finding nobody accepted must fail, named with the finding.
t_checkpatch_new_finding_fails() {
	"$S/source.sh" 6.1
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	cp "$ROOT"/patches/6.1/* "$d/"
	# trailing whitespace on the one line patch 0009 adds
	sed -i 's/^\(+static struct security_hook_list safesetid_security_hooks\[\].*\)$/\1 /' "$d"/0009-*.patch
	out=$("$H/checkpatch.sh" "$B/src/linux-6.1" "$d") && { echo "$out"; echo "a new finding passed"; return 1; }
	echo "$out"
	grep -q '^not ok 9 0009-.*TRAILING_WHITESPACE' <<<"$out"
	[ "$(grep -c '^not ok' <<<"$out")" = 1 ]
}

t_tree_clean_patched() {
	"$S/patch.sh"
	"$H/check-tree.sh" --expect clean "$B/src/linux-6.1-patched"
}

# Negative control: the same check must find every pattern in the unpatched tree.
t_tree_stale_unpatched() {
	"$S/source.sh" 6.1
	"$H/check-tree.sh" --expect stale "$B/src/linux-6.1"
}

# --- every architecture: the CI slice of make arch-check --------------------------------
# riscv64 (a cross compiler, another arch family) through security/ and the other
# lsm_hooks.h users, against the unpatched baseline; then the nine defconfigs that carry the
# removed symbol. (i386 was in this slice too; make arch-check builds it, image and all.)
# The CI slice of make arch-check: riscv64 through security/ and bpf, with every LSM of
# lsm-all on (no "not on this arch" note: none dropped by olddefconfig).
t_arch_check_riscv64() {
	local rc=0
	# The table is shown whatever the exit status: a failed row must be readable in the log.
	out=$("$S/arch-check.sh" --no-image riscv64) || rc=$?
	echo "$out"
	[ "$rc" -eq 0 ] || { echo "not ok: arch-check.sh exited $rc"; return 1; }
	grep -qE '^riscv64 .* ok +[0-9]+s *(no warnings, baseline not built)?$' <<<"$out" ||
		{ echo "not ok: riscv64 row"; return 1; }
}

# A defconfig row's result is kept only under its key (arch-check.sh: tree stamps, arch,
# defconfig, the check and the host compiler). A run after the slice's keeps all nine; the
# control: with one folder's key changed, as a changed tree or check would change it,
# that row's kconfig runs again, and only it. Its table goes to a folder of its own.
t_arch_check_defconfig_kept_by_key() {
	local key=$B/src/linux-6.1-patched/build-defconfig-powerpc-ppc6xx_defconfig/key
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	# (the slice ran them; a check run alone makes the keys first)
	"$S/arch-check.sh" --defconfigs-only --rows "$d/rows.tsv" --table "$d/table.txt" >/dev/null
	out=$("$S/arch-check.sh" --defconfigs-only --rows "$d/rows.tsv" --table "$d/table.txt")
	echo "$out"
	[ "$(grep -c ' ok  *0s  runtime disable off (kept: ' <<<"$out")" = 9 ] ||
		{ echo "not ok: not all nine rows kept"; return 1; }
	echo "another tree" >>"$key"
	out=$("$S/arch-check.sh" --defconfigs-only --rows "$d/rows.tsv" --table "$d/table.txt")
	echo "$out"
	[ "$(grep -c '(kept: ' <<<"$out")" = 8 ] || { echo "not ok: not eight rows kept"; return 1; }
	grep -qE '^powerpc .* ppc6xx_defconfig savedefconfig +ok +[0-9]+s  runtime disable off$' <<<"$out" ||
		{ echo "not ok: the row whose key changed was not run again"; return 1; }
	echo "ok: nine rows kept, and the one whose key changed run again"
}

# The warning comparison arch-check uses: the same warnings moved by the series are not new,
# one the series adds is (fixture logs), and with no baseline every warning counts.
t_arch_check_new_warning_counted() {
	f=$H/fixtures
	out=$("$S/new-warnings.sh" "$f/warn-patched.log" "$f/warn-base.log")
	echo "$out"
	[ "$(echo "$out" | wc -l)" = 1 ]
	grep -q "selinuxfs.c: warning: 'sel_write_disable'" <<<"$out"
	[ -z "$("$S/new-warnings.sh" "$f/warn-base.log" "$f/warn-base.log")" ]
	[ "$("$S/new-warnings.sh" "$f/warn-patched.log" /nonexistent | wc -l)" = 3 ]
}

# Negative control for the build step: riscv64's compiler behind a wrapper that fails on
# kernel/bounds.c, the first object kbuild compiles (so each build stops within seconds).
# An error of the patched tree that the unpatched one does not share must fail the arch and
# the run; the same error in both trees is BASE BROKEN, listed and not counted. The run's rows
# file, merged alone by harness/archmerge.py (as the fleet's table job does), gives its table.
t_arch_check_build_failure_counted() {
	"$S/need.sh" gcc-riscv64-linux-gnu
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	mkdir -p "$d/bin"
	# The fault is in the host compiler (arch-check's HOSTCC is the gcc first on PATH), on
	# scripts/basic/fixdep.c, the first file any make of the kernel compiles: a fault arch's
	# build fails in its first step, within a second, where a fault in the cross compiler
	# came after two kconfig runs and the host tools (40 s a tree). fault_patched fails on
	# the patched tree and fails differently on the unpatched one; fault_both fails the
	# same way on both. Every other build folder gets the real gcc.
	cat >"$d/bin/gcc" <<-'EOF'
		#!/bin/sh
		case "$*" in *scripts/basic/fixdep.c*)
			case "$PWD" in
			*/build-archcheck-fault_both | *linux-6.1-patched/build-archcheck-fault_patched)
				echo "scripts/basic/fixdep.c: error: injected" >&2; exit 1 ;;
			*/build-archcheck-fault_patched)
				echo "scripts/basic/fixdep.c: error: injected, another way" >&2; exit 1 ;;
			esac ;;
		esac
		exec /usr/bin/gcc "$@"
	EOF
	chmod +x "$d/bin/gcc"
	for mode in patched both; do
		printf 'deb_arch: riscv64\nbuild: {karch: riscv, cross_compile: riscv64-linux-gnu-}\ncheck: {defconfig: defconfig}\n' \
			>"$d/fault_$mode.yaml"
	done
	# and an arch whose config ends up without SELinux: nothing of the series would be
	# compiled, so it must not pass (the arch's extra options turn it off, as a defconfig could).
	printf '%s\n' 'deb_arch: riscv64' 'build: {karch: riscv, cross_compile: riscv64-linux-gnu-}' \
		'check: {defconfig: defconfig, config: ["# CONFIG_SECURITY_SELINUX is not set"]}' >"$d/noselinux.yaml"
	# A folder a failed run kept would hold fixdep already.
	rm -rf "$B"/src/linux-6.1{,-patched}/build-archcheck-{fault_both,fault_patched,noselinux}
	rc=0
	# --no-defconfigs: the defconfig part has its own test and control (2 min saved). The
	# arches in the order a run without arch arguments takes them, which is the merge's.
	out=$(PATH="$d/bin:$PATH" HARNESS_ARCH_DIR=$d "$S/arch-check.sh" --no-image --no-defconfigs --rows "$d/job/rows.tsv" \
		--table "$d/job/table.txt" fault_both fault_patched noselinux 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: a failing build passed"; return 1; }
	grep -qE '^fault_patched .* FAILED .*injected' <<<"$out" || { echo "not ok: no FAILED row"; return 1; }
	grep -qE '^fault_both .* BASE BROKEN .*injected' <<<"$out" || { echo "not ok: no BASE BROKEN row"; return 1; }
	grep -qE '^noselinux .* FAILED .*CONFIG_SECURITY_SELINUX is off' <<<"$out" ||
		{ echo "not ok: a build without SELinux was not failed"; return 1; }
	tail -1 <<<"$out" | grep -q '^2 failed, 1 broken before the series' || { echo "not ok: summary"; return 1; }
	! grep -q ' savedefconfig ' <<<"$out" || { echo "not ok: --no-defconfigs ran the defconfigs"; return 1; }
	grep -qx "rerun the failed builds: HARNESS_ARCH_DIR=$d .*arch-check.sh --no-image --no-defconfigs fault_patched noselinux" <<<"$out" ||
		{ echo "not ok: no command to rerun just the failed arch"; return 1; }
	grep -q '^fault_patched .* FAILED' "$d/job/table.txt" || { echo "not ok: table.txt"; return 1; }
	# The rows file (--rows), what harness/archmerge.py merges for the fleet: the run's
	# settings, each row counted as the summary counted it; merged alone, it gives this run's
	# table byte for byte (the merged time, the sum of the runs', is this run's).
	awk -F'\t' -v d="$d" '$1 == "run" { ok = $2 == "6.1-patched" && $3 == "no" && $4 == "yes" && $5 == "no" && $6 == d }
		END { exit !ok }' "$d/job/rows.tsv" || { echo "not ok: the rows file's run line"; return 1; }
	[ "$(awk -F'\t' '$1 == "arch" { print $2, $3, $6 }' "$d/job/rows.tsv")" = "$(printf '%s\n' \
		"broken fault_both BASE BROKEN" "failed fault_patched FAILED" "failed noselinux FAILED")" ] ||
		{ echo "not ok: the rows file's rows"; return 1; }
	rc=0
	PYTHONPATH=$ROOT /usr/bin/python3 -m harness.archmerge "$d/job" -o "$d/merged" >/dev/null || rc=$?
	[ "$rc" -eq 1 ] || { echo "not ok: the merge of a failed run exited $rc"; return 1; }
	cmp "$d/merged/table.txt" "$d/job/table.txt" ||
		{ echo "not ok: the merged table is not the run's"; return 1; }
	# The fault arches' build folders (a failed check keeps them for a look).
	rm -rf "$B"/src/linux-6.1{,-patched}/build-archcheck-{fault_both,fault_patched,noselinux}
	echo "ok: a patched-only failure fails the run, a failure of both trees is listed, not counted"
}

# Negative control: on the unpatched tree the defconfigs still turn runtime disable on.
# Three of the nine, from three arch families (each row is the same check; the slice runs
# all nine on the patched tree): the rows and the rerun line name them. A row kept from an
# earlier run is the same check's result on the same tree (its key, checked above); a
# changed check or tree runs them again. Its table and rows go to a folder of its own:
# results/arch-check keeps the slice's.
t_arch_check_defconfigs_unpatched_runtime_disable_on() {
	local slice=$ROOT/results/arch-check/table.txt before="" three
	three="--defconfig x86:x86_64_defconfig --defconfig s390:debug_defconfig --defconfig powerpc:ppc6xx_defconfig"
	d=$(mktemp -d)
	trap 'rm -rf "$d"' EXIT
	[ ! -f "$slice" ] || before=$(cat "$slice")
	# shellcheck disable=SC2086 # three options
	out=$("$S/arch-check.sh" --defconfigs-only --tree 6.1 $three --rows "$d/rows.tsv" --table "$d/table.txt") &&
		{ echo "$out"; echo "not ok: the unpatched tree passed"; return 1; }
	echo "$out"
	[ "$(grep -c 'RUNTIME DISABLE ON' <<<"$out")" = 3 ] || { echo "not ok: not three rows with runtime disable on"; return 1; }
	[ "$(grep -c ' savedefconfig ' <<<"$out")" = 3 ] || { echo "not ok: not three defconfig rows"; return 1; }
	grep -qx "rerun the failed defconfigs: scripts/arch-check.sh --defconfigs-only --tree 6.1 $three" <<<"$out" ||
		{ echo "not ok: the rerun line"; return 1; }
	# a table of three rows says so, and so does its rows file's run line
	grep -qx "only the defconfigs asked for: ${three//--defconfig /}" <<<"$out" ||
		{ echo "not ok: no line saying only three were asked for"; return 1; }
	grep -qP '^run\t6\.1\tyes\tno\tx86:x86_64_defconfig,s390:debug_defconfig,powerpc:ppc6xx_defconfig\t' "$d/rows.tsv" ||
		{ echo "not ok: the rows file's run line does not name the three"; return 1; }
	[ "$(grep -c 'RUNTIME DISABLE ON' "$d/table.txt")" = 3 ] || { echo "not ok: the table"; return 1; }
	[ "$(cat "$slice" 2>/dev/null)" = "$before" ] || { echo "not ok: the control wrote over $slice"; return 1; }
	echo "ok: the three defconfigs turn runtime disable on in the unpatched tree"
}

# --- the builds and where their hook tables live ------------------------------------
SEL_TABLES="security_hook_heads blob_sizes capability_hooks selinux_hooks selinux_blob_sizes"
ALL_TABLES="$SEL_TABLES apparmor_hooks apparmor_blob_sizes smack_hooks smack_blob_sizes
tomoyo_hooks tomoyo_blob_sizes landlock_hooks landlock_blob_sizes yama_hooks loadpin_hooks
lockdown_hooks bpf_lsm_hooks bpf_lsm_blob_sizes safesetid_security_hooks"

t_sections_x86_64_patched_selinux() {
	o=$(kbuild x86_64 6.1-patched selinux)
	"$H/check-sections.sh" --expect ro --require "$SEL_TABLES" "$o/vmlinux" "$B/src/linux-6.1-patched"
}

t_sections_arm64_patched_selinux() {
	o=$(kbuild arm64 6.1-patched selinux)
	"$H/check-sections.sh" --expect ro --require "$SEL_TABLES" "$o/vmlinux" "$B/src/linux-6.1-patched" \
		aarch64-linux-gnu-nm
}

# Negative control: with runtime disable built in, the tables must be found writable.
t_sections_x86_64_legacy_writable() {
	o=$(kbuild x86_64 6.1 legacy)
	"$H/check-sections.sh" --expect rw --require "$SEL_TABLES" "$o/vmlinux" "$B/src/linux-6.1"
}

# A kernel build that fails says why in its last line, the compiler's first error and the
# log's path (not a handful of grep hits). The host gcc behind a wrapper that lets the
# configuring step's host tools (scripts/basic, scripts/kconfig) through and fails on the
# first other C file, so the build stops at its first compile; its own build folder,
# removed after, starts with the legacy build's configuration (nothing to configure).
t_kernel_build_failure_one_line() {
	local l
	l=$(kbuild x86_64 6.1 legacy)
	d=$(mktemp -d)
	out=$B/src/linux-6.1/build-x86_64-legacy-faultcheck
	trap 'rm -rf "$d" "$out" "$B/kernel/6.1-x86_64-legacy-faultcheck"' EXIT
	rm -rf "$out"
	configured_copy "$l" "$out"
	cat >"$d/gcc" <<-'EOF'
		#!/bin/sh
		for a in "$@"; do
			case "$a" in
			*scripts/basic/*.c | *scripts/kconfig/*.c) ;;
			*.c) echo "${a#../}: error: injected" >&2; exit 1 ;;
			esac
		done
		exec /usr/bin/gcc "$@"
	EOF
	chmod +x "$d/gcc"
	rc=0
	err=$(PATH="$d:$PATH" BUILD_SUFFIX=-faultcheck BUILD_TARGETS=prepare SEED=no \
		"$S/kernel.sh" x86_64 6.1 legacy 2>&1 >/dev/null) || rc=$?
	echo "$err"
	[ "$rc" -ne 0 ] || { echo "not ok: a failing build passed"; return 1; }
	echo "$err" | tail -1 |
		grep -q 'build failed after [0-9]*s: [^ ]*\.c: error: injected (log: .*build.log)$' ||
		{ echo "not ok: the last line does not give the error and the log"; return 1; }
	[ "$(grep -c error <<<"$err")" = 1 ] || { echo "not ok: more than one error line"; return 1; }
	grep -q 'error: injected' "$out/build.log" || { echo "not ok: the log lacks the error"; return 1; }
}

# Every LSM at once: its tables live in security/, so only security/ is built and each
# table's section is read in its object (a whole lsm-all kernel cost 460 s cold here, this
# build a fraction of it). The linker script maps .data..ro_after_init into the range the
# vmlinux checks above read.
t_sections_x86_64_patched_lsm_all() {
	o=$(BUILD_TARGETS=security/ kbuild x86_64 6.1-patched lsm-all)
	"$H/check-sections.sh" --expect ro --require "${ALL_TABLES//$'\n'/ }" "$o" "$B/src/linux-6.1-patched"
}

# A new build folder starts from the closest finished build of its tree and arch
# (kernel.sh): the accept build, from the default (reject) one, compiles selinuxfs.c again
# and little else. The control: selinuxfs.o must differ from the reject build's (a copy
# that kbuild did not rebuild would be the reject kernel under the accept name), and be
# the accept build's.
t_kernel_build_starts_from_sibling() {
	local d a out n
	d=$(kbuild x86_64 6.1-patched selinux)
	a=$(kbuild x86_64 6.1-patched selinux-accept)
	s=$B/src/linux-6.1-patched/build-x86_64-selinux-accept-seedcheck
	trap 'rm -rf "$s" "$B/kernel/6.1-patched-x86_64-selinux-accept-seedcheck"' EXIT
	rm -rf "$s"
	# security/selinux/ alone: the objects are the test, the image's link would add 20 s
	out=$(BUILD_SUFFIX=-seedcheck BUILD_TARGETS=security/selinux/ "$S/kernel.sh" x86_64 6.1-patched selinux-accept 2>&1)
	echo "$out"
	grep -q 'starting from build-x86_64-selinux (2 .config lines differ)$' <<<"$out" ||
		{ echo "not ok: not started from the reject build"; return 1; }
	grep -qx '  CC      security/selinux/selinuxfs.o' "$s/build.log" ||
		{ echo "not ok: selinuxfs.c not compiled again"; return 1; }
	n=$(grep -c '^  CC  ' "$s/build.log")
	[ "$n" -le 10 ] || { echo "not ok: $n objects compiled"; return 1; }
	! cmp -s "$s/security/selinux/selinuxfs.o" "$d/security/selinux/selinuxfs.o" ||
		{ echo "not ok: selinuxfs.o is the reject build's"; return 1; }
	cmp "$s/security/selinux/selinuxfs.o" "$a/security/selinux/selinuxfs.o" ||
		{ echo "not ok: selinuxfs.o is not the accept build's"; return 1; }
	echo "ok: started from the reject build, $n objects compiled, selinuxfs.o the accept build's"
}

# A build folder of one 6.1 tree also starts from a build of the other (kernel.sh): a
# legacy folder (stock tree) from the patched kernel, whose objects that read a file the
# series changed are compiled again. They must be the legacy build's own, and the control
# is the patched build's (the copy kept as it was would pass for them); an object that
# reads no such file (min_addr.o) must not be compiled, or nothing was copied.
t_kernel_build_starts_from_other_tree() {
	local p l out o
	p=$(kbuild x86_64 6.1-patched selinux)
	l=$(kbuild x86_64 6.1 legacy)
	s=$B/src/linux-6.1/build-x86_64-legacy-seedcheck
	trap 'rm -rf "$s" "$B/kernel/6.1-x86_64-legacy-seedcheck"' EXIT
	# As unpacked, the stock tree's sources are older than any object: make alone would
	# keep the patched build's copies. A hand that touched them would let it pass anyway.
	[ "$B/src/linux-6.1/security/selinux/hooks.c" -ot "$p/security/selinux/hooks.o" ] ||
		{ echo "not ok: the stock tree's hooks.c is newer than the patched build's hooks.o: the check cannot fail"; return 1; }
	rm -rf "$s"
	out=$(BUILD_SUFFIX=-seedcheck BUILD_TARGETS=security/ "$S/kernel.sh" x86_64 6.1 legacy 2>&1)
	echo "$out"
	grep -q 'starting from build-x86_64-selinux of linux-6.1-patched ([0-9]* .config lines differ)$' <<<"$out" ||
		{ echo "not ok: not started from the patched build"; return 1; }
	grep -qE 'files differ between the trees, [1-9][0-9]* objects to build again$' <<<"$out" ||
		{ echo "not ok: no object taken out of the copy"; return 1; }
	for o in security/selinux/hooks.o security/selinux/selinuxfs.o security/security.o security/commoncap.o; do
		cmp "$s/$o" "$l/$o" || { echo "not ok: $o is not the legacy build's"; return 1; }
		! cmp -s "$s/$o" "$p/$o" || { echo "not ok: $o is the patched build's too: the check cannot fail"; return 1; }
	done
	! grep -q ' security/min_addr.o$' "$s/build.log" || { echo "not ok: min_addr.o compiled: nothing kept from the copy"; return 1; }
	cmp "$s/security/min_addr.o" "$p/security/min_addr.o" || { echo "not ok: min_addr.o is not the patched build's copy"; return 1; }
	echo "ok: started from the patched build; what the series changes is the legacy build's, the rest kept"
}

# A start from another build cut short (kernel.sh killed between its copy and its end)
# leaves its mark, and the next run empties the folder and starts it again: a file that
# no build makes must be gone, and the folder configured anew. The control is the same
# folder without the mark: the file stays. (SEED=no: the emptying is the test, a copy of a
# whole build would add seconds. The folder starts with the accept build's configuration,
# so the control's run has nothing to configure.)
t_kernel_seed_cut_short_starts_again() {
	local out a
	a=$(kbuild x86_64 6.1-patched selinux-accept)
	s=$B/src/linux-6.1-patched/build-x86_64-selinux-accept-cutcheck
	trap 'rm -rf "$s" "$B/kernel/6.1-patched-x86_64-selinux-accept-cutcheck"' EXIT
	rm -rf "$s"
	configured_copy "$a" "$s"
	touch "$s/left-over"
	out=$(SEED=no BUILD_SUFFIX=-cutcheck CONFIGURE_ONLY=1 "$S/kernel.sh" x86_64 6.1-patched selinux-accept 2>&1)
	echo "$out"
	[ -e "$s/left-over" ] || { echo "not ok: the control: without the mark the folder was emptied"; return 1; }
	touch "$s/.seed-incomplete"
	out=$(SEED=no BUILD_SUFFIX=-cutcheck CONFIGURE_ONLY=1 "$S/kernel.sh" x86_64 6.1-patched selinux-accept 2>&1)
	echo "$out"
	grep -q 'selinux-accept: a start from another build was cut short, starting again$' <<<"$out" ||
		{ echo "not ok: the mark was not seen"; return 1; }
	[ ! -e "$s/left-over" ] || { echo "not ok: the folder was not emptied"; return 1; }
	[ ! -e "$s/.seed-incomplete" ] || { echo "not ok: the mark is still there"; return 1; }
	grep -q 'selinux-accept: configuring$' <<<"$out" || { echo "not ok: not configured again"; return 1; }
	[ -f "$s/.config" ] || { echo "not ok: no .config after configuring"; return 1; }
	echo "ok: a cut-short start is emptied and configured again; without the mark the folder is kept"
}

# An option a fragment asks for that the configuration does not keep fails the build,
# named with what .config holds instead, unless the fragment says it may vanish on that
# tree. legacy.config's runtime disable may vanish on the patched tree, which no longer
# has it: the control configures. A copy of the scripts and configs whose legacy.config
# lacks that mark must fail, naming the option.
t_kernel_option_lost_named() {
	local out rc=0
	r=$(mktemp -d)
	trap 'rm -rf "$r" "$B/src/linux-6.1-patched/build-x86_64-legacy-lostcheck" "$B/kernel/6.1-patched-x86_64-legacy-lostcheck"' EXIT
	rm -rf "$B/src/linux-6.1-patched/build-x86_64-legacy-lostcheck"
	out=$(SEED=no BUILD_SUFFIX=-lostcheck CONFIGURE_ONLY=1 "$S/kernel.sh" x86_64 6.1-patched legacy 2>&1) ||
		{ echo "$out"; echo "not ok: the control: an option marked may-vanish failed the configuration"; return 1; }
	echo "$out"
	grep -q 'legacy: configuring$' <<<"$out" || { echo "not ok: the control did not configure"; return 1; }
	cp -a "$ROOT/scripts" "$ROOT/configs" "$ROOT/harness" "$ROOT/patches" "$r/"
	sed -i '/^# may-vanish-on:/d' "$r/configs/legacy.config"
	rm -rf "$B/src/linux-6.1-patched/build-x86_64-legacy-lostcheck"
	out=$(BUILD=$B SEED=no BUILD_SUFFIX=-lostcheck CONFIGURE_ONLY=1 "$r/scripts/kernel.sh" x86_64 6.1-patched legacy 2>&1) || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: a lost option passed"; return 1; }
	tail -1 <<<"$out" | grep -qx '.*x86_64 6.1-patched legacy: options lost in the configuration: CONFIG_SECURITY_SELINUX_DISABLE=y (got: absent);' ||
		{ echo "not ok: the last line does not name the lost option"; return 1; }
	echo "ok: the option the patched tree lacks is named; marked may-vanish, it is not"
}

# A finished build is not made again while nothing it reads changed (kernel.sh): the call
# says "up to date" and runs no make. The control: with one file of the tree newer than
# the build (a document no object reads, its time put back after), make runs again.
t_kernel_up_to_date_until_the_tree_changes() {
	local out
	f=$B/src/linux-6.1-patched/Documentation/admin-guide/LSM/SELinux.rst
	kbuild x86_64 6.1-patched selinux >/dev/null
	out=$("$S/kernel.sh" x86_64 6.1-patched selinux 2>&1)
	echo "$out"
	grep -q 'x86_64 6.1-patched selinux: up to date (nothing it reads changed since its build)$' <<<"$out" ||
		{ echo "not ok: a build with nothing changed was made again"; return 1; }
	# (the time kept outside the tree: a file made or removed there makes its folder newer)
	t=$(mktemp)
	touch -r "$f" "$t"
	trap 'touch -r "$t" "$f" && rm -f "$t"' EXIT
	touch "$f"
	out=$("$S/kernel.sh" x86_64 6.1-patched selinux 2>&1)
	echo "$out"
	! grep -q 'selinux: up to date' <<<"$out" || { echo "not ok: up to date with a newer file in the tree"; return 1; }
	grep -q 'x86_64 6.1-patched selinux: built in [0-9]*s$' <<<"$out" || { echo "not ok: make did not run"; return 1; }
	echo "ok: up to date without make, and made again once a file of the tree was newer"
}

# The shim flag's accept build keeps the tables read-only too.
t_sections_x86_64_patched_accept() {
	o=$(kbuild x86_64 6.1-patched selinux-accept)
	"$H/check-sections.sh" --expect ro --require "$SEL_TABLES" "$o/vmlinux" "$B/src/linux-6.1-patched"
}

# The series' default answer is stock 6.1's: a config that does not choose gets REJECT
# (olddefconfig picks it silently, so the default is what a packager's build gets). The
# accept build is the control: there the same check must see ACCEPT and fail.
t_patched_default_is_reject() {
	d=$(kbuild x86_64 6.1-patched selinux)
	a=$(kbuild x86_64 6.1-patched selinux-accept)
	grep -qx 'CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_REJECT=y' "$d/.config" ||
		{ echo "not ok: the default build did not get REJECT"; return 1; }
	! grep -q '^CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT=y' "$d/.config" ||
		{ echo "not ok: the default build has ACCEPT"; return 1; }
	! grep -qx 'CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_REJECT=y' "$a/.config" ||
		{ echo "not ok: the control (accept build) has REJECT: the check cannot fail"; return 1; }
	grep -qx 'CONFIG_SECURITY_SELINUX_RETIRED_DISABLE_ACCEPT=y' "$a/.config" ||
		{ echo "not ok: the accept build lost ACCEPT"; return 1; }
	echo "ok: default REJECT, and the accept build is told apart"
}

# Negative control for the SafeSetID patch: on stock 6.1 with every LSM, the check must
# fail, and on SafeSetID's table alone.
t_sections_x86_64_stock_lsm_all_safesetid_writable() {
	o=$(BUILD_TARGETS=security/ kbuild x86_64 6.1 lsm-all)
	rc=0
	out=$("$H/check-sections.sh" --expect ro "$o" "$B/src/linux-6.1") || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: check passed on stock 6.1 lsm-all"; return 1; }
	bad=$(echo "$out" | grep '^not ok' | awk '{print $4}' | sed 's/@.*//' | sort -u)
	[ "$bad" = safesetid_security_hooks ] || { echo "not ok: writable: $bad"; return 1; }
	echo "ok: only safesetid_security_hooks is writable on stock 6.1"
}

# --- the boot harness ----------------------------------------------------------------
# The kernel and guest image for a boot: qprep ARCH KERNEL CONFIG sets QKERNEL and QIMG.
qprep() {
	local o
	o=$(kbuild "$1" "$2" "$3")
	QIMG=$("$ROOT/rootfs/build.sh" "$1" | tail -1)
	QKERNEL=$o/$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch shell "$1" | sed -n "s/^KIMAGE=//p")
}

# Boot a kernel of this repo on the guest image and run a command: qboot ARCH KERNEL CONFIG ARGS...
qboot() {
	local arch=$1
	qprep "$1" "$2" "$3"
	shift 3
	"$ROOT/qemu-run.sh" --arch "$arch" --kernel "$QKERNEL" --rootfs "$QIMG" "$@"
}

# SELinux is in the LSM list and systemd came up with no failed unit. A payload boot stops
# at the basic system (harness.target): this one starts the rest (multi-user.target: login,
# D-Bus, the getty), waits for it and sees it active; anything else printed is a failure.
boot_check() {
	out=$(qboot "$1" 6.1-patched selinux --timeout 300 \
		--exec 'cat /sys/kernel/security/lsm; echo; systemctl start multi-user.target; systemctl is-active multi-user.target; systemctl --failed --no-legend --plain')
	echo "$out"
	head -1 <<<"$out" | grep -qw selinux || { echo "not ok: selinux not in the lsm list"; return 1; }
	[ "$(echo "$out" | sed -n 2p)" = active ] || { echo "not ok: multi-user.target not active"; return 1; }
	failed=$(echo "$out" | tail -n +3 | grep -c . || true)
	[ "$failed" -eq 0 ] || { echo "not ok: $failed failed units"; return 1; }
	echo "ok: selinux active, multi-user.target reached, no failed unit"
}

t_boot_x86_64_patched() { boot_check x86_64; }
t_boot_arm64_patched() { boot_check arm64; }

t_harness_exit_status() {
	rc=0
	# The payload's own "WARNING:" line reaches the console too; it is not a kernel warning.
	qboot x86_64 6.1-patched selinux --timeout 300 \
		--exec 'echo hello; echo "WARNING: printed by the payload"; exit 7' || rc=$?
	[ "$rc" -eq 7 ] || { echo "not ok: exit $rc, want 7"; return 1; }
	echo "ok: exit 7 passed through, a payload's WARNING line not taken for the kernel's"
}

# A root that cannot be mounted panics the kernel: reported as 126, not as a pass.
t_harness_panic_reported() {
	rc=0
	qboot x86_64 6.1-patched selinux --timeout 300 --append root=/dev/vdz --exec true || rc=$?
	[ "$rc" -eq 126 ] || { echo "not ok: exit $rc, want 126 (panic)"; return 1; }
	echo "ok: panic reported as 126"
}

# A payload that never ends is killed at the timeout and reported as 124, in time.
t_harness_timeout_reported() {
	local t log started=0
	qprep x86_64 6.1-patched selinux
	log=$(mktemp)
	# The payload must have started before the timeout fired, or this tests the boot's
	# timeout: the console shows systemd starting it. A boot slower than the timeout (a
	# loaded machine) is no verdict; it is tried once more with a longer one.
	for t in 30 120; do
		# Only qemu-run.sh is timed, and the upper bound is not a speed target: the payload
		# sleeps 1000 s, so a run that ends well before that was cut by the timeout, however
		# loaded the machine is.
		rc=0 start=$SECONDS
		"$ROOT/qemu-run.sh" --arch x86_64 --kernel "$QKERNEL" --rootfs "$QIMG" --timeout "$t" \
			--log "$log" --exec 'sleep 1000' || rc=$?
		took=$((SECONDS - start))
		if grep -q 'Starting .*harness\.service' "$log"; then
			started=1
			break
		fi
		echo "the boot did not reach the payload within ${t}s"
	done
	rm -f "$log"
	[ "$started" = 1 ] || { echo "not ok: the payload never started"; return 1; }
	[ "$rc" -eq 124 ] || { echo "not ok: exit $rc, want 124 (timeout)"; return 1; }
	# Not before the timeout (whole seconds, counted by two shells: one second of slack).
	{ [ "$took" -ge $((t - 1)) ] && [ "$took" -lt 500 ]; } || { echo "not ok: took ${took}s for a ${t}s timeout"; return 1; }
	echo "ok: the payload started, and its timeout was reported as 124 after ${took}s"
}

t_harness_bad_input() {
	rc=0
	err=$("$ROOT/qemu-run.sh" --arch vax --kernel x --rootfs y --exec true 2>&1) || rc=$?
	echo "$err"
	if [ "$rc" -ne 125 ] || [ "$(echo "$err" | wc -l)" -ne 1 ] || ! grep -q "unknown arch 'vax'" <<<"$err"; then
		echo "not ok: unknown arch"
		return 1
	fi
	rc=0
	err=$("$S/kernel.sh" x86_64 6.1 nosuchconfig 2>&1) || rc=$?
	echo "$err"
	if [ "$rc" -eq 0 ] || ! grep -q "unknown config 'nosuchconfig' (one of:" <<<"$err"; then
		echo "not ok: unknown config"
		return 1
	fi
	rc=0
	err=$("$S/kernel.sh" x86_64 5.10 selinux 2>&1) || rc=$?
	if [ "$rc" -eq 0 ] || ! grep -q "unknown kernel '5.10'" <<<"$err"; then
		echo "not ok: unknown kernel"
		return 1
	fi
	echo "ok: bad arch, config and kernel refused with one line"
}

# (selinux-migrate-check's fixtures and its sanitizer run are in the fast tier:
# tests/fast/test_selinux_migrate_check.py.)

# --- the matrix ----------------------------------------------------------------------
# matrix.yaml errors: one line naming file, line and key; exit 2; no traceback.
t_matrix_bad_input() {
	tmp=$(mktemp -d)
	printf 'kernels:\n  a: {tree: "5.4", config: selinux}\nscenarios:\n  s: {steps: [state]}\nsets: {default: [{}]}\n' >"$tmp/badtree.yaml"
	printf 'kernels:\n  a: {tree: "6.1", config: selinux}\nscenarios:\n  s:\n    steps: [state, frobnicate]\nsets: {default: [{}]}\n' >"$tmp/badstep.yaml"
	printf 'kernels: [\n' >"$tmp/notyaml.yaml"
	printf 'kernels:\n  a: {tree: "6.1", config: selinux}\nscenarios:\n  s:\n    steps: [state]\n    expect:\n      x: {nokernel: "1"}\nsets: {default: [{}]}\n' >"$tmp/badexpect.yaml"
	fails=0
	for f in "badtree|2: tree" "badstep|5: steps" "notyaml|2: not valid YAML" "badexpect|7: nokernel"; do
		name=${f%%|*} want=${f#*|}
		rc=0
		err=$("$S/matrix.sh" --matrix "$tmp/$name.yaml" --list 2>&1) || rc=$?
		echo "$name: rc=$rc: $err"
		if [ "$rc" -ne 2 ] || [ "$(echo "$err" | wc -l)" -ne 1 ] || ! grep -q "$name.yaml:$want" <<<"$err" ||
			grep -q Traceback <<<"$err"; then
			echo "not ok: $name"
			fails=$((fails + 1))
		fi
	done
	rc=0
	err=$("$S/matrix.sh" --only arch=sparc --list 2>&1) || rc=$?
	echo "$err"
	if [ "$rc" -ne 2 ] || ! grep -q "unknown arch 'sparc'" <<<"$err"; then
		fails=$((fails + 1))
	fi
	rm -rf "$tmp"
	[ "$fails" -eq 0 ]
}


# The CI slice of the matrix (matrix.yaml's test set): both patched builds on every scenario,
# arm64 and the legacy control on the arch-dependent ones; every observation as expected
# (the references' values, which the agree pairs hold the patched builds to, are checked
# when matrix.yaml is read).
t_matrix_test_set() {
	local d=$ROOT/results/make-test
	rm -rf "$d"
	"$S/matrix.sh" --set test --run make-test --baseline none
	# What the run leaves for people and CI systems, from this real run (docs/results.md).
	for f in summary.txt results.ktap junit.xml run.json kcidb.json index.html; do
		[ -s "$d/$f" ] || { echo "not ok: no $f"; return 1; }
	done
	PYTHONPATH=$ROOT /usr/bin/python3 -c '
import json, sys
from harness import kcidb
doc = json.load(open(sys.argv[1]))
assert not kcidb.problems(doc), kcidb.problems(doc)[:1]
cells = int(sys.argv[2])
page = open(sys.argv[3]).read()
assert page.count("<td class=\"cell ") == cells, "the page does not have one cell per result"
' "$d/kcidb.json" "$(find "$d" -name result.json | wc -l)" "$d/index.html"
	# The expected values' own negative control: the legacy cells (hook tables writable,
	# runtime disable working), held to 6.1-patched's values, fail, every one of them.
	local held
	held=$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.hold "$d" --kernel 6.1-legacy --as 6.1-patched) ||
		{ echo "not ok: harness.hold failed"; return 1; }
	echo "$held"
	grep -qE "^hold: 6\.1-legacy held to 6\.1-patched's expected values: ([1-9][0-9]*) of \1 cells fail, " <<<"$held" ||
		{ echo "not ok: a legacy cell passes 6.1-patched's expected values, or there is none"; return 1; }
	echo "ok: summary, KTAP, JUnit, run.json, a valid KCIDB document and the report page; legacy fails 6.1-patched's values"
}

# The generated GitLab child pipeline, run for real: make ci-local runs the test set's x86_64
# slice through gitlab-ci-local (shell executor, each job in its own folder, artifacts passed
# between jobs) in a clean clone of HEAD. Its merged folder must hold what make matrix found
# for the same cells in t_matrix_test_set (results/make-test): the same cells, observations,
# expected values and verdicts (harness/compare.py, which leaves times and paths out).
# Its kernel job starts from the legacy build of this checkout, as from a runner's cache.
t_ci_local_matches_matrix() {
	local want=$ROOT/results/make-test made merged only rc=0
	[ -f "$want/summary.txt" ] || { echo "not ok: no $want/summary.txt: t_matrix_test_set runs first"; return 1; }
	# The slice on the command line: a make test SET=... must not reach this make. A small
	# one, within CI's time: one kernel job (in its own clone, started from our build),
	# two cells in two shards, one of them a freeze, booted side by side (two jobs at once,
	# a runner with two slots). Not the legacy permissive cell: its six writes to the node
	# sleep 5 s each in 6.1's deprecated handler.
	only=arch=x86_64,kernel=6.1-legacy,scenario=cfg-disabled,scenario=enforcing-disabled
	made=$(make -C "$ROOT" --no-print-directory ci-local SET=test ONLY=$only SHARDS=2 CONCURRENCY=2) || rc=$?
	[ "$rc" -eq 0 ] || { echo "not ok: make ci-local exited $rc"; return 1; }
	merged=$ROOT/${made##*$'\n'} # its last line
	[ -f "$merged/summary.txt" ] || { echo "not ok: no merged run folder at $merged"; return 1; }
	# The kernel job started from this checkout's legacy build (KERNEL_SEED_FROM), which an
	# earlier check built: the same sources and .config, so its kernel is kept (no link).
	grep -q 'x86_64 6.1 legacy: starting from build-x86_64-legacy (0 .config lines differ; its kernel kept)$' \
		"$ROOT/build/ci-local/gitlab-ci-local.log" || { echo "not ok: the kernel job did not start from this checkout's build"; return 1; }
	rc=0
	PYTHONPATH=$ROOT /usr/bin/python3 -m harness.compare "$merged" "$want" --set test --only "$only" || rc=$?
	[ "$rc" -eq 0 ] || { echo "not ok: the pipeline's merged cells differ from make matrix's (exit $rc)"; return 1; }
	echo "ok: the pipeline run by gitlab-ci-local found what make matrix found, cell by cell"
}
