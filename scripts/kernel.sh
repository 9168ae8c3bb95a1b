#!/bin/bash
# Build one kernel out of tree: kernel.sh ARCH KERNEL CONFIG
# Fragments: configs/base.config + configs/arch/<arch>.config + configs/<config>.config and
# the configs it names with "# requires: <name>", merged by the tree's own merge_config.sh
# on allnoconfig. Every option asked for must survive into .config, except those a fragment
# marks "# may-vanish-on: <kernel>..." (on the line before); the arch fragment's
# "# CONFIG_X is not set" also holds when X is out of the arch's reach. Last line: the
# build folder.
# Environment: CONFIGURE_ONLY=1 stops after the configuration; BUILD_SUFFIX names a second
# build folder for the same config; SEED=no builds a new folder from nothing (below);
# DEBIAN_FLAVOUR picks the Debian config for "# base: debian"; BUILD_TARGETS="security/ ..."
# builds those kbuild targets instead of the image (the section check of lsm-all only needs
# the LSMs' objects, a fraction of the kernel).
set -euo pipefail
. "$(dirname "$0")/lib.sh"

[ $# -eq 3 ] || die "usage: kernel.sh ARCH KERNEL CONFIG"
ARCH_IN=$1 KERNEL=$2 CONFIG=$3
load_arch "$ARCH_IN"
# "6.1-series" is series-check.sh's tree (patches applied one by one), not a user choice.
if [ "$KERNEL" != 6.1-series ] || [ ! -d "$BUILD/src/linux-6.1-series" ]; then
	check_kernel "$KERNEL"
fi
check_config "$CONFIG"

need_pkgs build-essential bc bison flex libssl-dev libelf-dev ccache cpio kmod "$CROSS_PKG"

case "$KERNEL" in
6.1-patched) "$ROOT/scripts/patch.sh" >&2 ;;
6.1-series) ;;
6.12) "$ROOT/scripts/source.sh" 6.12 >&2 ;;
*) "$ROOT/scripts/source.sh" 6.1 >&2 ;;
esac
SRC=$BUILD/src/linux-$KERNEL
# The build folder sits right inside the tree: kbuild then uses srctree=.. and every path
# it hands the compiler is relative, so ccache hits across the stock and patched trees.
# build/kernel/<kernel>-<arch>-<config> is a link to it, the name users see.
# BUILD_SUFFIX: a separate build folder for the same config (make bench's cold build).
OUT=$SRC/build-$ARCH_IN-$CONFIG${BUILD_SUFFIX:-}
LINK=$BUILD/kernel/$KERNEL-$ARCH_IN-$CONFIG${BUILD_SUFFIX:-}
mkdir -p "$OUT" "$BUILD/kernel"
# A real folder there holds another job's artefacts (make matrix --prebuilt): ln would put
# the link inside it and leave the old image in place.
if [ -e "$LINK" ] && [ ! -L "$LINK" ]; then
	rm -rf "$LINK"
fi
ln -sfn "$OUT" "$LINK"
# One make per build folder: make test builds some kernels in the background, and whoever
# comes second waits here, then finds nothing left to do.
lock "$OUT/.lock"

CHAIN=$(config_chain "$CONFIG" | tr '\n' ' ')
# "# base: debian" in a fragment: start from Debian's own config for this arch (package
# linux-config-6.1, flavour $DEBIAN_FLAVOUR, default "none_<arch>") instead of our lean
# allnoconfig base, and merge the fragments on top of it.
# shellcheck disable=SC2086
if grep -qx "# base: debian" $CHAIN; then
	need_pkgs linux-config-6.1
	flavour=${DEBIAN_FLAVOUR:-none_$DEB_ARCH}
	DEBCFG=/usr/src/linux-config-6.1/config.${DEB_ARCH}_$flavour.xz
	[ -f "$DEBCFG" ] || die "no Debian config $DEBCFG (linux-config-6.1 on this host ships: $(cd /usr/src/linux-config-6.1 && echo *))"
	FRAGS=$CHAIN
else
	DEBCFG=""
	FRAGS="$ROOT/configs/base.config $ROOT/configs/arch/$ARCH_IN.config $CHAIN"
fi

