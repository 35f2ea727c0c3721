"""``python -m uncertainty_lab.classroom``: the student copies, or ``grade SUBMISSION`` (see the package doc)."""

import sys

from . import main

sys.exit(main())
