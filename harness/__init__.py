"""The orchestration of selinux-ro-hooks: the arch model, the matrix spec and runner, the
bash suite driver. Run with Debian's /usr/bin/python3 and Debian's packages only."""
import os

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