# shellcheck disable=SC2153 # KARCH comes from the arch data file
export ARCH="$KARCH" CROSS_COMPILE
# A make above us (make kernel ARCH=...) must not leak its variables into the kernel make.
unset MAKEFLAGS MAKELEVEL MFLAGS
export KBUILD_BUILD_TIMESTAMP="1970-01-01" KBUILD_BUILD_USER=backport KBUILD_BUILD_HOST=qemu
ccache_env
# The host programs (kconfig, fixdep, modpost, objtool...) through ccache too: every new
# build folder compiles them again.
MAKE_ARGS=(-C "$SRC" O="$OUT" CC="ccache ${CROSS_COMPILE}gcc" HOSTCC="$CCACHE_HOSTCC" -j"$(nproc)")

# A build folder that was never built starts as a copy of the finished build of the same
# arch, another config's in this tree or the other 6.1 tree (stock or patched: below),
# whose .config differs least from its own (at most SEED_MAX_LINES lines; SEED=no:
# never, as make bench's cold build asks). kbuild then
# rebuilds only what the difference reaches: fixdep records which config symbols each
# object read, and syncconfig touches the changed ones. A fresh folder instead runs every
# object's compile (a ccache hit at best), objtool and fixdep again: here about 300 ms of
# CPU an object, 156 s of wall for a warm x86_64 build, against seconds for the shim
# flag's second build.
# KERNEL_SEED_FROM: other build/ folders (another clone's, a CI runner's cache), whose
# tree of the same name holds the same sources: unpacked from the same package version and
# patched with the same series (their stamps read the same). make ci-local's kernel jobs
# start from the checkout's own builds this way.
SEED_MAX_LINES=${SEED_MAX_LINES:-40}
config_lines() {
	grep -E '^CONFIG_' "$1" | sort
}
# same_stamp FILE1 FILE2: both absent, or both there with the same bytes.
same_stamp() {
	if [ -f "$1" ] || [ -f "$2" ]; then cmp -s "$1" "$2"; fi
}
# Every file of tree $1 as "../path", sorted (its build folders, stamps and the files
# merge_config.sh makes and removes there aside); with a second argument, only those
# newer than its unpacking.
tree_files() {
	(cd "$1" && find . -ignore_readdir_race \( -path './build-*' -o -name '.tmp.config*' -o -name '.merge_tmp.config*' \) \
		-prune -o -type f ! -name .patched-with ! -name .unpacked-from ${2:+-newer .unpacked-from} -print) |
		sed 's|^\./|../|' | sort
}
# A seed from the other 6.1 tree was built from some sources this tree does not have: the
# files either tree holds newer than its unpacking (what the series changed there, or a
# hand here) and those only one of them holds (what the series added or deleted). Each
# object whose kbuild record (.cmd) names one of them, as its source or a dependency, is
# removed, and make builds it again from this tree. gcc writes some paths with a
# "dir/../" in them ("ss/../include/conditional.h"): taken out before comparing. objtool
# (tools/) records its paths from its own folder: a change under tools/ removes its whole
# build. For the legacy kernel after the patched one: 22 objects of 970.
drop_unshared() {
	local pats cmds f b n=0
	pats=$(mktemp) cmds=$(mktemp)
	{
		tree_files "$1" newer
		tree_files "$SRC" newer
		comm -3 <(tree_files "$1") <(tree_files "$SRC") | tr -d '\t'
	} | sort -u >"$pats"
	if grep -q '^\.\./tools/' "$pats"; then
		rm -rf "$OUT/tools"
	fi
	if [ -s "$pats" ]; then
		# shellcheck disable=SC2016 # an awk program
		find "$OUT" -path "$OUT/tools" -prune -o -type f -name '.*.cmd' -print0 |
			xargs -0 -r awk '
				NR == FNR { want[$0] = 1; next }
				FNR == 1 { hit = 0 }
				!hit {
					for (i = 1; i <= NF; i++) {
						t = $i
						sub(/:$/, "", t)
						while (t ~ /\/[^\/.][^\/]*\/\.\.\//)
							sub(/\/[^\/.][^\/]*\/\.\.\//, "/", t)
						if (t in want) { print FILENAME; hit = 1; break }
					}
				}' "$pats" >"$cmds" || die "could not read the kbuild records of $OUT"
	fi
	# dir/.name.o.cmd records dir/name.o
	while IFS= read -r f; do
		b=${f##*/}
		b=${b#.}
		rm -f "${f%/*}/${b%.cmd}"
		n=$((n + 1))
	done <"$cmds"
	info "$ARCH_IN $KERNEL $CONFIG: $(wc -l <"$pats") files differ between the trees, $n objects to build again"
	rm -f "$pats" "$cmds"
}
seed_from_sibling() {
	local sib src best="" best_n="" n keep f from rel_from other kept tree_from root trees=("$SRC") sibs=()
	if [ "${SEED:-}" = no ] || [ "$never_configured" = 0 ]; then
		return 0
	fi
	for root in ${KERNEL_SEED_FROM:-}; do
		src=$root/src/${SRC##*/}
		if [ "$(cd "$src" 2>/dev/null && pwd -P)" != "$(cd "$SRC" && pwd -P)" ] &&
			same_stamp "$src/.unpacked-from" "$SRC/.unpacked-from" && [ -f "$SRC/.unpacked-from" ] &&
			same_stamp "$src/.patched-with" "$SRC/.patched-with"; then
			trees+=("$src")
		fi
	done
	# The other 6.1 tree of this root (stock for the patched tree and the reverse): the
	# same unpacked sources but for what drop_unshared takes out of the copy.
	case "${SRC##*/}" in
	linux-6.1) src=$BUILD/src/linux-6.1-patched ;;
	linux-6.1-patched) src=$BUILD/src/linux-6.1 ;;
	*) src="" ;;
	esac
	if [ -n "$src" ] && [ -f "$SRC/.unpacked-from" ] && same_stamp "$src/.unpacked-from" "$SRC/.unpacked-from"; then
		trees+=("$src")
	fi
	for src in "${trees[@]}"; do
		sibs+=("$src"/build-"$ARCH_IN"-*)
	done
	for sib in "${sibs[@]}"; do
		src=${sib%/*}
		if [ "$sib" = "$OUT" ] || [ "$sib" = "$SRC/build-$ARCH_IN-$CONFIG" ] || [ ! -f "$sib/$KIMAGE" ] ||
			[ ! -f "$sib/.config-from" ]; then
			continue
		fi
		# Built on its tree as it is: a tree unpacked or patched again since (its stamp is
		# newer) may hold sources older than the sibling's objects, which make would keep.
		# (Another root's tree has this one's sources: its stamps read the same.)
		if [ "$src/.unpacked-from" -nt "$sib/$KIMAGE" ] ||
			{ [ -f "$src/.patched-with" ] && [ "$src/.patched-with" -nt "$sib/$KIMAGE" ]; }; then
			continue
		fi
		n=$(diff <(config_lines "$OUT/.config") <(config_lines "$sib/.config") | grep -c '^[<>]' || true)
		if [ "$n" -le "$SEED_MAX_LINES" ] && { [ -z "$best" ] || [ "$n" -lt "$best_n" ]; }; then
			best=$sib best_n=$n
		fi
	done
	[ -n "$best" ] || return 0
	src=${best%/*}
	other=""
	same_stamp "$src/.patched-with" "$SRC/.patched-with" || other=" of ${src##*/}"
	kept=""
	[ -n "$other" ] || [ "$best_n" -ne 0 ] || kept="; its kernel kept"
	info "$ARCH_IN $KERNEL $CONFIG: starting from ${best##*/}$other ($best_n .config lines differ$kept)"
	keep=$(mktemp -d)
	cp -a "$OUT/.config" "$OUT/config.log" "$keep/"
	# Until the copy is whole and what it must lose is gone (below), the folder is neither
	# a seed nor a build: a run cut short before then leaves this mark (see its reader).
	touch "$OUT/.seed-incomplete"
	# Under the sibling's lock: not while it builds. Its lock file is not copied over ours.
	(
		flock 9 && cd "$best" && find . -mindepth 1 -maxdepth 1 ! -name .lock ! -name .config ! -name .config-from \
			! -name config.log ! -name build.log ! -name '.built-with*' -exec cp -a --reflink=auto -t "$OUT" {} +
	) 9>"$best/.lock" || die "could not copy ${best##*/} into $OUT"
	# tools/ (x86's objtool) is built by tools/build, which records absolute paths: they
	# must name this folder and this tree, or objtool is built again and every object, which
	# depends on the objtool binary, with it. (The kernel's own objects name the tree as
	# "..".) Some name the folder relative to the tree's tools/objtool too
	# ("../../build-x86_64-selinux/"): in the same tree that still finds the sibling's files,
	# in the other tree nothing, and a missing file makes objtool stale. Its .cmd and .d
	# files keep their times.
	# The tree first, then the folder under its new name: each pattern is applied once.
	tree_from=$(printf '%s/' "$src" | sed 's/[][\\.*^$|]/\\&/g')
	from=$(printf '%s/' "$SRC/${best##*/}" | sed 's/[][\\.*^$|]/\\&/g')
	rel_from=$(printf '../%s/' "${best##*/}" | sed 's/[][\\.*^$|]/\\&/g')
	while IFS= read -r -d '' f; do
		sed -e "s|$tree_from|$SRC/|g" -e "s|$from|$OUT/|g" -e "s|$rel_from|../${OUT##*/}/|g" "$f" >"$f.seed"
		touch -r "$f" "$f.seed"
		mv "$f.seed" "$f"
	done < <(grep -rlZF --include="*.cmd" --include="*.d" -e "$src/" -e "../${best##*/}/" "$OUT/tools" 2>/dev/null || true)
	[ -z "$other" ] || drop_unshared "$src"
	# The sibling's own kernel is not this folder's: linked again, even when no object
	# changed (a BUILD_TARGETS build never links, and keeps none). Unless it is: the same
	# sources (same tree, or another root's of the same stamps) and the same .config, as
	# make ci-local's kernel job finds its checkout's build; make then finds it up to date
	# (a link of vmlinux and its image costs about 30 s of CPU here).
	[ -n "$kept" ] || rm -f "$OUT/vmlinux" "$OUT/System.map" "$OUT/$KIMAGE"
	# Ours, written after the copy: newer than the copied include/config/auto.conf, so the
	# build starts with syncconfig.
	cp "$keep/.config" "$OUT/.config"
	cp "$keep/config.log" "$OUT/config.log"
	rm -rf "$keep"
	rm -f "$OUT/.seed-incomplete"
}

# A seed cut short (kernel.sh stopped between its copy and its end) holds objects of
# another build that nothing would take out: the folder starts again empty.
if [ -e "$OUT/.seed-incomplete" ]; then
	info "$ARCH_IN $KERNEL $CONFIG: a start from another build was cut short, starting again"
	find "$OUT" -mindepth 1 -maxdepth 1 ! -name .lock -exec rm -rf {} +
fi
# (every kconfig run writes include/config/auto.conf if it is missing: asked before
# configuring.)
never_configured=1
[ ! -e "$OUT/include/config/auto.conf" ] || never_configured=0

# Configure only when the fragments (or the tree) changed, so a no-change rebuild is quick.
# shellcheck disable=SC2086
# A file that is not there (.patched-with of an unpatched tree) is left out: cat's status
# must not count.
sum=$({ cat $FRAGS ${DEBCFG:+"$DEBCFG"} "$SRC/.unpacked-from" "$SRC/.patched-with" 2>/dev/null || true; } |
	sha256sum | cut -c1-16)
if [ ! -f "$OUT/.config" ] || [ "$(cat "$OUT/.config-from" 2>/dev/null)" != "$sum" ]; then
	info "$ARCH_IN $KERNEL $CONFIG: configuring"
	rm -f "$OUT/.config-from"
	if [ -n "$DEBCFG" ]; then
		xz -dc "$DEBCFG" >"$OUT/.config.debian"
		# shellcheck disable=SC2086
		(cd "$SRC" && ./scripts/kconfig/merge_config.sh -m -O "$OUT" "$OUT/.config.debian" $FRAGS) \
			>"$OUT/config.log" 2>&1 || die "configuring failed, see $OUT/config.log"
		# -m only concatenates: olddefconfig resolves the merged file.
		make "${MAKE_ARGS[@]}" olddefconfig >>"$OUT/config.log" 2>&1 ||
			die "olddefconfig failed, see $OUT/config.log"
	else
		# -n runs allnoconfig with the fragments as KCONFIG_ALLCONFIG: its .config is
		# resolved already (an olddefconfig after it leaves the file byte for byte as it is,
		# checked on x86_64, arm64, s390 and mips64el, 6.1 and 6.12), and every kconfig run
		# costs about 9 s of the compiler probes in the Kconfig files.
		# shellcheck disable=SC2086
		(cd "$SRC" && ./scripts/kconfig/merge_config.sh -n -O "$OUT" $FRAGS) \
			>"$OUT/config.log" 2>&1 || die "configuring failed, see $OUT/config.log"
	fi
	# Every requested option must have survived (kunit.py's validate_config, in shell).
	# As in merge_config.sh, a later fragment's value for a symbol replaces an earlier one.
	declare -A want=() vanish=() from=()
	for f in $FRAGS; do
		v=""
		while IFS= read -r line; do
			case "$line" in
			"# may-vanish-on:"*) v=${line#\# may-vanish-on:}; continue ;;
			CONFIG_*=*) sym=${line%%=*} ;;
			"# CONFIG_"*" is not set") sym=${line#\# }; sym=${sym%% *} ;;
			*) v=""; continue ;;
			esac
			want[$sym]=$line
			vanish[$sym]=$v
			from[$sym]=$f
			v=""
		done <"$f"
	done
	lost=""
	for sym in "${!want[@]}"; do
		grep -qxF "${want[$sym]}" "$OUT/.config" && continue
		# The arch fragment's "# CONFIG_X is not set" takes back a base option the arch
		# cannot have: it holds when X is out of the arch's reach (no line in .config; the
		# "is not set" line itself matched above).
		# Only there, and only for a symbol some Kconfig defines: elsewhere, or misspelt, it
		# must still show as lost.
		if [ "${from[$sym]}" = "$ROOT/configs/arch/$ARCH_IN.config" ] &&
			[ "${want[$sym]}" = "# $sym is not set" ] &&
			! grep -qE "^$sym=" "$OUT/.config" &&
			grep -rqE --include='Kconfig*' "^[[:space:]]*(menu)?config ${sym#CONFIG_}[[:space:]]*$" "$SRC"; then
			continue
		fi
		case " ${vanish[$sym]} " in *" $KERNEL "*) continue ;; esac
		have=$(grep -E "^$sym=|^# $sym is not set" "$OUT/.config" || echo "absent")
		lost="$lost ${want[$sym]} (got: $have);"
	done
	[ -z "$lost" ] || die "$ARCH_IN $KERNEL $CONFIG: options lost in the configuration:$lost"
	seed_from_sibling
	echo "$sum" >"$OUT/.config-from"
