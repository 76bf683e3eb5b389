"""A three-player 421 bot made by the exact solver: the best reply to two heuristics.

With three players there is no single optimal policy, but one seat's exact best
reply to fixed policies at the others can be computed (``games.dice421.exactn``).
The best reply to two ``heuristic`` bots turns out to be close to an equilibrium
of the three-player game: at its own table (itself at every seat) no seat can gain
more than about 0.01 pp by playing otherwise, and against two heuristics it gains
all there is to gain.  Its exact figures are in its metadata.

``python -m games.dice421.reply`` builds it for a pot (pot 15 takes about a minute and
a half; its exact figures at every table of it with two of the heuristic bots take
minutes more) and writes one ``.npz`` file (and its metadata as ``.json`` beside it;
each atomically, an existing one replaced only with ``--force``, never through a
link or to a device), read back without pickle and only from a regular file:

=========  ===================  =====================================================
key        shape, dtype         meaning
=========  ===================  =====================================================
pot        (), int64            the pot it was built for (tokens in play)
lead       (S, 2, 56), uint8    its action leading in state s after roll r with hand h
follow1    (S, 3, 56), uint16   first follower in state s, decision d, after the
                                leader's final hand L: a row of ``rows``
follow2    (S, 3, 56, 56),      second follower, after hands L then F1: a row
           uint16
rows       (R, 56), uint8       a follower's action (1 + keep index) by its own hand
metadata   (B,), uint8          JSON: how it was made and its exact figures
=========  ===================  =====================================================

A state ``s`` is a discharge state of ``exact421n.layout(3, pot)`` seen from the
bot's seat: the tokens of the bot, of the next seat clockwise and of the one after,
and the leader's place (0 = the bot).  Decisions ``d`` are
``FOLLOWER_DECISIONS`` (n, r).  Entries of states where the bot has another role
are 0 and never read.  Nothing in the file is trusted: every key, dtype and shape
is checked, every action the bot can be asked for must be legal for its hand, and
the file is refused in one line (``ReplyFileError``) otherwise.
"""

from __future__ import annotations

import io
import json
import sys
import time
import zipfile
from dataclasses import dataclass
from itertools import product
from pathlib import Path
from typing import Sequence

import numpy as np

from games.dice421 import exactn as exact421n
from agents.base import DeterministicAgent
from games.dice421.bots import _ranks
from games.dice421.solver import DEFAULT_TOL, KEEPS_OF, N_ACTIONS, N_HANDS
from games.dice421 import codec as codec421
from games.dice421 import game as g
from games.dice421.policy import FOLLOWER_LEGAL, LEADER_LEGAL
from core.files import FileRefused, check_output, parse_json, read_regular, write_atomic, write_output

NAME = "exact3"
DEFAULT_PATH = Path(__file__).resolve().parents[2] / "checkpoints" / f"{NAME}.npz"
FORMAT = "dice-arena-421-reply"
FORMAT_VERSION = 1
N_PLAYERS = 3
HEURISTICS = ("heuristic", "greedy421", "cautious")  # the bots it is measured with
MAX_FILE_BYTES = 16 << 20  # a pot-15 file is about 0.3 MB
MAX_UNPACKED_BYTES = 64 << 20  # its arrays unpacked: about 7 MB at pot 15
MAX_ROWS = 1 << 16  # row ids are uint16
MAX_METADATA_BYTES = 1 << 20  # its JSON: about 6 KB
MAX_METADATA_DEPTH = 32  # and 4 levels deep
SHAPES = {  # key -> (dtype, shape with S for the states and R for the rows)
    "pot": (np.int64, ()),
    "lead": (np.uint8, ("S", 2, N_HANDS)),
    "follow1": (np.uint16, ("S", 3, N_HANDS)),
    "follow2": (np.uint16, ("S", 3, N_HANDS, N_HANDS)),
    "rows": (np.uint8, ("R", N_HANDS)),
    "metadata": (np.uint8, ("B",)),
}


class ReplyFileError(ValueError):
    """A reply file that is missing, corrupt, or not a three-player 421 reply."""


