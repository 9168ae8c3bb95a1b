# Shared helpers for the scripts in this folder. Sourced, never run.
# shellcheck shell=bash

# Parameter expansion rather than dirname and basename: these lines run at the start of
# every script, qemu-run.sh's once per boot, and each process started costs here.
_lib=${BASH_SOURCE[0]}
[[ $_lib == */* ]] || _lib=./$_lib
ROOT=$(cd "${_lib%/*}/.." && pwd)
BUILD=${BUILD:-$ROOT/build}
export CACHE=${XDG_CACHE_HOME:-$HOME/.cache}/selinux-backport
KERNELS="6.1 6.1-patched 6.12"
PROG=${0##*/}

die() {
	echo "$PROG: error: $*" >&2
	exit 1
}

info() {
	echo "[$PROG] $*" >&2
}

# wait_showing PID WHAT LOG [ERE]: wait for the background job PID, saying every minute
# (PROGRESS_EVERY seconds) how long it has run and the last line of LOG that matches ERE,
# so that a step of many minutes (a kernel build, debootstrap) is not silent. Returns the
# job's exit status.
wait_showing() {
	local pid=$1 what=$2 log=$3 re=${4:-.} start=$SECONDS last
	while kill -0 "$pid" 2>/dev/null; do
		for _ in $(seq "${PROGRESS_EVERY:-60}"); do kill -0 "$pid" 2>/dev/null && sleep 1; done
		if kill -0 "$pid" 2>/dev/null; then
			# a serial console's lines end in CR LF
			last=$(grep -aE "$re" "$log" 2>/dev/null | tail -1 | tr -d '\r' | sed 's/^ *//' | cut -c1-100 || true)
			info "$what: $((SECONDS - start))s${last:+, $last}"
		fi
	done
	wait "$pid"
}

# Names of the files in a folder with a suffix, without the suffix: the valid choices.
names_in() {
	local f out=""
	for f in "$1"/*"$2"; do
		[ -e "$f" ] || continue
		f=${f##*/}
		out="$out ${f%"$2"}"
	done
	echo "${out# }"
}

# An arch is a plain name (lower case, digits, _) with a data file configs/arch/<name>.yaml,
# nothing else (a path such as "../../x" never gets near a file).
check_arch() {
	local q
	[ -n "${1:-}" ] || die "ARCH is not set (one of: $(names_in "$ROOT/configs/arch" .yaml))"
	if ! [[ $1 =~ ^[a-z0-9_]+$ ]] || [ ! -f "$ROOT/configs/arch/$1.yaml" ]; then
		# %q: a name with a newline or an escape still makes one line.
		q=$1
		[[ $q =~ ^[[:graph:]]+$ ]] || printf -v q '%q' "$1"
		die "unknown arch '$q' (one of: $(names_in "$ROOT/configs/arch" .yaml))"
	fi
}

# Load an arch's facts into the shell (KARCH, CROSS_COMPILE, KIMAGE, QEMU, ...): the data
# file is read by harness/arch.py, the one parser of it, which prints them quoted.
load_arch() {
	local facts
	check_arch "${1:-}"
	# Debian's python3 and python3-yaml, looked for by their files: asking dpkg costs a
	# process start on every boot of a matrix.
	if [ ! -x /usr/bin/python3 ] || [ ! -f /usr/lib/python3/dist-packages/yaml/__init__.py ]; then
		need_pkgs python3 python3-yaml
	fi
	facts=$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch shell "$1" 2>&1) || die "${facts#error: }"
	eval "$facts"
}

check_kernel() {
	case " $KERNELS " in
	*" ${1:-} "*) ;;
	*) die "unknown kernel '${1:-}' (one of: $KERNELS)" ;;
	esac
}

check_config() {
	[ -n "${1:-}" ] || die "CONFIG is not set (one of: $(config_names))"
	case "$1" in */* | .* | base) die "unknown config '$1' (one of: $(config_names))" ;; esac
	[ -f "$ROOT/configs/$1.config" ] || die "unknown config '$1' (one of: $(config_names))"
}

# A config's fragment files, dependencies first: a config may require another ("# requires:
# <name>"), one level or more.
config_chain() {
	local name=$1 req r
	req=$(sed -n 's/^# requires: *//p' "$ROOT/configs/$name.config")
	for r in $req; do
		[ -f "$ROOT/configs/$r.config" ] || die "configs/$name.config requires unknown config '$r'"
		config_chain "$r"
	done
	echo "$ROOT/configs/$name.config"
}

