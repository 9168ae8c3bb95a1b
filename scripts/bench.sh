#!/bin/bash
# make bench: measure what the issues set targets for, on this machine, and print a table.
#   cold kernel build (no ccache, fresh build folder) and no-change rebuild, per arch;
#   guest image build, cold (fresh cache) and cached, per arch;
#   boot: qemu start to the payload's result (median of 3), per arch;
#   the fast tier (make check); the CI pipeline generators on the default set;
#   with BENCH_TEST=1 also a warm "make test";
#   with BENCH_TEST_COLD=1 a cold one: .ci/run in a clean clone of HEAD with its own empty
#   cache folder (no ccache, no guest images), as CI runs it; 45-60 min here;
#   with BENCH_MATRIX=1 the default "make matrix" (warm).
# BENCH_ARCHES (default every booted arch, "" for none), BENCH_COLD=0 (skip the cold
# builds) and BENCH_CHECK=0 (skip the fast tier's row) trim it.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
if [ -z "${BENCH_ARCHES+set}" ]; then
	need_pkgs python3 python3-yaml
	BENCH_ARCHES=$(PYTHONPATH=$ROOT /usr/bin/python3 -m harness.arch names --boot)
fi
arches=$BENCH_ARCHES
rows=()
row() { rows+=("$(printf '%-44s %10s %12s' "$1" "$2" "$3")"); info "$1: $2"; }
secs() { local s=$SECONDS; "$@" >/dev/null 2>>"$BUILD/bench.log" || return 1; echo $((SECONDS - s)); }
mkdir -p "$BUILD"
: >"$BUILD/bench.log"

# Targets per arch; an arch without its own entry is held to the new-arch targets (8 min
# cold build, 6 min guest image, 60 s boot under TCG).
declare -A cold_target=([x86_64]=360 [arm64]=420) rootfs_target=([x86_64]=180 [arm64]=360)
declare -A boot_target=([x86_64]=25 [arm64]=25)
for a in $arches; do
	load_arch "$a"
	if [ "${BENCH_COLD:-1}" = 1 ]; then
		# A private build folder and no ccache: a true cold build of the selinux config.
		"$ROOT/scripts/patch.sh" >/dev/null 2>&1
		tree=$BUILD/src/linux-6.1-patched
		rm -rf "$tree/build-$a-selinux-bench"
		t=$(CCACHE_DISABLE=1 SEED=no BUILD_SUFFIX=-bench secs "$ROOT/scripts/kernel.sh" "$a" 6.1-patched selinux) ||
			t=failed
		rm -rf "$tree/build-$a-selinux-bench" "$BUILD/kernel/6.1-patched-$a-selinux-bench"
		row "$a kernel build, cold (selinux, no ccache)" "${t}s" "<= ${cold_target[$a]:-480}s"
	fi
	# An arch that cannot be built or imaged here gets "failed" rows (why: build/bench.log),
	# and the table goes on with the next arch.
	if ! "$ROOT/scripts/kernel.sh" "$a" 6.1-patched selinux >/dev/null 2>>"$BUILD/bench.log"; then
		row "$a kernel build (selinux)" "failed" "(see build/bench.log)"
		continue
	fi
	t=$(secs "$ROOT/scripts/kernel.sh" "$a" 6.1-patched selinux) || t=failed
	row "$a kernel rebuild, nothing changed" "${t}s" "<= 30s"
	if [ "${BENCH_COLD:-1}" = 1 ]; then
		t=$(XDG_CACHE_HOME=$BUILD/bench-cache secs "$ROOT/rootfs/build.sh" "$a") || t=failed
		rm -rf "$BUILD/bench-cache"
		row "$a guest image build, cold" "${t}s" "<= ${rootfs_target[$a]:-360}s"
	fi
	if ! img=$("$ROOT/rootfs/build.sh" "$a" 2>>"$BUILD/bench.log" | tail -1); then
		row "$a guest image" "failed" "(see build/bench.log)"
		continue
	fi
	t=$(secs "$ROOT/rootfs/build.sh" "$a") || t=failed
	row "$a guest image, cached" "${t}s" "~0s"
	k=$BUILD/kernel/6.1-patched-$a-selinux/$KIMAGE
	times=()
	for _ in 1 2 3; do
		t=$(secs "$ROOT/qemu-run.sh" --arch "$a" --kernel "$k" --rootfs "$img" --exec true) || t=failed
		times+=("$t")
	done
	med=$(printf '%s\n' "${times[@]}" | sort -n | sed -n 2p)
	row "$a boot to payload result (median of 3)" "${med}s" "<= ${boot_target[$a]:-60}s"
done
# The fast tier (make check: no kernel, no boot), after a first run that installs its
# packages and npm tools so the row is the suite's own time.
if [ "${BENCH_CHECK:-1}" = 1 ]; then
	make -C "$ROOT" check >/dev/null 2>>"$BUILD/bench.log" || true
	if t=$(secs make -C "$ROOT" check); then t="${t}s"; else t=failed; fi
	row "make check (the fast tier)" "$t" "<= 60s"
fi
# The CI generators on the default set, alone and with the arch-check jobs (target 5 s each).
for engine in gitlab github; do
	for what in "" --arch-check; do
		if t=$(secs env PYTHONPATH="$ROOT" /usr/bin/python3 -m harness.pipeline "$engine" --set default \
			$what -o "$BUILD/bench-pipeline.yml"); then t="${t}s"; else t=failed; fi
		row "$engine pipeline, default set${what:+ and arch-check}" "$t" "<= 5s"
	done
done
if [ "${BENCH_TEST:-0}" = 1 ]; then
	t=$(secs make -C "$ROOT" test) || t="${t:-failed}"
	row "make test, warm" "${t}s" "<= 480s"
fi
if [ "${BENCH_TEST_COLD:-0}" = 1 ]; then
	clone=$BUILD/bench-clone
	rm -rf "$clone" "$BUILD/bench-cache-test"
	git -C "$ROOT" rev-parse --verify -q HEAD >/dev/null || die "BENCH_TEST_COLD needs a git checkout"
	git clone -q "$ROOT" "$clone"
	info "cold make test in $clone (log: $BUILD/bench-test-cold.log)"
	start=$SECONDS
	# .ci/run, the CI entry point (it runs make test), so this is also the CI check.
	if (cd "$clone" && CI=true XDG_CACHE_HOME=$BUILD/bench-cache-test bash .ci/run) >"$BUILD/bench-test-cold.log" 2>&1; then
		t=$((SECONDS - start))
		rm -rf "$clone" "$BUILD/bench-cache-test"
	else
		t="failed after $((SECONDS - start))"
		info "kept for a look: $clone (results/test/) and its caches $BUILD/bench-cache-test"
	fi
	row "make test, cold (clean clone, empty caches)" "${t}s" "<= 2700s"
	info "$(tail -1 "$BUILD/bench-test-cold.log")"
fi
if [ "${BENCH_MATRIX:-0}" = 1 ]; then
	t=$(secs make -C "$ROOT" matrix) || t="${t:-failed}"
	row "make matrix (default set), warm" "${t}s" "(printed)"
fi
printf '%-44s %10s %12s\n' "measure" "here" "target"
printf '%s\n' "${rows[@]}"
