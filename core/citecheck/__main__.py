"""``python -m citecheck``: the command line (``citecheck``)."""

import sys

from citecheck.cli.main import main

if __name__ == "__main__":  # (importing this module, as a walk of the package does, runs nothing)
    sys.exit(main())
