"""Vec421NEnv, batched 421 for two or three players, against the engine (Dice421Env)."""

from __future__ import annotations

import numpy as np
import pytest

from agents import batch_policy, make_agent
from agents.base import DeterministicAgent
from games.dice421 import game as g
from core.dice import ScriptedDice
from games.dice421.env import Dice421Env
from games.dice421 import vec as vec421
from games.dice421.vec import scripted_dice
from games.dice421.vecn import Vec421NEnv, next_in_table


def pick_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    return (rng.random(masks.shape) * masks).argmax(axis=1)


class LastLegal(DeterministicAgent):
    """The highest legal action: a deterministic player unlike the bots (it never stops)."""

    name = "last-legal"

    def act(self, obs, action_mask):
        return int(np.flatnonzero(action_mask)[-1])

    def action_probs(self, obs, masks):
        probs = np.zeros(masks.shape)
        probs[np.arange(len(masks)), masks.shape[1] - 1 - np.argmax(masks[:, ::-1], axis=1)] = 1.0
        return probs


def test_next_in_table():
    table = next_in_table(3)
    assert table[0b111, 0] == 1 and table[0b111, 2] == 0
    assert table[0b101, 0] == 2 and table[0b101, 2] == 0 and table[0b001, 0] == 0 and table[0, 1] == -1


@pytest.mark.parametrize("n_players, pot, n_games, n_steps", [(3, 15, 60, 60), (3, 4, 60, 40), (2, 6, 40, 40)])
def test_plays_the_same_scripted_games_as_the_engine_env(n_players, pot, n_games, n_steps):
    """Row i of the batched env and a Dice421Env fed ``ScriptedDice(dice[i], seats[i])`` play the
    same successive games (the same opponents in the same seats): observations, masks,
    rewards, dones and terminal observations, including games where the agent leaves while
    the others play on, and games decided before the agent's first choice."""
    rng = np.random.default_rng(n_players * 100 + pot)
    dice = [rng.integers(1, 7, size=20_000).tolist() for _ in range(n_games)]
    seats = [rng.integers(n_players, size=400).tolist() for _ in range(n_games)]
    # Each seat clockwise from the agent has its own bot; the batched env's pool draws them
    # per seat, so the engine env gets the same bot for the same seat of each new game.
    bots = [make_agent("421", "greedy421"), LastLegal(), make_agent("421", "cautious")]
    venv = Vec421NEnv(
        n_games,
        [batch_policy("421", b) for b in bots],
        n_players=n_players,
        pot=pot,
        seed=5,
        dice=scripted_dice(dice, seats),
    )
    engine_dice = [ScriptedDice(dice[i], seats[i]) for i in range(n_games)]
    envs = [None] * n_games

    def engine_reset(i):
        me = int(venv.seat[i])
        opponents = [bots[venv.opp_index[i, (me + 1 + k) % n_players]] for k in range(n_players - 1)]
        envs[i] = Dice421Env(opponent=opponents, n_players=n_players, pot=pot, illegal_action="raise")
        return envs[i].reset(seed=i, options={"dice": engine_dice[i], "agent_seat": me})

    obs = venv.reset()
    infos_e = []
    for i in range(n_games):
        obs_e, info = engine_reset(i)
        assert np.array_equal(obs[i], obs_e), (i, obs[i], obs_e)
        infos_e.append(info)
    chooser = np.random.default_rng(1)
    games = decided = left_early = 0
    for _ in range(n_steps):
        masks = venv.action_masks()
        for i in range(n_games):
            assert np.array_equal(masks[i], envs[i].action_masks()), i
            assert venv.decided[i] == infos_e[i]["decided"], i
        actions = pick_legal(chooser, masks)
        was_decided = venv.decided.copy()
        obs, rewards, dones, infos = venv.step(actions)
        for i in range(n_games):
            obs_e, reward_e, terminated, truncated, infos_e[i] = envs[i].step(int(actions[i]))
            assert (rewards[i], dones[i]) == (reward_e, terminated), i
            if terminated:
                assert np.array_equal(infos[i]["terminal_observation"], obs_e), (
                    i,
                    infos[i]["terminal_observation"],
                    obs_e,
                )
                games += 1
                decided += int(was_decided[i])
                left_early += int(envs[i].game.phase != g.OVER)
                obs_e, infos_e[i] = engine_reset(i)
            assert np.array_equal(obs[i], obs_e), (i, obs[i], obs_e)
    assert games >= 100
    assert 0 < decided < games
    if n_players == 3:
        assert left_early > 0  # the agent left a game the other two played on


