#!/bin/bash
# Tree check: no trace of runtime disable, writable hooks or checkreqprot left in a kernel tree, all
# arches and docs included. SECURITY_SELINUX_DISABLE may only stay in
# Documentation/ABI/removed/ (the removal notice names the old option) and in the
# arch/*/configs/ defconfigs, whose stale line the series leaves alone as stable rules ask
# (Kconfig ignores it; make arch-check proves each of them ends with runtime disable off).
#   check-tree.sh --expect clean|stale TREE
# --expect stale is the negative control on the unpatched tree: there every pattern must
# be found, or the check could not have failed. Prints KTAP; exit 0 if all as expected.
set -euo pipefail
if [ "${1:-}" != --expect ] || [ $# -ne 3 ]; then
	echo "usage: check-tree.sh --expect clean|stale TREE" >&2
	exit 2
fi
expect=$2 tree=$3
[ -d "$tree/security" ] || { echo "check-tree.sh: not a kernel tree: $tree" >&2; exit 2; }

patterns="__lsm_ro_after_init SECURITY_WRITABLE_HOOKS security_delete_hooks selinux_disable( SECURITY_SELINUX_DISABLE avc_disable( exit_sel_fs( SECURITY_SELINUX_CHECKREQPROT_VALUE checkreqprot_set("
echo "KTAP version 1"
echo "1..$(echo "$patterns" | wc -w)"
# One pass over the tree for all patterns ("file:match" lines), then count per pattern.
args=()
for p in $patterns; do args+=(-e "$p"); done
all=$(
	cd "$tree"
	# Not the tree's: build folders, and merge_config.sh's temporary files, which a kernel
	# build configuring in this tree at the same moment (make test's background) holds in
	# the top folder for a second (.tmp.config.*, .merge_tmp.config.*: seen in a CI run).
	grep -rIoF --exclude-dir=.git --exclude-dir='build-*' --exclude='.tmp.config.*' \
		--exclude='.merge_tmp.config.*' "${args[@]}" . | sed 's|^\./||' |
		grep -v '^Documentation/ABI/removed/' |
		grep -vE '^arch/[^/]+/configs/[^:]+:SECURITY_SELINUX_DISABLE$' | sort -u
	true
)
n=0 bad=0
for p in $patterns; do
	n=$((n + 1))
	hits=$(printf '%s\n' "$all" | awk -F: -v p="$p" 'substr($0, length($1) + 2) == p {print $1}')
	count=$(printf '%s' "$hits" | grep -c . || true)
	if { [ "$expect" = clean ] && [ "$count" -eq 0 ]; } ||
		{ [ "$expect" = stale ] && [ "$count" -gt 0 ]; }; then
		echo "ok $n $p: $count files"
	else
		bad=$((bad + 1))
		echo "not ok $n $p: $count files, expected $expect"
		printf '%s\n' "$hits" | sed -n '1,20s/^/# /p'
	fi
done
[ "$bad" -eq 0 ]
