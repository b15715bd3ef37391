"""``python -m compute_lab``: the same as the ``compute-lab`` command."""

import sys

from .start import main

if __name__ == "__main__":  # pragma: no cover
    sys.exit(main())
