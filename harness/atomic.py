"""Files that appear whole or not at all: a reader (a report, a CI job, the next run) never
sees half of one, and a failed write leaves nothing behind. Every file the package writes
goes through here."""
import json
import os
import tempfile


def write_text(path, text, mode=0o644, errors="strict"):
    """path holds text once this returns; on any failure it is as it was. Returns path."""
    folder = os.path.dirname(os.path.abspath(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{os.path.basename(path)}.", suffix=".tmp", dir=folder)
    try:
        with os.fdopen(fd, "w", encoding="utf-8", errors=errors) as f:
            f.write(text)
        os.chmod(tmp, mode)
        os.replace(tmp, path)
    except BaseException:
        if os.path.exists(tmp):
            os.unlink(tmp)
        raise
    return path


def write_json(path, doc):
    return write_text(path, json.dumps(doc, indent=1) + "\n")
