"""The bottom layer: what every game and every tool shares and no game is named in.

``core.engine`` (the engine interface and the one game loop), ``core.dice`` (the
only source of chance), ``core.spec`` (what a game declares), ``core.files``
(atomic writes, bounded reads) and ``core.cli`` (command-line helpers).  Plain
Python and numpy: no RL import.

``core.__version__`` is the version of the installed distribution ``dice-arena``
(``pyproject.toml``), as ``python -m train --version`` and ``python -m play
--version`` print it; ``"0+unknown"`` when the project runs uninstalled.
"""


def __getattr__(name: str):
    """``core.__version__``, read from the distribution's metadata when first asked for
    (importing ``importlib.metadata`` at start-up costs the programs' first milliseconds,
    before they can meet a Ctrl-C in one line)."""
    if name != "__version__":
        raise AttributeError(f"module 'core' has no attribute {name!r}")
    from importlib.metadata import PackageNotFoundError, version

    try:
        value = version("dice-arena")
    except PackageNotFoundError:  # run from a checkout that was never installed
        value = "0+unknown"
    globals()["__version__"] = value
    return value
