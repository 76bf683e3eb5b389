"""``python -m play evaluate GAME``: the one evaluation front-end, for every game.

What is the game's comes from its folder, through its spec:

* ``GameSpec.evaluate``: a module of the game's exact evaluations, each optional, each
  taking the game's options as keywords and raising ``ValueError`` (one line) where it
  cannot give its figures:
  ``two_player_lines(rows)`` the lines of its own exact two-player table of (name, agent)
  rows; ``table_figures(seats, memo)`` (P(not losing), best reply's) of every seat of a
  table of (label, agent) seats (``memo``: a dict kept for one evaluation, for what an
  agent costs to tabulate); ``table_note(players)`` words for the tables' headings.
* ``GameSpec.exact``: without ``two_player_lines``, the two-player exact figures come from
  the game's exact module (``exact_figures``, ``format_figures``) against each of its
  two-player bots.
* ``GameSpec.explain``: ``"module:function"`` giving ``function(name, agent, top)``'s lines,
  where an agent's exact gap to the optimum goes.

What is generic is here: simulated matches against each bot at two players, simulated
tables of N seats with Wilson intervals (``play.match``), the per-seat tables, the usage
errors.  What a game does not offer is said in one line.
"""

from __future__ import annotations

import threading
import time
from typing import Optional, Sequence, TextIO

import numpy as np

import agents
import games
from agents.base import pp
from core.dice import RandomDice
from core.engine import play_out
from core.narrate import wrap
from core.spec import GameSpec
from play import UsageError, derive_seed, progress_printer
from play.match import Rate, format_against, play_match_n

LABEL_W = 20  # longer agent labels are cut (from the left: a path keeps its file name)


def _option_text(options: dict) -> str:
    return ", ".join(f"{k} {v}" for k, v in options.items())


def _own(spec: GameSpec):
    """The game's module of exact evaluations (``GameSpec.evaluate``), or None."""
    return games.load(spec.evaluate) if spec.evaluate else None


def evaluate(
    spec: GameSpec,
    rows: Sequence[tuple[str, object]],
    exact: bool,
    n_games: int,
    seed: Optional[int],
    out: TextIO,
    err: Optional[TextIO] = None,
    players: int = 2,
    opponents: Optional[Sequence[tuple[str, object]]] = None,
    **options,
) -> None:
    """Each (name, agent) of ``rows``.  Two players and no ``opponents``: exact figures by the
    game's solver, or simulated matches against each of its bots.  Otherwise a table of
    ``players`` seats: the agent at seat 1, ``opponents`` (label, agent) at the others (by
    default the agent itself), and for each seat its P(not losing), exact with its best
    reply's and its regret, or simulated with its 95% Wilson interval."""
    if players == 2 and opponents is None:
        (_exact_two if exact else _simulated_two)(spec, rows, n_games, seed, out, err, options)
        return
    try:
        spec.check_players(players)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if opponents is not None and len(opponents) != players - 1:
        raise UsageError(
            f"{len(opponents)} opponents given for a table of {players}: give {players - 1}, one per other seat"
        )
    tables = [
        [(name, agent), *(opponents if opponents is not None else [(name, agent)] * (players - 1))]
        for name, agent in rows
    ]
    if exact:
        print_exact_tables(spec, tables, out, options, err)
    else:
        print_simulated_tables(spec, tables, n_games, seed, out, err, options)


# --- two players ------------------------------------------------------------------------
class Heartbeat:
    """While an exact computation runs, a line on ``err`` every ``every`` seconds saying
    what is computed and for how long (exact tables of 3 or more players take minutes).
    A context manager; a daemon thread, stopped on exit."""

    def __init__(self, err: Optional[TextIO], what: str, every: float = 10.0):
        self.err, self.what, self.every = err, what, every
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def __enter__(self) -> "Heartbeat":
        if self.err is not None:
            self.start = time.monotonic()
            self._thread = threading.Thread(target=self._beat, daemon=True)
            self._thread.start()
        return self

    def _beat(self) -> None:
        while not self._stop.wait(self.every):
            print(f"  ... {self.what}: {time.monotonic() - self.start:.0f} s so far", file=self.err, flush=True)

    def __exit__(self, *exc) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join()


