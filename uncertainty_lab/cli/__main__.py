"""``python -m uncertainty_lab.cli``: the ``uncertainty-lab`` command."""

import sys

from . import main

sys.exit(main())
