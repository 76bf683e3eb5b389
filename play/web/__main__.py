"""``python -m play.web``: the web table (see ``play.web.cli``)."""

import sys

from play.web.cli import main

sys.exit(main())
