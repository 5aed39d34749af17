"""``python -m graphtx.cli``: the same as the ``graphtx`` command."""

import sys

from graphtx.cli import main

sys.exit(main())
