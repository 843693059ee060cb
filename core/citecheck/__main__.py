"""``python -m citecheck``: the command line (``citecheck``)."""

import sys

from citecheck.cli.main import main

sys.exit(main())
