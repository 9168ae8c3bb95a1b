#!/bin/bash
# make matrix: install what the runner needs, then run harness/matrix.py with the arguments.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_pkgs python3 python3-yaml python3-jsonschema
PYTHONPATH=$ROOT${PYTHONPATH:+:$PYTHONPATH} exec /usr/bin/python3 -m harness.matrix "$@"