@dataclass(frozen=True)
class ReplyTables:
    """The decisions of a three-player reply, as stored (see the module docstring)."""

    pot: int
    lead: np.ndarray
    follow1: np.ndarray
    follow2: np.ndarray
    rows: np.ndarray
    metadata: dict

    def arrays(self) -> dict[str, np.ndarray]:
        meta = np.frombuffer(json.dumps(self.metadata, indent=2).encode(), dtype=np.uint8)
        return {
            "pot": np.array(self.pot, dtype=np.int64),
            "lead": self.lead,
            "follow1": self.follow1,
            "follow2": self.follow2,
            "rows": self.rows,
            "metadata": meta,
        }


# ---------------------------------------------------------------- roles in each state


def roles(pot: int) -> tuple[np.ndarray, np.ndarray]:
    """For each state of ``layout(3, pot)`` seen from seat 0: its place in the round's
    order (0 leads, 1 and 2 follow; -1 when it has left), and the relative places of
    the players before it, in play order (-1 where none), shape (S, 2)."""
    states = exact421n.discharge_states(N_PLAYERS, pot)
    position = np.full(len(states), -1, dtype=np.int64)
    before = np.full((len(states), 2), -1, dtype=np.int64)
    for i, (tokens, leader) in enumerate(states):
        order = exact421n.clockwise(leader, tokens)
        if 0 in order:
            position[i] = order.index(0)
            before[i, : position[i]] = order[: position[i]]
    return position, before


# ---------------------------------------------------------------- building


def pack(reply: exact421n.BestReply, metadata: dict | None = None) -> ReplyTables:
    """A best reply of seat 0 at a three-player table, as stored."""
    if reply.n_players != N_PLAYERS or reply.seat != 0:
        raise ValueError(
            f"a reply file holds seat 0 of a three-player table, got seat {reply.seat} of {reply.n_players}"
        )
    lay = exact421n.layout(N_PLAYERS, reply.pot)
    position, _ = roles(reply.pot)
    lead = np.zeros((lay.S, 2, N_HANDS), dtype=np.uint8)
    follow = {
        1: np.zeros((lay.S, 3, N_HANDS), dtype=np.int64),
        2: np.zeros((lay.S, 3, N_HANDS, N_HANDS), dtype=np.int64),
    }
    blocks = []  # (position, state, follower actions (3, *context, 56))
    for i, acts in sorted(reply.actions.items()):
        if position[i] == 0:
            lead[i] = acts
        else:
            blocks.append((position[i], i, 1 + KEEPS_OF[np.arange(N_HANDS), acts]))
    flat = np.concatenate([a.reshape(-1, N_HANDS) for _, _, a in blocks]) if blocks else np.zeros((0, N_HANDS))
    rows, ids = np.unique(flat, axis=0, return_inverse=True)
    if len(rows) > MAX_ROWS:
        raise ValueError(f"{len(rows)} distinct follower rows do not fit the format's {MAX_ROWS}")
    ids, start = ids.reshape(-1), 0
    for pos, i, a in blocks:
        size = a.size // N_HANDS
        follow[pos][i] = ids[start : start + size].reshape(a.shape[:-1])
        start += size
    return ReplyTables(
        reply.pot,
        lead,
        follow[1].astype(np.uint16),
        follow[2].astype(np.uint16),
        rows.astype(np.uint8),
        dict(metadata or {}),
    )


def build(pot: int = 15, versus: str = "heuristic", tol: float = DEFAULT_TOL):
    """The exact best reply of seat 0 to two ``versus`` bots at a three-player table:
    (its tables, the ``BestReply``, the ``AgentTable`` of ``versus`` it was built against)."""
    from agents import make_agent

    opponent = exact421n.as_table(make_agent("421", versus, seed=0))
    reply = exact421n.best_reply([None, opponent, opponent], 0, pot, tol)
    metadata = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "game": "421",
        "n_players": N_PLAYERS,
        "pot": reply.pot,
        "made_as": f"the exact best reply to two {versus} bots",
        "versus": versus,
        "tol": tol,
        "policy_iterations": reply.iterations,
        "bellman_residual": reply.residual,
        "build_seconds": round(reply.seconds, 1),
    }
    return pack(reply, metadata), reply, opponent


def save(tables: ReplyTables, path: Path, force: bool | None = None) -> None:
    """Write ``path`` (``.npz``) atomically, and its metadata beside it as ``.json`` to read.
    With ``force`` given (``python -m games.dice421.reply``), each is a command's output
    (:func:`core.files.write_output`): an existing file is replaced only with ``force``, a
    link, a device or a folder never (``FileRefused``)."""
    path = Path(path)
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **tables.arrays())
    files = (
        (path, buffer.getvalue(), "reply file"),
        (path.with_suffix(".json"), json.dumps(tables.metadata, indent=2) + "\n", "reply file's metadata"),
    )
    for target, data, what in files:
        if force is None:
            write_atomic(target, data)
        else:
            write_output(target, data, force, what)


