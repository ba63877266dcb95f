# SPDX-License-Identifier: MIT
"""``python3 -m gpufit``: see :mod:`gpufit.cli`."""

import sys

from .cli import main

if __name__ == "__main__":
    sys.exit(main())
