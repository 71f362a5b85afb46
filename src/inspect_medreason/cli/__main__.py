"""``python -m inspect_medreason.cli``: the ``medreason`` command."""

import sys

from inspect_medreason.cli.commands import main

sys.exit(main())
