"""``python -m torchdoctor`` is the ``torchdoctor`` command."""

import sys

from .cli import main

sys.exit(main())