def _exact_two(spec: GameSpec, rows, n_games, seed, out: TextIO, err, options: dict) -> None:
    own = _own(spec)
    if own is not None and hasattr(own, "two_player_lines"):
        try:
            with Heartbeat(err, "exact evaluation"):
                for line in own.two_player_lines(rows, **options):
                    print(line, file=out, flush=True)
        except ValueError as e:
            raise UsageError(str(e).splitlines()[0]) from None
        return
    if not spec.exact:
        raise UsageError(f"{spec.name} has no exact solver: evaluate it without --exact (simulated games)")
    solver = games.load(spec.exact)
    bots = list(spec.bots_for(2))
    setting = _option_text(options)
    try:
        tables = {bot: agents.bot_table(spec.name, bot, **options) for bot in bots}
    except ValueError as e:  # e.g. a solver that refuses the options (Pig's goals over 200)
        raise UsageError(f"exact evaluation failed: {str(e).splitlines()[0]}") from None
    print(
        wrap(
            f"{spec.name}, exact: each agent against each two-player bot ({', '.join(bots)})"
            + (f", {setting}" if setting else "")
            + ", by the game's solver.",
            indent="",
        ),
        file=out,
    )
    for name, agent in rows:
        try:
            figures = solver.exact_figures(agent, tables, **options)
        except ValueError as e:
            raise UsageError(f"exact evaluation of {name} failed: {str(e).splitlines()[0]}") from None
        print(file=out)
        for line in solver.format_figures(name, figures, bots, **options):
            print(line, file=out, flush=True)


def _simulated_two(
    spec: GameSpec, rows, n_games: int, seed: Optional[int], out: TextIO, err: Optional[TextIO], options: dict
) -> None:
    bots = list(spec.bots_for(2))
    setting = _option_text(options)
    progress = progress_printer(err) if err is not None else None
    print(
        wrap(
            f"{spec.name}, simulated: each agent against each bot ({', '.join(bots)}), {n_games} "
            f"two-player games each"
            + (f" ({setting}, seed {seed})" if setting else f" (seed {seed})")
            + ", each seat held in half of them.",
            indent="",
        ),
        file=out,
    )
    for name, agent in rows:
        results = []
        for k, bot in enumerate(bots):
            opponent = agents.make_agent(spec.name, bot, derive_seed(seed, 100 + k))
            results.append(
                play_match_n(
                    spec.name, [agent, opponent], n_games, seed=seed, names=(name, bot), progress=progress, **options
                )
            )
        print(file=out)
        print(format_against(name, results), file=out, flush=True)


# --- a table of N seats -----------------------------------------------------------------
def _label(name: str) -> str:
    return name if len(name) <= LABEL_W else "..." + name[-(LABEL_W - 3) :]


def _setting(spec: GameSpec, players: int, options: dict, *more: str) -> str:
    """The words in a table's heading: the game, its options, its note, and ``more``."""
    own = _own(spec)
    note = own.table_note(players, **options) if own is not None and hasattr(own, "table_note") else ""
    return ", ".join(filter(None, (spec.name, _option_text(options), note, *more)))


def _seat_names(spec: GameSpec, players: int) -> list[str]:
    narrator = spec.narrator(players)
    return [narrator.seat_name(s) for s in range(players)]


def format_table(spec: GameSpec, labels: Sequence[str], figures: Sequence[tuple[float, float]]) -> list[str]:
    """The per-seat exact table: seat, agent, P(not losing), best reply's, regret in pp."""
    seats = _seat_names(spec, len(labels))
    seat_w = max(len("seat"), *(len(s) for s in seats))
    width = max(len("agent"), *(len(_label(n)) for n in labels))
    lines = [f"{'seat':<{seat_w}}  {'agent':<{width}}  {'P(not losing)':>13}  {'best reply':>10}  {'regret (pp)':>11}"]
    for seat, name, (value, best) in zip(seats, labels, figures):
        lines.append(
            f"{seat:<{seat_w}}  {_label(name):<{width}}  {value:>13.6f}  {best:>10.6f}  {pp(best - value):>11.4f}"
        )
    return lines


