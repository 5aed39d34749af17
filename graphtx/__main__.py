"""``python -m graphtx`` = the ``graphtx`` command (also what ``torchrun -m graphtx`` starts)."""

import sys

from graphtx.cli import main

sys.exit(main())
