"""The bottom layer: what every game and every tool shares and no game is named in.

``core.engine`` (the engine interface and the one game loop), ``core.dice`` (the
only source of chance), ``core.spec`` (what a game declares), ``core.files``
(atomic writes, bounded reads) and ``core.cli`` (command-line helpers).  Plain
Python and numpy: no RL import.

``core.__version__`` is the version of the installed distribution ``dice-arena``
(``pyproject.toml``), as ``python -m train --version`` and ``python -m play
--version`` print it; ``"0+unknown"`` when the project runs uninstalled.
"""

from importlib.metadata import PackageNotFoundError, version as _version

try:
    __version__: str = _version("dice-arena")
except PackageNotFoundError:  # run from a checkout that was never installed
    __version__ = "0+unknown"

del PackageNotFoundError, _version
