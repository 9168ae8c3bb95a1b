"""What every command of the package does with bad arguments or bad input: one line naming
the problem, "<command>: error: ...", and exit 2; never argparse's usage block or a traceback."""
import argparse
import sys


class ArgParser(argparse.ArgumentParser):
    def __init__(self, name, **kw):
        super().__init__(**kw)
        self.name = name

    def error(self, message):
        print(f"{self.name}: error: {message}", file=sys.stderr)
        sys.exit(2)


def made(name, make, errors):
    """Run make(), which writes a file and returns its path, or (path, status) when what it
    made also has a verdict (a table with a failed row: status 1); print the path as the
    last line (exit 0 or that status), or one line for one of the expected errors or an
    OSError (exit 2)."""
    try:
        path = make()
    except errors as e:
        print(f"{name}: error: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"{name}: error: {e.filename}: {e.strerror}", file=sys.stderr)
        return 2
    path, status = path if isinstance(path, tuple) else (path, 0)
    print(path)
    return status