# ---------------------------------------------------------------- loading, with checks


def load(path: Path) -> ReplyTables:
    """The tables of a reply file, checked (``ReplyFileError``: one line, naming the file)."""
    path = Path(path)

    def refuse(why: str):
        raise ReplyFileError(f"{path}: {why}")

    try:
        data = read_regular(path, MAX_FILE_BYTES, "reply file")  # a regular file only, and a small one
    except FileRefused as e:
        raise ReplyFileError(str(e)) from None
    try:
        arrays = _read_arrays(data, refuse)
    except ReplyFileError:
        raise
    except Exception as e:  # a corrupt or hostile archive: bad deflate data, encryption, odd headers, ...
        refuse(f"not a readable reply file ({type(e).__name__}: {' '.join(str(e).split())[:100]})")
    pot = int(arrays["pot"])
    if not 1 <= pot <= g.MAX_POT:
        refuse(f"pot must be one number in 1..{g.MAX_POT}, got {pot}")
    if len(arrays["metadata"]) > MAX_METADATA_BYTES:
        refuse(f"metadata holds {len(arrays['metadata'])} bytes, more than {MAX_METADATA_BYTES}")
    try:
        metadata = parse_json(arrays["metadata"].tobytes(), "metadata", MAX_METADATA_DEPTH)
    except FileRefused as e:
        refuse(str(e))
    if not isinstance(metadata, dict) or metadata.get("format") != FORMAT:
        refuse(f"metadata does not say format {FORMAT!r}")
    if metadata.get("pot") != pot or metadata.get("n_players") != N_PLAYERS:
        refuse(
            f"metadata says pot {metadata.get('pot')!r} for {metadata.get('n_players')!r} players; "
            f"the tables are for pot {pot}, {N_PLAYERS} players"
        )
    sizes = {"S": len(exact421n.discharge_states(N_PLAYERS, pot)), "R": len(arrays["rows"])}
    for key, (_, shape) in SHAPES.items():
        want_shape = tuple(sizes.get(d, d) for d in shape)
        if key != "metadata" and arrays[key].shape != want_shape:
            refuse(f"{key} must have shape {want_shape} at pot {pot}, got {arrays[key].shape}")
    rows, position = arrays["rows"], roles(pot)[0]
    if not 0 <= len(rows) <= MAX_ROWS:
        refuse(f"rows must hold at most {MAX_ROWS} rows, got {len(rows)}")
    bad = ~FOLLOWER_LEGAL[np.arange(N_HANDS), np.minimum(rows, N_ACTIONS - 1)] | (rows >= N_ACTIONS)
    if bad.any():
        r, h = np.argwhere(bad)[0]
        refuse(f"rows[{r}] plays {rows[r, h]} with {g.HANDS[h]}, not a follower's legal action there")
    lead = arrays["lead"][position == 0]
    bad = (lead >= N_ACTIONS) | ~LEADER_LEGAL[np.arange(N_HANDS), np.minimum(lead, N_ACTIONS - 1)]
    if bad.any():
        s, r, h = np.argwhere(bad)[0]
        refuse(f"lead plays {lead[s, r, h]} with {g.HANDS[h]}, not a leader's legal action there")
    for key, pos in (("follow1", 1), ("follow2", 2)):
        used = arrays[key][position == pos]
        if used.size and used.max() >= len(rows):
            refuse(f"{key} names row {used.max()}; there are {len(rows)}")
    return ReplyTables(pot, arrays["lead"], arrays["follow1"], arrays["follow2"], rows, metadata)


