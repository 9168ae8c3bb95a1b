#!/bin/bash
# Section check: are the LSM hook heads, blob sizes and every LSM's hook table read-only
# after init?
#   check-sections.sh --expect ro|rw [--require "sym ..."] VMLINUX|BUILD-DIR SRCTREE [NM]
# Given a vmlinux: is each table inside [__start_ro_after_init, __end_ro_after_init)?
# Given a build folder (a build of only security/, which is all a many-LSM config needs
# here): is each table, in the object that defines it, in section .data..ro_after_init,
# which the linker script puts inside that range? The table names come from the source
# tree (every "struct security_hook_list NAME[]" and "struct lsm_blob_sizes NAME"), so a
# new LSM cannot slip past. Prints KTAP; with --expect rw (the negative control on a
# legacy kernel) each table must be writable instead. Exit 0 when every table matches the
# expectation and every --require'd one is present.
set -euo pipefail
expect="" require=""
while [ $# -gt 0 ]; do
	case "$1" in
	--expect) expect=$2; shift 2 ;;
	--require) require=$2; shift 2 ;;
	*) break ;;
	esac
done
[ $# -ge 2 ] || { echo "usage: check-sections.sh --expect ro|rw [--require SYMS] VMLINUX|BUILD-DIR SRCTREE [NM]" >&2; exit 2; }
case "$expect" in ro | rw) ;; *) echo "check-sections.sh: --expect must be ro or rw" >&2; exit 2 ;; esac
target=$1 src=$2 nm=${3:-nm}
if [ -d "$target" ]; then
	mode=objects
	[ -d "$target/security" ] || { echo "check-sections.sh: no security/ objects in $target" >&2; exit 2; }
elif [ -f "$target" ]; then
	mode=vmlinux
else
	echo "check-sections.sh: no such vmlinux or build folder: $target" >&2
	exit 2
fi

# grep finding no table (status 1) is not an error here: the count at the end is the check.
lists=$(grep -rhoE 'struct security_hook_list [a-z0-9_]+\[\]' "$src/security" |
	awk '{print $3}' | tr -d '[]' | sort -u || true)
names=$( {
	echo security_hook_heads
	echo "$lists"
	grep -rhoE 'struct lsm_blob_sizes [a-z0-9_]+ ' "$src/security" | awk '{print $3}' || true
} | sort -u)

if [ "$mode" = objects ]; then
	# "NAME SECTION" for every symbol the objects define (objdump -t: "addr flags section
	# <tab> size name"; undefined references are *UND*).
	# objdump's status is not the check (none at all is caught just below).
	syms=$(find "$target/security" -name '*.o' ! -name '*.mod.o' -print0 | sort -z |
		xargs -0 "${nm%nm}objdump" -t |
		awk -F'\t' 'NF >= 2 { n = split($1, a, " "); m = split($2, b, " ");
			if (a[n] != "*UND*") print b[m], a[n] }' || true)
	[ -n "$syms" ] || { echo "check-sections.sh: no symbols in $target/security" >&2; exit 2; }
	places() { echo "$syms" | awk -v s="$1" '$1 == s {print $2}'; }
	where() { if [ "$1" = .data..ro_after_init ]; then echo ro; else echo rw; fi; }
	range="section .data..ro_after_init"
else
	syms=$("$nm" "$target")
	# A hook list is always initialised (LSM_HOOK_INIT entries), so a .bss symbol of the
	# same name is some other object (kernel/bpf's BTF id set "bpf_lsm_hooks"); heads and
	# blob sizes may be uninitialised, and on a legacy kernel sit in .bss.
	places() {
		if grep -qx "$1" <<<"$lists"; then
			echo "$syms" | awk -v s="$1" '$3 == s && $2 !~ /^[bB]$/ {print $1}'
		else
			echo "$syms" | awk -v s="$1" '$3 == s {print $1}'
		fi
	}
	start=$(places __start_ro_after_init)
	end=$(places __end_ro_after_init)
	if [ -z "$start" ] || [ -z "$end" ]; then
		echo "check-sections.sh: no ro_after_init markers in $target" >&2
		exit 2
	fi
	# Hex addresses of one width compare as strings.
	where() { if [[ ! "$1" < "$start" ]] && [[ "$1" < "$end" ]]; then echo ro; else echo rw; fi; }
	range="ro_after_init = [$start, $end)"
fi

results=""
n=0 bad=0
for name in $names; do
	for a in $(places "$name"); do
		n=$((n + 1))
		where=$(where "$a")
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
	if [ -n "$(places "$r")" ]; then
		results="$results
ok $n required table $r present"
	else
		bad=$((bad + 1))
		results="$results
not ok $n required table $r present # not in $target"
	fi
done
echo "KTAP version 1"
echo "1..$n"
echo "${results#?}"
echo "# $range: $((n - bad)) as expected, $bad not"
[ "$bad" -eq 0 ] && [ "$n" -gt 0 ]
