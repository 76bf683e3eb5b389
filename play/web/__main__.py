"""``python -m play.web``: the web table (see ``play.web.cli``)."""

from core.cli import run_quietly
from play.web.cli import main

run_quietly(main)
