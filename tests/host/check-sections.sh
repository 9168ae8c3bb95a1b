#!/bin/bash
# Section check: are the LSM hook heads, blob sizes and every LSM's hook table of a vmlinux
# inside [__start_ro_after_init, __end_ro_after_init)?
#   check-sections.sh --expect ro|rw [--require "sym ..."] VMLINUX SRCTREE [NM]
# The table names come from the source tree (every "struct security_hook_list NAME[]" and
# "struct lsm_blob_sizes NAME"), so a new LSM cannot slip past. Prints KTAP; with
# --expect rw (the negative control on a legacy kernel) each table must be writable instead.
# Exit 0 when every table matches the expectation and every --require'd one is present.
set -eu
expect="" require=""
while [ $# -gt 0 ]; do
	case "$1" in
	--expect) expect=$2; shift 2 ;;
	--require) require=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: check-sections.sh --expect ro|rw [--require SYMS] VMLINUX SRCTREE [NM]" >&2; exit 2; }
case "$expect" in ro | rw) ;; *) echo "check-sections.sh: --expect must be ro or rw" >&2; exit 2 ;; esac
vmlinux=$1 src=$2 nm=${3:-nm}
[ -f "$vmlinux" ] || { echo "check-sections.sh: no such vmlinux: $vmlinux" >&2; exit 2; }

lists=$(grep -rhoE 'struct security_hook_list [a-z0-9_]+\[\]' "$src/security" |
	awk '{print $3}' | tr -d '[]' | sort -u)
names=$( {
	echo security_hook_heads
	echo "$lists"
	grep -rhoE 'struct lsm_blob_sizes [a-z0-9_]+ ' "$src/security" | awk '{print $3}'
} | sort -u)

syms=$("$nm" "$vmlinux")
# A hook list is always initialised (LSM_HOOK_INIT entries), so a .bss symbol of the same
# name is some other object (kernel/bpf's BTF id set "bpf_lsm_hooks"); heads and blob
# sizes may be uninitialised, and on a legacy kernel sit in .bss.
addr() {
	if echo "$lists" | grep -qx "$1"; then
		echo "$syms" | awk -v s="$1" '$3 == s && $2 !~ /^[bB]$/ {print $1}'
	else
		echo "$syms" | awk -v s="$1" '$3 == s {print $1}'
	fi
}
start=$(addr __start_ro_after_init)
end=$(addr __end_ro_after_init)
if [ -z "$start" ] || [ -z "$end" ]; then
	echo "check-sections.sh: no ro_after_init markers in $vmlinux" >&2
	exit 2
fi

results=""
n=0 bad=0
for name in $names; do
	for a in $(addr "$name"); do
		n=$((n + 1))
		# Hex addresses of one width compare as strings.
		if [[ ! "$a" < "$start" ]] && [[ "$a" < "$end" ]]; then where=ro; else where=rw; fi
		if [ "$where" = "$expect" ]; then
			results="$results
ok $n $name@$a is $where"
		else
			bad=$((bad + 1))
			results="$results
not ok $n $name@$a is $where, expected $expect"
		fi
	done
done
for r in $require; do
	n=$((n + 1))
	if [ -n "$(addr "$r")" ]; then
		results="$results
ok $n required table $r present"
	else
		bad=$((bad + 1))
		results="$results
not ok $n required table $r present # not in $vmlinux"
	fi
done
echo "KTAP version 1"
echo "1..$n"
echo "${results#?}"
echo "# ro_after_init = [$start, $end): $((n - bad)) as expected, $bad not"
[ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
