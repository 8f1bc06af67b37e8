"""``python -m lanes``: the command line (:mod:`lanes.cli`)."""

import sys

from .cli import main

sys.exit(main())