def _read_arrays(data: bytes, refuse) -> dict[str, np.ndarray]:
    """The arrays of a reply file's bytes: the archive's members, then each array's header
    (dtype and number of dimensions as ``SHAPES`` says, and its size) checked before any
    of its data is read; never a pickle."""
    with zipfile.ZipFile(io.BytesIO(data)) as z:
        members = {i.filename: i.file_size for i in z.infolist()}
        if sum(members.values()) > MAX_UNPACKED_BYTES:
            refuse(f"its arrays unpack to {sum(members.values())} bytes, more than {MAX_UNPACKED_BYTES}")
        want = {f"{k}.npy" for k in SHAPES}
        if set(members) != want:
            extra, missing = sorted(set(members) - want), sorted(want - set(members))
            refuse(
                f"its arrays are not a reply's (missing {', '.join(missing) or 'none'}; "
                f"unexpected {', '.join(extra)[:80] or 'none'})"
            )
        arrays = {}
        for key, (dtype, shape) in SHAPES.items():
            with z.open(f"{key}.npy") as f:
                version = np.lib.format.read_magic(f)
                read_header = {
                    (1, 0): np.lib.format.read_array_header_1_0,
                    (2, 0): np.lib.format.read_array_header_2_0,
                }.get(version)
                if read_header is None:
                    refuse(f"{key} is in npy format {version}, not 1.0 or 2.0")
                got_shape, _, got_dtype = read_header(f)
                if got_dtype != np.dtype(dtype):
                    refuse(f"{key} is {got_dtype}, not {np.dtype(dtype)}")
                if len(got_shape) != len(shape):
                    refuse(f"{key} must have {len(shape)} dimensions, got shape {got_shape}")
                if int(np.prod(got_shape, dtype=object)) * got_dtype.itemsize > members[f"{key}.npy"]:
                    refuse(f"{key} declares shape {got_shape}, more than its {members[f'{key}.npy']} bytes")
            with z.open(f"{key}.npy") as f:  # its size is known now: read it from the start
                arrays[key] = np.lib.format.read_array(f, allow_pickle=False)
    return arrays


# ---------------------------------------------------------------- the bot


