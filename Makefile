# Front door. Every target installs what it is missing (as root, through apt) and
# prints the path of what it made as its last line where there is one.
ARCH ?= x86_64
KERNEL ?= 6.1-patched
CONFIG ?= selinux
ONLY ?=
TESTS ?=
SET ?=
JOBS ?=

SHELL := /bin/bash
.DEFAULT_GOAL := help
.PHONY: help source patch debian-patches kernel rootfs advisor arch-check arch-check-quick series-check matrix test check ci-pipeline merge bench checkpatch lint clean

help: ## list the targets
	@echo "make TARGET [ARCH=x86_64|arm64] [KERNEL=6.1|6.1-patched|6.12] [CONFIG=name]"
	@grep -E '^[a-z-]+:.*## ' $(MAKEFILE_LIST) | sed 's/:.*## /\t/' | expand -t 18 | sed 's/^/  /'
	@echo "configs: $$(ls configs/*.config | xargs -n1 basename | sed 's/\.config$$//' | grep -vx base | tr '\n' ' ')"

source: ## install linux-source-6.1/6.12 and unpack them into build/src
	@scripts/source.sh

patch: ## make build/src/linux-6.1-patched from patches/6.1/series
	@scripts/patch.sh

kernel: ## build one kernel (ARCH, KERNEL, CONFIG); prints its build folder
	@scripts/kernel.sh "$(ARCH)" "$(KERNEL)" "$(CONFIG)"

rootfs: ## build (or reuse) the bookworm guest image for ARCH; prints its path
	@rootfs/build.sh "$(ARCH)"

advisor: ## build selinux-migrate-check for ARCH (static); prints the binary's path
	@echo "$$(scripts/guest.sh "$(ARCH)")/selinux-migrate-check"

debian-patches: ## the series as a debian/patches slice with DEP-3 headers; prints its folder
	@scripts/debian-patches.sh

checkpatch: ## run the tree's checkpatch.pl on every patch of the series
	@scripts/source.sh 6.1 && tests/host/checkpatch.sh build/src/linux-6.1

arch-check: ## build the patched tree for every arch Debian cross-compiles (long); table
	@scripts/arch-check.sh $(ARCHES)

arch-check-quick: ## arch-check without the full images (security/ and bpf objects only)
	@scripts/arch-check.sh --no-image $(ARCHES)

series-check: ## bisectability: every prefix of the series builds x86_64 selinux and lsm-all
	@scripts/series-check.sh

matrix: ## build and boot the default matrix (ONLY=key=value,... a slice; SET=debian; JOBS=n guests)
	@scripts/matrix.sh $(if $(SET),--set "$(SET)") $(if $(ONLY),--only "$(ONLY)") $(if $(JOBS),--jobs "$(JOBS)")

# What the suite itself needs (the builds and boots install theirs as they go): pytest, the
# matrix reader, the KCIDB schema check (rfc3987 for its URI format) and the report
# page's rendering check (chromium, and python3-pil to read its screenshot), and git and
# rsync for gitlab-ci-local's shell executor (test_cilocal runs make ci-local's runner),
# and pytest-xdist for the workers both tiers run on.
TEST_PKGS = python3-pytest python3-pytest-xdist python3-yaml python3-jsonschema python3-rfc3987 python3-pil qemu-utils e2fsprogs chromium git rsync

# Two workers run the slow tier's checks in order (two xdist groups: the boots, the rest),
# the others the fast tier's tests: slow is named first, so its groups are the first work
# handed out.
test: ## both tiers of the suite (builds and boots beside the fast tier); ends with pytest's summary line
	@scripts/need.sh $(TEST_PKGS)
	@mkdir -p results/test && rm -f results/test/times.tsv
	@cd tests && /usr/bin/python3 -m pytest -v -n auto --dist loadgroup --junitxml=../results/test/junit.xml slow fast $(if $(TESTS),-k "$(TESTS)")

check: ## the fast tier only: no kernel build, no boot; one pytest worker per core
	@scripts/need.sh $(TEST_PKGS)
	@cd tests && /usr/bin/python3 -m pytest -q -n auto fast

ci-pipeline: ## the GitLab CI child pipeline of SET (ONLY=, SHARDS=); prints its path (docs/ci.md)
	@scripts/need.sh python3 python3-yaml python3-jsonschema
	@PYTHONPATH=. /usr/bin/python3 -m harness.pipeline gitlab --set "$(or $(SET),default)" $(if $(ONLY),--only "$(ONLY)") $(if $(SHARDS),--shards "$(SHARDS)")

merge: ## merge shard results (DIRS="results/shard-*") into OUT=results/merged, as make matrix writes a run
	@scripts/need.sh python3 python3-yaml python3-jsonschema
	@PYTHONPATH=. /usr/bin/python3 -m harness.merge $(or $(DIRS),results/shard-*) -o "$(or $(OUT),results/merged)"

.PHONY: ci-local
ci-local: ## run the child pipeline of SET=test ONLY=arch=x86_64 SHARDS=2 with gitlab-ci-local in a clone of HEAD; prints the merged folder
	@scripts/need.sh git rsync python3 python3-yaml python3-jsonschema
	@PYTHONPATH=. /usr/bin/python3 -m harness.cilocal --set "$(or $(SET),test)" --only "$(or $(ONLY),arch=x86_64)" --shards "$(or $(SHARDS),2)" $(if $(CONCURRENCY),--concurrency "$(CONCURRENCY)")

.PHONY: ci-arch-check
ci-arch-check: ## arch-check as GitLab CI jobs, one per arch (ARCHES=), and the merged table; SET= adds the matrix (docs/ci.md)
	@scripts/need.sh python3 python3-yaml python3-jsonschema
	@PYTHONPATH=. /usr/bin/python3 -m harness.pipeline gitlab --arch-check $(if $(ARCHES),--arches "$(ARCHES)") $(if $(SET),--set "$(SET)" $(if $(ONLY),--only "$(ONLY)") $(if $(SHARDS),--shards "$(SHARDS)"))

bench: ## measure build, boot and test times; prints a table
	@scripts/bench.sh

lint: ## shellcheck every shell script
	@shellcheck -x qemu-run.sh scripts/*.sh rootfs/build.sh tests/*.sh tests/host/*.sh tests/host/fixtures/*.sh .ci/run

clean: ## remove build/ and results/ (caches under ~/.cache stay)
	rm -rf build results
