"""What a run measures as it trains: the exact figures of the network against the game's
bots (its solver, ``GameSpec.exact``), or at a table of more players its exact tables
(``GameSpec.exact_n``) or sampled games; logged to TensorBoard and kept in the checkpoint."""

from functools import lru_cache
from typing import Any

import numpy as np

import agents
import games
from agents.base import pp
from train.presets import Preset
from train.config import RunConfig

# the exact figures logged to TensorBoard (eval/KEY) and kept in a checkpoint's metadata
LOGGED_FIGURES = ("vs_", "gap_", "suboptimal_", "exploitability_", "regret_", "table_")
# figures of every evaluation kept in a checkpoint's metadata (eval_history)
HISTORY_FIGURES = ("gap_pp", "table_")
TABLE_GAMES = 20_480  # sampled games per evaluation of a run at a table of more than two players


def exact_options(preset: Preset) -> dict[str, Any]:
    """The game options the exact evaluation takes (the env's, less the player count)."""
    return {k: v for k, v in preset.env.items() if k != "n_players"}


def eval_opponents(preset: Preset) -> tuple[str, ...]:
    """The bots an agent is measured against: the optimal one first, then the others."""
    others = tuple(b for b in games.get(preset.game).bots_for(2) if b != "optimal")
    return ("optimal", *others)


def plays_live(preset: Preset) -> bool:
    """Whether the preset trains in the game's live env (other seats asked as batch policies)."""
    return preset.n_players in games.get(preset.game).live_players


def table_versus(preset: Preset) -> tuple[str, ...]:
    """The bots at the other seats of the table a run of more than two players is measured
    at: the game's suggested bot (421: ``heuristic``) in every other seat."""
    return (games.get(preset.game).suggested_bot,) * (preset.n_players - 1)


def table_key(preset: Preset) -> str:
    """The figure of that table: ``table_vs_A_B``."""
    return "table_vs_" + "_".join(table_versus(preset))


def table_bots(preset: Preset) -> tuple[str, ...]:
    """The bots an exact evaluation of a run of more than two players puts in every other
    seat, one table each: the measured table's (``table_versus``), then every other bot of
    the game that plays that table (its size and options) but ``random``."""
    bots = games.get(preset.game).bots_for(preset.n_players)
    options = tuple(sorted(exact_options(preset).items()))
    return tuple(
        b
        for b in dict.fromkeys((table_versus(preset)[0], *(b for b in bots if b != "random")))
        if _bot_table(preset.game, b, preset.n_players, options) is not None
    )


@lru_cache(maxsize=32)
def _bot_table(game: str, name: str, n_players: int, options: tuple) -> Any:
    """A bot as tables of ``n_players`` ask it (``exact_n.prepared``), kept for the whole
    process: a 421 bot's table fills as it is asked, once for every evaluation.  None for
    a bot that cannot sit at such a table (exact3 at another pot)."""
    bot = agents.make_agent(game, name, seed=0)
    try:
        if hasattr(bot, "check_table"):
            bot.check_table(n_players, **dict(options))
    except ValueError:
        return None
    return agents.exact_table(game, bot, n_players)


def exact_tables(config: RunConfig, agent, final: bool = True) -> dict[str, Any]:
    """``agent`` measured exactly at its own table (itself in every seat, which by symmetry
    is every seat's regret: ``table_own_regret_pp``) and at the table of each of
    ``table_bots`` in every other seat (``table_vs_A_A`` its P(not losing),
    ``table_regret_vs_A_A_pp`` what the best reply there gets more); before the ``final``
    evaluation, at the measured table only (``table_versus``: each other table is a best
    reply more, a small part of what the agent's own table takes).
    ``ValueError`` when the game's exact module cannot tabulate the agent once for all
    tables (420 with an agent that looks at other hands)."""
    preset, spec = config.preset, games.get(config.preset.game)
    solver, options, n = games.load(spec.exact_n), exact_options(preset), preset.n_players
    mine = agents.exact_table(preset.game, agent, n)
    value, best = solver.seat_figures([mine] * n, 0, **options)
    figures = {"table_own_regret_pp": pp(best - value)}
    for bot in table_bots(preset) if final else table_versus(preset)[:1]:
        other = _bot_table(preset.game, bot, n, tuple(sorted(options.items())))
        value, best = solver.seat_figures([mine, *[other] * (n - 1)], 0, **options)
        key = "_".join([bot] * (n - 1))
        figures[f"table_vs_{key}"], figures[f"table_regret_vs_{key}_pp"] = value, pp(best - value)
    measured = table_key(preset).removeprefix("table_vs_")
    figures["table_regret_pp"] = figures[f"table_regret_vs_{measured}_pp"]
    return {**figures, "optimal": False, "exact_table": True}