config_names() {
	names_in "$ROOT/configs" .config | tr ' ' '\n' | grep -vx base | tr '\n' ' ' | sed 's/ $//'
}

# A build log's first error: the compiler's "error:" line (not a file named *error*, such
# as libfdt's fdt_strerror.o), else make's "*** ... Error"; paths as in the tree.
first_error() {
	{ grep -m1 -E '(^|[^[:alnum:]_])error:' "$1" || grep -m1 -E '\*\*\* .*Error' "$1" ||
		echo "no error line in the log"; } | sed 's|^\.\./||' | cut -c1-100
}

# Install Debian packages that are missing (as root, through apt).
need_pkgs() {
	local p name status missing=() asked=()
	local -A installed=()
	for p in "$@"; do
		[ -z "$p" ] || asked+=("$p")
	done
	[ ${#asked[@]} -gt 0 ] || return 0
	# One dpkg-query for all of them (it exits 1 if one is unknown to dpkg: that one is
	# then simply missing). Its whole output is read, so no writer gets a broken pipe.
	# Keyed as asked: foo:i386 by name and arch (asked beside a plain foo, the native foo's
	# line must not answer for it), a plain name by name.
	local arch
	while read -r name arch status; do
		if [[ $status == *"ok installed"* ]]; then installed[$name]=1 installed[$name:$arch]=1; fi
	done < <(dpkg-query -W -f='${Package} ${Architecture} ${Status}\n' "${asked[@]}" 2>/dev/null || true)
	for p in "${asked[@]}"; do
		[ -n "${installed[$p]-}" ] || missing+=("$p")
	done
	[ ${#missing[@]} -eq 0 ] && return 0
	[ "$(id -u)" = 0 ] || die "missing packages: ${missing[*]} (run as root or: apt-get install ${missing[*]})"
	info "installing: ${missing[*]}"
	mkdir -p "$BUILD"
	# Another of our jobs may be installing too (make test builds guest images beside the
	# kernels): wait for dpkg's lock rather than fail on it.
	local apt=(apt-get -o DPkg::Lock::Timeout=600)
	if ! DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" \
		>>"$BUILD/apt.log" 2>&1; then
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" update >>"$BUILD/apt.log" 2>&1 || true
		DEBIAN_FRONTEND=noninteractive "${apt[@]}" install -y --no-install-recommends "${missing[@]}" \
			>>"$BUILD/apt.log" 2>&1 ||
			die "could not install: ${missing[*]} (see $BUILD/apt.log)"
	fi
}

# Hold FILE's lock until this script ends; whoever comes second waits here. make test
# builds kernels and guest images in the background, and two make invocations may overlap.
lock() {
	local fd
	exec {fd}>"$1"
	flock "$fd"
}

# ccache for the kernel makes (kernel.sh, arch-check.sh), one cache for every tree: the
# build folders sit inside their trees and kbuild hands the compiler relative paths, so a
# file the series leaves alone hits across the stock and patched trees (BASEDIR, NOHASHDIR).
# Depend mode: on a miss the compiler runs once, and ccache reads the headers from the
# dependency file kbuild asks for (-MMD) instead of running the preprocessor first. A cold
# x86_64 kernel here: 932 s of CPU, against 1206 s without it and 846 s without ccache.
# What it gives up, a hit across configs through the preprocessed source, the legacy
# kernel gets by starting from the patched build (kernel.sh).
# The host programs (CCACHE_HOSTCC) are the exception: with -MMD the dependency file leaves
# out system headers, and theirs (libc's, libelf's, OpenSSL's) change with a package
# upgrade that leaves gcc alone. The kernel's objects read none but gcc's own
# (-nostdinc), which change with gcc (CCACHE_COMPILERCHECK).
ccache_env() {
	export CCACHE_DIR=${CCACHE_DIR:-$CACHE/ccache} CCACHE_BASEDIR=$BUILD CCACHE_NOHASHDIR=true
	export CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G} CCACHE_COMPILERCHECK=content CCACHE_DEPEND=1
	# shellcheck disable=SC2034 # read by kernel.sh and arch-check.sh
	CCACHE_HOSTCC="env CCACHE_NODEPEND=1 ccache gcc"
}