class ReplyAgent421(DeterministicAgent):
    """Plays a three-player reply file's decisions (by default the shipped ``exact3``)."""

    def __init__(self, path: Path | str | None = None, name: str | None = None):
        path = DEFAULT_PATH if path is None else Path(path)
        if path == DEFAULT_PATH and not path.exists():
            raise ReplyFileError(
                f"the {NAME} 421 bot is missing: no {path} (build it with: python -m games.dice421.reply)"
            )
        self.tables = load(path)
        self.path = path
        self.name = name or (NAME if path == DEFAULT_PATH else str(path))
        self.metadata = self.tables.metadata
        pot = self.tables.pot
        self.position, self.before = roles(pot)
        # state_of[t0, t1, t2, leader place] -> state index (-1: not a discharge state)
        self.state_of = np.full((pot + 1,) * N_PLAYERS + (N_PLAYERS,), -1, dtype=np.int64)
        for i, (tokens, leader) in enumerate(exact421n.discharge_states(N_PLAYERS, pot)):
            self.state_of[tokens + (leader,)] = i

    def check_table(self, n_players: int, pot: int | None = None, **_) -> None:
        """Raise ``ValueError`` (one line) unless this bot can play such a table."""
        if n_players != N_PLAYERS:
            raise ValueError(f"the {self.name} 421 bot is made for three players only, not {n_players}")
        if pot is not None and int(pot) != self.tables.pot:
            raise ValueError(
                f"the {self.name} 421 bot was built for pot {self.tables.pot}, not {pot} "
                f"(build one with: python -m games.dice421.reply --pot {pot} --out FILE.npz)"
            )

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        action = int(self.actions(np.asarray(obs).reshape(1, -1))[0])
        if action_mask is not None and not np.asarray(action_mask)[action]:
            raise ValueError(
                f"{self.name} chose {g.describe_action(action)}, which the mask forbids: {codec421.decode(obs)}"
            )
        return action

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        actions = self.actions(np.asarray(obs).reshape(-1, codec421.OBS_SIZE))
        probs = np.zeros((len(actions), N_ACTIONS))
        probs[np.arange(len(actions)), actions] = 1.0
        return probs

    def actions(self, obs: np.ndarray, masks: np.ndarray | None = None) -> np.ndarray:
        """The action at each of a batch of three-player discharge decisions (``masks``, as
        ``agents.base.batch_actions`` passes them, are not needed: the tables hold legal moves)."""
        if obs.ndim != 2 or obs.shape[1] != codec421.OBS_SIZE:
            raise ValueError(
                f"{self.name}: observations of {codec421.OBS_SIZE} numbers expected, got shape {obs.shape}"
            )
        if obs.dtype.kind != "i":
            whole = obs.dtype.kind in "uf" and np.all(np.isfinite(obs)) and np.all(obs == np.round(obs))
            if not whole or np.any(np.abs(obs) > 1 << 30):
                raise ValueError(f"{self.name}: observations are whole numbers, got {obs.dtype} values")
            obs = obs.astype(np.int64)
        if len(obs) == 0:
            return np.zeros(0, dtype=np.int64)
        players = obs[:, codec421.N_PLAYERS]
        if np.any(players != N_PLAYERS):
            self.check_table(int(players[players != N_PLAYERS][0]))
        slot = [codec421.OTHERS_START + k * codec421.OTHER_SLOT_SIZE for k in range(N_PLAYERS - 1)]
        tokens = np.stack([obs[:, codec421.TOKENS]] + [obs[:, s + codec421.O_TOKENS] for s in slot], 1)
        hand = _ranks(obs[:, codec421.HAND])
        used, allowed = obs[:, codec421.ROLLS_USED], obs[:, codec421.ROLLS_ALLOWED]
        decision = (
            (obs[:, codec421.PHASE] == codec421.PHASE_CODE[g.DISCHARGE])
            & (hand >= 0)
            & (used >= 1)
            & (used < allowed)
            & (allowed <= g.MAX_ROLLS)
            & np.all(tokens >= 0, 1)
        )
        self._no_decision(obs, decision)
        pots = tokens.sum(1)
        if np.any(pots != self.tables.pot):
            self.check_table(N_PLAYERS, int(pots[pots != self.tables.pot][0]))
        leader = np.where(
            obs[:, codec421.IS_LEADER] == 1, 0, np.where(obs[:, slot[0] + codec421.O_IS_LEADER] == 1, 1, 2)
        )
        state = self.state_of[tuple(tokens.T) + (leader,)]
        position = np.where(state >= 0, self.position[state], -1)
        leads = obs[:, codec421.IS_LEADER] == 1
        self._no_decision(obs, (state >= 0) & (position >= 0) & ((position == 0) == leads) & (leads | (allowed >= 2)))
        actions = np.zeros(len(obs), dtype=np.int64)
        lead = position == 0
        actions[lead] = self.tables.lead[state[lead], used[lead] - 1, hand[lead]]
        follow = ~lead
        if follow.any():
            s, pos = state[follow], position[follow]
            d = np.where(allowed[follow] == 2, 0, np.where(used[follow] == 1, 1, 2))
            played = [self._played(obs[follow], self.before[s, j]) for j in range(2)]
            row = np.where(
                pos == 1,
                self.tables.follow1[s, d, np.maximum(played[0], 0)],
                self.tables.follow2[s, d, np.maximum(played[0], 0), np.maximum(played[1], 0)],
            )
            actions[follow] = self.tables.rows[row, hand[follow]]
        return actions

    def _no_decision(self, obs: np.ndarray, ok: np.ndarray) -> None:
        if not ok.all():
            row = int(np.flatnonzero(~ok)[0])
            raise ValueError(f"{self.name} was asked to act where it has no decision: {codec421.decode(obs[row])}")

    @staticmethod
    def _played(obs: np.ndarray, place: np.ndarray) -> np.ndarray:
        """The rank of the hand the player at relative ``place`` played (-1 where place is -1)."""
        base = codec421.OTHERS_START + (np.maximum(place, 1) - 1) * codec421.OTHER_SLOT_SIZE + 1
        dice = obs[np.arange(len(obs))[:, None], base[:, None] + np.arange(3)]
        return np.where(place > 0, _ranks(dice), -1)


# ---------------------------------------------------------------- exact figures


def table_figures(
    reply, names: Sequence[str] = HEURISTICS, pot: int | None = None, tables: dict | None = None, log=None
) -> dict:
    """The reply's exact figures at its own table and at every table of it with two of
    ``names`` (seat orders included): each seat's P(not losing), best reply and regret."""
    from agents import make_agent

    pot = pot or reply.tables.pot
    tables = dict(tables or {})
    for name in names:
        if name not in tables:
            tables[name] = exact421n.as_table(make_agent("421", name, seed=0))
    me = exact421n.as_table(reply)
    out = {}
    seatings = [(NAME, NAME)] + [(a, b) for a, b in product(names, repeat=2)]
    for a, b in seatings:
        at = [me, me if a == NAME else tables[a], me if b == NAME else tables[b]]
        seats, seconds = exact421n.table_figures(at, [NAME, a, b], pot)
        key = ",".join((NAME, a, b))
        out[key] = [
            {"name": f.name, "not_losing": f.not_losing, "best_reply": f.best_reply, "regret_pp": f.regret_pp}
            for f in seats
        ]
        if log:
            log(f"table {', '.join((NAME, a, b))} ({seconds:.0f} s): P(not losing), regret")
            for f in seats:
                log(f"  {f.name:<10} {f.not_losing:.6f}  {f.regret_pp:7.4f} pp")
    return out


