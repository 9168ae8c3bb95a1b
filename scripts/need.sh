#!/bin/bash
# Install the named Debian packages if they are missing: need.sh PKG...
set -euo pipefail
. "$(dirname "$0")/lib.sh"
need_pkgs "$@"
