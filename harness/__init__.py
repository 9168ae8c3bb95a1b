"""The orchestration of selinux-ro-hooks: the arch model, the matrix spec and runner, the
bash suite driver. Run with Debian's /usr/bin/python3 and Debian's packages only."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# A cell's outcomes that say the lab failed, not the kernel, when they are not the expected
# one: the guest ran out of time or stopped without a result, or the harness could not
# start it, or its kernel, guest image or probe did not build. The runner, KCIDB and the
# report all read this one list.
LAB_OUTCOMES = ("timeout", "no-result", "harness-error", "build-error")