fi

# CONFIGURE_ONLY=1: stop after the configuration and its check (quick config tests).
if [ "${CONFIGURE_ONLY:-0}" = 1 ]; then
	info "$ARCH_IN $KERNEL $CONFIG: configured"
	echo "$LINK"
	exit 0
fi
read -r -a targets <<<"${BUILD_TARGETS:-$(basename "$KIMAGE")}"
# A build that finished is not made again while nothing it reads changed: the same make
# command, targets, compiler and kbuild variables of the environment, its .config, and no
# file or folder of the tree (build folders and the tree's own folder, which they change,
# aside) newer than the build's start. make itself would find nothing to do, after a walk
# of every object's dependencies that costs 10-25 s here; this look costs about a second.
# A tree unpacked or patched again has a newer stamp (.unpacked-from, .patched-with).
compiler=$(command -v "${CROSS_COMPILE}gcc")
built_key=$({
	printf '%s\n' "${MAKE_ARGS[*]}" "${targets[*]}" "$(stat -L -c '%n %s %Y' "$compiler")"
	env | grep -E '^(KCFLAGS|KCPPFLAGS|KAFLAGS|KBUILD_[A-Z_]+|LLVM[A-Z_]*)=' | sort || true
} | sha256sum | cut -c1-16)
if [ "$(cat "$OUT/.built-with" 2>/dev/null)" = "$built_key" ] && [ ! "$OUT/.config" -nt "$OUT/.built-with" ] &&
	{ [ -n "${BUILD_TARGETS:-}" ] || [ -f "$OUT/$KIMAGE" ]; } &&
	[ -z "$(find "$SRC" -mindepth 1 -path "$SRC/build-*" -prune -o -newer "$OUT/.built-with" -print -quit)" ]; then
	info "$ARCH_IN $KERNEL $CONFIG: up to date (nothing it reads changed since its build)"
	echo "$LINK"
	exit 0
fi
rm -f "$OUT/.built-with"
# Written now, moved in once the build passed: its time is the build's start, so a file
# changed while make ran is newer than it.
echo "$built_key" >"$OUT/.built-with.new"
info "$ARCH_IN $KERNEL $CONFIG: building (log: $LINK/build.log)"
start=$SECONDS
make "${MAKE_ARGS[@]}" "${targets[@]}" >"$OUT/build.log" 2>&1 &
# Progress every minute: elapsed time and the last object built.
if ! wait_showing $! "$ARCH_IN $KERNEL $CONFIG" "$OUT/build.log" '^ +[A-Z]+'; then
	die "$ARCH_IN $KERNEL $CONFIG: build failed after $((SECONDS - start))s: $(first_error "$OUT/build.log") (log: $OUT/build.log)"
fi
[ -n "${BUILD_TARGETS:-}" ] || [ -f "$OUT/$KIMAGE" ] || die "no $KIMAGE in $OUT"
mv "$OUT/.built-with.new" "$OUT/.built-with"
info "$ARCH_IN $KERNEL $CONFIG: built in $((SECONDS - start))s"
echo "$LINK"
