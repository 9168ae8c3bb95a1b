# The tests of "make test", in the order they run. Sourced by tests/run.sh; each t_NAME runs
# in a subshell with set -eu, its output going to results/test/NAME.log. Exit 0 = pass,
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

# --- the series ---------------------------------------------------------------------
t_series_patch_p1() {
	"$S/patch.sh"
}

t_series_git_am() {
	"$S/source.sh"
	"$H/series-git-am.sh" "$B/src/linux-6.1"
}

t_series_apply_failure_named() {
	"$S/source.sh"
	"$H/apply-fail.sh" "$B/src/linux-6.1"
}

t_checkpatch() {
	"$S/source.sh"
	"$H/checkpatch.sh" "$B/src/linux-6.1"
}

t_tree_clean_patched() {
	"$S/patch.sh"
	"$H/check-tree.sh" --expect clean "$B/src/linux-6.1-patched"
}

# Negative control: the same check must find every pattern in the unpatched tree.
t_tree_stale_unpatched() {
	"$S/source.sh"
	"$H/check-tree.sh" --expect stale "$B/src/linux-6.1"
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

t_sections_x86_64_patched_lsm_all() {
	o=$(kbuild x86_64 6.1-patched lsm-all)
	# shellcheck disable=SC2086
	"$H/check-sections.sh" --expect ro --require "$(echo $ALL_TABLES)" "$o/vmlinux" "$B/src/linux-6.1-patched"
}

# Negative control for the SafeSetID patch: on stock 6.1 with every LSM, the check must
# fail, and on SafeSetID's table alone.
t_sections_x86_64_stock_lsm_all_safesetid_writable() {
	o=$(kbuild x86_64 6.1 lsm-all)
	rc=0
	out=$("$H/check-sections.sh" --expect ro "$o/vmlinux" "$B/src/linux-6.1") || rc=$?
	echo "$out"
	[ "$rc" -ne 0 ] || { echo "not ok: check passed on stock 6.1 lsm-all"; return 1; }
	bad=$(echo "$out" | grep '^not ok' | awk '{print $4}' | sed 's/@.*//' | sort -u)
	[ "$bad" = safesetid_security_hooks ] || { echo "not ok: writable: $bad"; return 1; }
	echo "ok: only safesetid_security_hooks is writable on stock 6.1"
}
