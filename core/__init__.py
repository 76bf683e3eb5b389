"""The bottom layer: what every game and every tool shares and no game is named in.

``core.engine`` (the engine interface and the one game loop), ``core.dice`` (the
only source of chance), ``core.spec`` (what a game declares), ``core.files``
(atomic writes, bounded reads) and ``core.cli`` (command-line helpers).  Plain
Python and numpy: no RL import.
"""