def main(argv: Sequence[str] | None = None) -> int:
    """Build a three-player 421 reply file: ``python -m games.dice421.reply [--pot 15]
    [--versus heuristic] [--out checkpoints/exact3.npz] [--force] [--no-figures]``."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m games.dice421.reply",
        description="Build the exact best reply to two bots at a three-player 421 table, as a bot "
        "(the shipped exact3 is: python -m games.dice421.reply --force). It writes FILE.npz and "
        "FILE.json, each atomically; an existing file is replaced only with --force.",
    )
    parser.add_argument("--pot", type=int, default=15, help="tokens in the pot (default: 15)")
    parser.add_argument("--versus", default="heuristic", help="the bot it replies to (default: heuristic)")
    parser.add_argument(
        "--out",
        default=str(DEFAULT_PATH),
        help="the file to write, FILE.npz, and FILE.json beside it (default: the shipped exact3, "
        "which exists: give --force to rebuild it)",
    )
    parser.add_argument("--force", action="store_true", help="replace FILE.npz and FILE.json if they exist")
    parser.add_argument(
        "--no-figures",
        action="store_true",
        help="skip its exact figures at the tables with the heuristics (minutes at pot 15)",
    )
    args = parser.parse_args(argv)
    from agents import make_agent
    from games.dice421 import SPEC

    def error(message: str) -> int:
        print(f"python -m games.dice421.reply: error: {message}", file=sys.stderr)
        return 2

    try:
        g.check_options(pot=args.pot)
        if args.versus in SPEC.bots and not SPEC.plays(args.versus, N_PLAYERS):
            return error(f"--versus: {SPEC.why_not(args.versus, N_PLAYERS)}")
        versus = make_agent("421", args.versus, seed=0)
        getattr(versus, "check_table", lambda *a, **k: None)(N_PLAYERS, pot=args.pot)
    except ValueError as e:
        return error(str(e))
    out = Path(args.out)
    if out.suffix != ".npz":
        return error(f"--out {args.out[:60]}: a reply file ends in .npz")
    try:  # both files can be written (and replaced only with --force) before the minutes of work
        check_output(out, args.force, "reply file")
        check_output(out.with_suffix(".json"), args.force, "reply file's metadata")
    except FileRefused as e:
        return error(f"--out {e}")
    start = time.perf_counter()
    tables, reply, opponent = build(args.pot, args.versus)
    print(
        f"the best reply to two {args.versus} bots, pot {args.pot}: P(not losing) {reply.value:.6f}\n"
        f"  ({reply.iterations} policy iterations, {reply.seconds:.0f} s)",
        flush=True,
    )
    if not args.no_figures:
        building = out.with_name(f".{out.stem}.building.npz")  # a readable agent for the figures
        try:
            try:
                save(tables, building)
            except OSError as e:
                return error(f"--out {out}: cannot write in {out.parent} ({e.strerror or e})")
            agent = ReplyAgent421(building, NAME)
            names = [n for n in HEURISTICS if n != args.versus]
            known = {args.versus: opponent} if args.versus in HEURISTICS else {}
            tables.metadata["exact"] = table_figures(
                agent, [*known, *names], args.pot, known, log=lambda line: print(line, flush=True)
            )
        finally:
            for suffix in (".npz", ".json"):
                building.with_suffix(suffix).unlink(missing_ok=True)
    tables.metadata["seconds"] = round(time.perf_counter() - start, 1)
    try:
        save(tables, out, args.force)
    except FileRefused as e:
        return error(f"--out {e}")
    print(
        f"wrote {out} ({out.stat().st_size:,} bytes)\n  and {out.with_suffix('.json')}, "
        f"in {time.perf_counter() - start:.0f} s"
    )
    return 0


if __name__ == "__main__":
    from core.cli import run_interruptible

    run_interruptible(main)
