#!/bin/bash
# make matrix: install what the runner needs, then run scripts/matrix.py with the arguments.
set -eu
. "$(dirname "$0")/lib.sh"
need_pkgs python3 python3-yaml python3-jsonschema
exec /usr/bin/python3 "$ROOT/scripts/matrix.py" "$@"
