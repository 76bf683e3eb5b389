"""420's whole two-player policy as CSV, for ``python -m play export 420`` (``GameSpec.export``).

:func:`policy_table` (the solver's) turns any agent into a table ``P[h, o, k]`` over
every decision state with one batched ``action_probs`` call; :func:`write_policy_csv`
writes the agent's most probable reroll in each state, rows by hand then opponent hand.
"""

from __future__ import annotations

import csv
import io
from pathlib import Path
from typing import TextIO

import numpy as np

from core.files import write_output
from games.dice420 import game as g
from games.dice420.solver import decision_batch, policy_table  # noqa: F401 (the export's API)

CSV_HEADER = ("hand", "opponent", "reroll")


def policy_rows(agent_or_table) -> list[tuple[str, str, str]]:
    """(hand, opponent, reroll) for every decision state, by hand index then opponent index.

    The reroll is the agent's most probable keep (its move, for a deterministic agent).
    """
    table = agent_or_table if isinstance(agent_or_table, np.ndarray) else policy_table(agent_or_table)
    states, _, _ = decision_batch()
    best = table[states[:, 0], states[:, 1]].argmax(axis=1)
    return [
        (g.format_hand(g.HANDS[h]), g.format_hand(g.HANDS[o]), g.format_hand(g.reroll_of(g.HANDS[h], int(k))))
        for (h, o), k in zip(states.tolist(), best.tolist())
    ]


def write_policy_csv(agent_or_table, out: str | Path | TextIO, force: bool = False) -> int:
    """Write the policy as CSV (header ``hand,opponent,reroll``); returns the number of rows.

    A path is written as a command's output (:func:`core.files.write_output`): atomically,
    an existing file replaced only with ``force``, never through a link or to a device, a
    FIFO or a folder (``FileRefused``).  The CSV (about 300 KB) is built in memory first."""
    rows = policy_rows(agent_or_table)
    if isinstance(out, (str, Path)):
        text = io.StringIO()
        n = _write_rows(rows, text)
        write_output(out, text.getvalue(), force, "CSV file")
        return n
    return _write_rows(rows, out)


def _write_rows(rows, f) -> int:
    writer = csv.writer(f, lineterminator="\n")
    writer.writerow(CSV_HEADER)
    writer.writerows(rows)
    return len(rows)


def is_deterministic(table: np.ndarray) -> bool:
    """Whether the table puts all probability on one keep in every decision state."""
    states, _, _ = decision_batch()
    return bool(np.all(table[states[:, 0], states[:, 1]].max(axis=1) > 1 - 1e-9))