def test_refuses_bad_arguments_and_policies_in_one_line():
    policy = batch_policy("421", "greedy421")
    with pytest.raises(ValueError, match="n_players: 421 is played by 2 to 3 players"):
        Vec421NEnv(2, policy, n_players=4)
    with pytest.raises(ValueError, match="agent_seat must be a seat 0..2"):
        Vec421NEnv(2, policy, agent_seat=3)
    with pytest.raises(ValueError, match="pot must be"):
        Vec421NEnv(2, policy, pot=0)
    with pytest.raises(ValueError, match=r"^exploring_starts is a share of the games in 0\.\.1, got 2$"):
        Vec421NEnv(2, policy, exploring_starts=2)
    with pytest.raises(ValueError, match="^exploring_starts needs the env's own dice"):
        Vec421NEnv(2, policy, exploring_starts=0.5, dice=scripted_dice([[1, 2, 3]] * 2, [0, 0]))
    with pytest.raises(TypeError, match="pool entry 1: a batch policy is a callable"):
        Vec421NEnv(2, [policy, "heuristic"])
    with pytest.raises(ValueError, match="pool weights must be 2"):
        Vec421NEnv(2, [policy, policy], weights=[1.0])
    with pytest.raises(ValueError, match="pool weights must be 2"):
        Vec421NEnv(2, [policy, policy], weights=[1e308, 1e308])  # a sum that overflows
    venv = Vec421NEnv(4, lambda obs, masks, rng: np.full(len(obs), g.STOP), seed=0)
    venv.reset()
    with pytest.raises(ValueError, match="pool entry 0 played action 0, which is not legal"):
        for _ in range(200):  # a follower is asked before long, and STOP is never legal for it
            venv.step(pick_legal(np.random.default_rng(0), venv.action_masks()))
    venv = Vec421NEnv(4, lambda obs, masks, rng: np.ones(len(obs)), seed=0)
    with pytest.raises(ValueError, match="pool entry 0 answered float64"):
        for _ in range(50):
            venv.reset()
    venv = Vec421NEnv(3, policy, seed=0)
    venv.reset()
    bad = np.zeros(3, dtype=np.int64)
    bad[~venv.decided] = [np.flatnonzero(~m)[0] for m in venv.action_masks()[~venv.decided]]
    with pytest.raises(g.IllegalAction, match=r"^game \d+: action \d+ .* is not legal: the agent"):
        venv.step(bad)


def test_same_seed_same_games_and_pool_draws_follow_the_weights():
    pool = [batch_policy("421", "greedy421"), batch_policy("421", "random")]

    def run(seed):
        venv = Vec421NEnv(64, pool, seed=seed, weights=[0.25, 0.75])
        venv.seed(seed)
        obs = [venv.reset()]
        rng = np.random.default_rng(0)
        rewards = []
        for _ in range(30):
            o, r, d, _ = venv.step(pick_legal(rng, venv.action_masks()))
            obs.append(o)
            rewards.append(r)
        return np.array(obs), np.array(rewards), venv.opp_index.copy()

    a, b, c = run(3), run(3), run(4)
    assert all(np.array_equal(x, y) for x, y in zip(a, b))
    assert not np.array_equal(a[0], c[0])
    share = (a[2] == 1).mean()
    assert 0.6 < share < 0.9


def test_exploring_starts_hand_out_the_pot_evenly_and_a_share_of_zero_changes_nothing():
    """``exploring_starts``: that share of new games starts the discharge from a split of
    the pot where every player holds a token, each of the C(pot - 1, P - 1) splits and
    each leader equally likely (4 standard errors per split); the rest play the charge.
    A share of 0 plays the same games as without it."""
    pot, n = 15, 60_000
    policy = batch_policy("421", "heuristic")
    venv = Vec421NEnv(n, policy, n_players=3, pot=pot, seed=5, exploring_starts=1.0)
    rows = np.arange(n)
    venv._even_starts(rows)
    tok = venv.tok[rows]
    assert (tok >= 1).all() and (tok.sum(1) == pot).all() and (venv.phase == vec421.DISCHARGE).all()
    splits, counts = np.unique(tok, axis=0, return_counts=True)
    assert len(splits) == 91  # C(14, 2)
    p = 1 / 91
    assert np.all(np.abs(counts / n - p) <= 4 * np.sqrt(p * (1 - p) / n))
    leaders = np.bincount(venv.leader[rows], minlength=3) / n
    assert np.all(np.abs(leaders - 1 / 3) <= 4 * np.sqrt(2 / 9 / n))

    half, spread = Vec421NEnv(20_000, policy, n_players=3, pot=pot, seed=6, exploring_starts=0.5), []
    even_starts = half._even_starts
    half._even_starts = lambda rows: (spread.append(len(rows)), even_starts(rows))
    half.reset()
    assert abs(spread[0] / 20_000 - 0.5) <= 4 * np.sqrt(0.25 / 20_000)  # the others played the charge

    def games(**extra):
        venv = Vec421NEnv(32, policy, seed=7, **extra)
        rng = np.random.default_rng(0)
        seen = [venv.reset()]
        for _ in range(40):
            obs, rewards, dones, _ = venv.step(pick_legal(rng, venv.action_masks()))
            seen += [obs, rewards, dones]
        return seen

    assert all(np.array_equal(a, b) for a, b in zip(games(), games(exploring_starts=0.0)))


@pytest.mark.slow
def test_win_rate_matches_the_exact_figure():
    """The agent's reward in many batched games agrees (4 standard errors) with the exact
    value of the table (``exact421n``): ``greedy421`` against two ``LastLegal`` at pot 6."""
    from games.dice421 import exactn as exact421n

    pot = 6
    greedy = make_agent("421", "greedy421")
    last = exact421n.AgentTable(LastLegal())  # one table for both of its seats: asked once
    exact = exact421n.evaluate_table([greedy, last, last], pot=pot).not_losing[0]
    venv = Vec421NEnv(4096, batch_policy("421", LastLegal()), pot=pot, seed=11)
    venv.reset()
    agent = batch_policy("421", greedy)
    wins, games = 0.0, 0
    while games < 40_000:
        live = np.flatnonzero(~venv.decided)
        actions = np.zeros(venv.num_envs, dtype=np.int64)
        actions[live] = agent(venv._obs(live), venv.action_masks()[live], venv.rng)
        _, rewards, dones, _ = venv.step(actions)
        wins += float((rewards[dones] > 0).sum())
        games += int(dones.sum())
    p = wins / games
    assert abs(p - exact) < 4 * np.sqrt(exact * (1 - exact) / games), (p, exact)
    assert abs(exact - 2 / 3) > 0.05  # far from a fair share: the test tells the players apart
