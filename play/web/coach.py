"""The coach: the exact win probability of every legal move at a decision.

The numbers are the game's (its adapter's ``values``, from its exact solver),
with both players playing optimally from the position on (the bot at the table
may play worse; the figures are what the move is worth against best play).  A
position is described by plain numbers (the adapter's ``snapshot`` of what the
engine shows at the decision), so a finished game's review can be computed
again from its record.  A game whose adapter gives a reason in
``coach_unavailable`` has no coach at that table; the page says why in one line.
"""

from __future__ import annotations

NOTE = "Exact win probabilities with both players playing optimally from the position on."


def figures(rules, snap: dict, options: dict) -> dict:
    """The coach's figures at one decision: every legal move, best first, with its cost in pp.

    ``rules.values(snap, options)`` gives (the position's value, the moves), each move
    with ``action`` and ``p``, the mover's chance to win after it."""
    value, moves = rules.values(snap, options)
    rows = []
    for m in sorted(moves, key=lambda m: (-m.p, m.action)):
        cost = 100.0 * (value - m.p)
        rows.append(
            {
                "action": m.action,
                "text": rules.describe_snapshot(snap, m.action),
                "p": m.p,
                "cost_pp": 0.0 if cost < 1e-9 else cost,
                "best": cost < 1e-9,
            }
        )
    return {"position": rules.position_text(snap), "value": value, "moves": rows, "snapshot": snap}
