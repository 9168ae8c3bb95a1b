"""Helpers the fast tier's tests share (a module of its own name, as fakeqemu.py, because
tests/ has a conftest.py too): changing one cell's captured result.json, and calling a
command's main() in this process."""
import contextlib
import io
import json
import os


def edit_result(celldir, change):
    """Apply change(result) to CELLDIR/result.json and write it back."""
    path = os.path.join(celldir, "result.json")
    with open(path) as f:
        res = json.load(f)
    change(res)
    with open(path, "w") as f:
        json.dump(res, f)


def call_main(main, *args):
    """main(argv) in this process: (exit status, stdout, stderr); argparse's refusal counts."""
    out, err = io.StringIO(), io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
        try:
            rc = main([str(a) for a in args])
        except SystemExit as e:
            rc = e.code
    return rc, out.getvalue(), err.getvalue()
