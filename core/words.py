"""Reading the words a person types for a move: die values ("6 5", "6,5", "65"),
"all", and a leading word such as "keep".  The games' views (``GameSpec.view``)
read their moves with these; the command words every front-end knows ("q", "?",
"legal") are the front-end's own (``play.prompt``)."""

from __future__ import annotations

import re

ALL_WORDS = {"all", "a", "*"}


def strip_word(line: str, words: tuple[str, ...]) -> tuple[bool, str]:
    """(True, the rest) if ``line`` starts with one of ``words`` not followed by a letter
    ("keep 4 2", "k42"), else (False, ``line``)."""
    for word in words:
        if line.startswith(word) and (line[len(word) :] == "" or not line[len(word)].isalpha()):
            return True, line[len(word) :]
    return False, line


def parse_dice(text: str, advice: str, empty: str | None = None) -> tuple[int, ...]:
    """Die values from text like "6 5", "6,5", "65" or "6-5".

    Raises ``ValueError``: ``empty`` for blank text (if given), or a message ending
    in ``advice`` for anything that is not die values 1 to 6."""
    tokens = [t for t in re.split(r"[\s,;/+-]+", text.strip()) if t]
    if not tokens and empty is not None:
        raise ValueError(empty)
    values = []
    for token in tokens:
        if not token.isdigit():
            raise ValueError(f"I could not read {token!r}: {advice}")
        for ch in token:
            if not "1" <= ch <= "6":
                raise ValueError(f"{ch} is not a die value: dice show 1 to 6")
            values.append(int(ch))
    return tuple(values)
