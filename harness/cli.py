"""What every command of the package does with bad arguments: one line naming the problem,
"<command>: error: ...", and exit 2, the same as bad input; never argparse's usage block."""
import argparse
import sys


class ArgParser(argparse.ArgumentParser):
    def __init__(self, name, **kw):
        super().__init__(**kw)
        self.name = name

    def error(self, message):
        print(f"{self.name}: error: {message}", file=sys.stderr)
        sys.exit(2)