def table_figures(config: RunConfig, agent, exact: bool, final: bool = False) -> dict[str, Any]:
    """A run of more than two players, measured at the table of ``table_versus``:
    ``table_vs_A_B`` its P(not losing), sampled over ``TABLE_GAMES`` games (``table_se_pp``
    its standard error), or with ``exact`` the figures of ``exact_tables``.  Where those
    cannot be had, the ``final`` evaluation still tries the measured table alone over the
    full state (420 with three players and an agent that looks at other hands: minutes);
    failing that (four players), the sampled figure stands in, with
    ``table_exact_refused`` saying why."""
    preset, spec = config.preset, games.get(config.preset.game)
    options, versus, key = exact_options(preset), table_versus(preset), table_key(preset)
    refused = None
    if exact:
        try:
            return exact_tables(config, agent, final)
        except ValueError as e:
            refused = str(e)
    if exact and final:
        solver = games.load(spec.exact_n)
        others = [agents.make_agent(preset.game, name, seed=0) for name in versus]
        try:
            value, best = solver.seat_figures([agent, *others], 0, **options)
            return {key: value, "table_regret_pp": pp(best - value), "optimal": False, "exact_table": True}
        except ValueError as e:
            refused = str(e)
    env = games.load(spec.live_env)(
        2048,
        agents.live_opponent(preset.game, versus[0], preset.n_players),
        n_players=preset.n_players,
        seed=0,
        **options,
    )
    policy = agents.batch_policy(preset.game, agent)
    per_slot = -(-TABLE_GAMES // env.num_envs)
    finished, wins = np.zeros(env.num_envs, dtype=np.int64), np.zeros(env.num_envs)
    env.reset()
    while (finished < per_slot).any():
        live = np.flatnonzero(~env.decided)
        actions = np.zeros(env.num_envs, dtype=np.int64)
        actions[live] = policy(env._obs(live), env.action_masks()[live], env.rng)
        _, rewards, dones, _ = env.step(actions)
        counted = dones & (finished < per_slot)  # each slot's first games only: no bias to short games
        wins += counted * (rewards > 0)
        finished += dones
    p, n = wins.sum() / (per_slot * env.num_envs), per_slot * env.num_envs
    figures = {
        key: float(p),
        "table_se_pp": float(100 * np.sqrt(p * (1 - p) / n)),
        "optimal": False,
        "exact_table": False,
    }
    return figures if refused is None else {**figures, "table_exact_refused": refused}


def evaluate(config: RunConfig, agent, final: bool = False, exact_now: bool = False) -> dict[str, Any]:
    """Exact figures of ``agent`` by the game's solver (``GameSpec.exact``); at a table of
    more than two players, ``table_figures`` (exact at the end of the run, and during it
    where ``exact_now``: every ``Preset.exact_every`` steps)."""
    preset = config.preset
    if preset.n_players > 2:
        return table_figures(config, agent, exact=final or exact_now, final=final)
    options = exact_options(preset)
    tables = {name: agents.bot_table(preset.game, name, **options) for name in eval_opponents(preset)}
    return games.load(games.get(preset.game).exact).exact_figures(agent, tables, **options)


def log_figures(logger, figures: dict[str, Any], step: int) -> None:
    """An evaluation's figures to TensorBoard, ``eval/KEY`` (the numbers of ``LOGGED_FIGURES``)."""
    for key, value in figures.items():
        if key.startswith(LOGGED_FIGURES) and isinstance(value, (int, float)):  # not a refusal's words
            logger.record(f"eval/{key}", value)
    logger.record("eval/wall_seconds", figures["wall_seconds"])
    logger.dump(step)


def log_figures_at(logger, figures: dict[str, Any], step: int) -> None:
    """Figures of an evaluation made aside to TensorBoard at their own, earlier ``step``
    (``eval/KEY``), written directly: the logger's pending values stay for their own step."""
    from stable_baselines3.common.logger import TensorBoardOutputFormat

    for output in logger.output_formats:
        if isinstance(output, TensorBoardOutputFormat):
            for key, value in figures.items():
                if key.startswith(LOGGED_FIGURES) and isinstance(value, (int, float)) and not isinstance(value, bool):
                    output.writer.add_scalar(f"eval/{key}", value, step)
            output.writer.flush()


def format_table_figures(config: RunConfig, figures: dict[str, Any]) -> list[str]:
    """The results of a run of more than two players, from ``table_figures``."""
    preset = config.preset
    n = preset.n_players
    how = "exact" if figures.get("exact_table") else f"sampled, {TABLE_GAMES:,} games"
    options = "".join(f", {k} {v}" for k, v in exact_options(preset).items())
    lines = [f"P(not losing), {n} players{options} ({how}; fair share {(n - 1) / n:.4f})"]
    for bot in table_bots(preset):
        key = "_".join([bot] * (n - 1))
        if f"table_vs_{key}" not in figures:
            continue
        regret = figures.get(f"table_regret_vs_{key}_pp", figures.get("table_regret_pp"))  # or the measured table's
        lines.append(
            f"  with {' and '.join([bot] * (n - 1))}: {figures[f'table_vs_{key}']:.6f}"
            + (f"   (regret {regret:.4f} pp)" if regret is not None else f"   (+/- {figures['table_se_pp']:.2f} pp)")
        )
    if "table_own_regret_pp" in figures:
        lines.append(f"  at its own table (itself in every seat): regret {figures['table_own_regret_pp']:.4f} pp")
    if "table_exact_refused" in figures:
        lines.append(f"  no exact figure: {figures['table_exact_refused']}")
    return lines
