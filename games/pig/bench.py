"""Pig's speed measurements for ``python -m train.bench`` (``GameSpec.bench``): OpenSpiel's
C++ ``pig`` (``pip install -e ".[bench]"``), the same game (two players, the goal and faces
of Pig's defaults) and the same random-legal-move loop as the bench's run of the batched
env against the random bot, counting decisions on both sides.  A step of the batched env is
one decision of the agent's seat, and it also plays every die and every move of the
opponent's seat (from its table) up to the agent's next decision; OpenSpiel's figure counts
every decision of both seats (one ``apply_action`` each, from Python) and not its chance
nodes (the dice).  Its every-node figure is also what the other games' batched envs are
set against."""

from __future__ import annotations

from typing import Any, Callable

from games.pig import SPEC

OPENSPIEL = "OpenSpiel pig (C++), decisions"
OPENSPIEL_NODES = "OpenSpiel pig (C++), every node"  # the peer the other games' envs keep


def openspiel_pig_params() -> dict[str, int]:
    """OpenSpiel's parameters for Pig's defaults (two players)."""
    options = SPEC.check_options({})
    return {"players": 2, "winscore": options["goal"], "diceoutcomes": options["faces"]}


def openspiel_pig(seconds: float, timed: Callable[[Callable[[], int], float], float]):
    """OpenSpiel's C++ pig from Python, a uniformly random legal action at every
    decision and a uniform die at every chance node, timed by ``timed`` (the bench's
    best window).  Decisions/s (both seats; chance nodes not counted); every node/s
    (chance nodes too: the bench's figure before it counted decisions) and decisions
    and nodes per game."""
    import numpy as np
    import pyspiel

    game = pyspiel.load_game("pig", openspiel_pig_params())
    rng = np.random.default_rng(0)
    state = game.new_initial_state()
    tally = {"nodes": 0, "decisions": 0, "games": 0}

    def run():
        nonlocal state
        nodes = decisions = 0
        while nodes < 1000:
            if state.is_terminal():
                state = game.new_initial_state()
                tally["games"] += 1
            if state.is_chance_node():
                outcomes = state.chance_outcomes()
                state.apply_action(outcomes[rng.integers(len(outcomes))][0])
            else:
                actions = state.legal_actions()
                state.apply_action(actions[rng.integers(len(actions))])
                decisions += 1
            nodes += 1
        tally["nodes"] += nodes
        tally["decisions"] += decisions
        return decisions

    rate = timed(run, seconds)
    per_game = max(tally["games"], 1)
    return rate, {
        "nodes_per_s": rate * tally["nodes"] / max(tally["decisions"], 1),
        "decisions_per_game": tally["decisions"] / per_game,
        "nodes_per_game": tally["nodes"] / per_game,
    }


# other programs of this game: name -> fn(seconds, timed) -> (rate, notes)
PEERS = {OPENSPIEL: openspiel_pig}
# figures of a peer's notes, printed under it, that every game's batched env is set against:
# name -> (the peer, the note)
SHARED_PEERS = {OPENSPIEL_NODES: (OPENSPIEL, "nodes_per_s")}


def summary(results: dict[str, Any], notes: dict[str, dict], ours: str) -> list[str]:
    """Pig's batched env (the measurement ``ours``) against OpenSpiel's pig: the ratio of
    decisions/s, what each side counts, and what the rules' one difference changes
    (decisions/game)."""
    mine, theirs = results.get(ours), results.get(OPENSPIEL)
    if not (mine and theirs):
        return []
    my_notes, os_notes = notes.get(ours, {}), notes.get(OPENSPIEL, {})
    p = openspiel_pig_params()
    lines = [
        f"batched pig env / {OPENSPIEL}: {mine / theirs:.1f}x",
        f"  same game: {p['players']} players, goal {p['winscore']}, {p['diceoutcomes']} faces; "
        "a random legal move per decision",
        "  ours: a step is one decision of the agent's seat, with every die and the",
        "  opponent's moves (its table) up to the next; OpenSpiel: one decision of",
        f"  either seat; its chance nodes (dice) are not counted ({os_notes.get('nodes_per_game', 0):.0f} nodes/game)",
    ]
    if my_notes.get("steps_per_game") and os_notes.get("decisions_per_game"):
        lines.append(
            f"  decisions/game: OpenSpiel {os_notes['decisions_per_game']:.1f} (both seats), "
            f"ours {my_notes['steps_per_game']:.1f} (agent's)"
        )
    lines += [
        "  OpenSpiel asks at turn total 0 (a hold there passes) and ends on a hold;",
        "  ours rolls that roll itself and ends on reaching the goal: fewer decisions",
    ]
    return lines
