"""``python -m inspect_medreason.cli``: the ``medreason`` command."""

import sys

from inspect_medreason.cli.main import main

sys.exit(main())