def print_exact_tables(
    spec: GameSpec,
    tables: Sequence[Sequence[tuple[str, object]]],
    out: TextIO,
    options: dict,
    err: Optional[TextIO] = None,
    every: float = 10.0,
) -> None:
    """Each table's exact per-seat figures (``table_figures`` of the game's evaluations);
    while one is computed, a line on ``err`` every ``every`` seconds (:class:`Heartbeat`)."""
    players = len(tables[0]) if tables else 2
    own = _own(spec)
    if own is None or not hasattr(own, "table_figures"):
        raise UsageError(
            f"{spec.name} offers no exact evaluation at a table of {players} players or against chosen "
            "opponents yet: evaluate it without --exact (simulated games), or exactly at two players "
            "against its bots"
        )
    print(
        wrap(
            f"Exact P(not losing) at a table of {players} ({_setting(spec, players, options)}), each seat's "
            "best reply to the others and its regret (best reply minus the seat, in percentage points):",
            indent="",
        ),
        file=out,
    )
    memo: dict = {}  # kept for the whole evaluation: an agent is tabulated once for all its tables
    for table in tables:
        labels = [name for name, _ in table]
        try:
            with Heartbeat(err, f"exact evaluation of the table of {labels[0]} ({len(table)} players)", every):
                figures = own.table_figures(list(table), memo, **options)
        except ValueError as e:  # e.g. an agent that looks at other hands, or weight on illegal moves
            message = str(e).splitlines()[0]
            if len(tables) == 1:
                raise UsageError(f"exact evaluation of the table of {labels[0]} failed: {message}") from None
            print(file=out)
            print(wrap(f"(skipping {labels[0]}: {message})", indent=""), file=out)
            continue
        print(file=out)
        print("\n".join(format_table(spec, labels, figures)), file=out, flush=True)


def simulate_table(
    spec: GameSpec, agents_by_seat: Sequence[object], n_games: int, seed: Optional[int], progress=None, **options
) -> np.ndarray:
    """Games not lost by each seat (its return above 0: with one winner, games won) in ``n_games``
    engine games with the seats fixed (the first player as the rules have it), all dice from
    one ``RandomDice(seed)``."""
    dice, players = RandomDice(seed), list(agents_by_seat)
    kept = np.zeros(len(players), dtype=int)
    for i in range(n_games):
        table = play_out(spec.new_game(len(players), dice=dice, **options), players, spec.codec)
        kept += np.asarray(table.returns()) > 0
        if progress is not None:
            progress(i + 1, n_games)
    return kept


def print_simulated_tables(
    spec: GameSpec,
    tables: Sequence[Sequence[tuple[str, object]]],
    n_games: int,
    seed: Optional[int],
    out: TextIO,
    err: Optional[TextIO],
    options: dict,
) -> None:
    """Each table's P(not losing) by seat over ``n_games`` engine games, with 95% Wilson intervals."""
    if n_games < 1:
        raise UsageError(f"--games {n_games}: a simulation needs at least one game")
    players = len(tables[0]) if tables else 2
    progress = progress_printer(err) if err is not None else None
    more = (f"{n_games} games",) + ((f"seed {seed}",) if seed is not None else ())
    print(
        wrap(
            f"Simulated P(not losing) at a table of {players} ({_setting(spec, players, options, *more)}; "
            "--exact gives exact figures):",
            indent="",
        ),
        file=out,
    )
    seats = _seat_names(spec, players)
    seat_w = max(len("seat"), *(len(s) for s in seats))
    for table in tables:
        labels = [_label(name) for name, _ in table]
        width = max(len("agent"), *(len(n) for n in labels))
        kept = simulate_table(spec, [agent for _, agent in table], n_games, seed, progress, **options)
        print(file=out)
        print(f"{'seat':<{seat_w}}  {'agent':<{width}}  P(not losing) [95% Wilson CI]  (not lost/games)", file=out)
        for seat, name, wins in zip(seats, labels, kept):
            print(f"{seat:<{seat_w}}  {name:<{width}}  {Rate(int(wins), n_games).describe()}", file=out, flush=True)


# --- --explain ---------------------------------------------------------------------------
def explain(spec: GameSpec, rows: Sequence[tuple[str, object]], out: TextIO, top: int = 10, **options) -> None:
    """``evaluate GAME --exact --explain``: where each agent's exact gap to the optimum goes
    (``GameSpec.explain``), and the ``top`` largest losses."""
    if not spec.explain:
        raise UsageError(
            f"--explain: {spec.name} has no gap breakdown "
            f"(games with one: {', '.join(n for n in games.names() if games.get(n).explain)})"
        )
    lines_of = games.load(spec.explain)
    for name, agent in rows:
        try:
            lines = lines_of(name, agent, top, **options)
        except ValueError as e:
            raise UsageError(f"exact evaluation of {name} failed: {str(e).splitlines()[0]}") from None
        print(file=out)
        print("\n".join(lines), file=out, flush=True)
