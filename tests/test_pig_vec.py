"""The batched two-player Pig env (``VecPigEnv``) against the engine and the solver.

Games played with scripted dice are replayed through ``PigGame`` with
``ScriptedDice``, the agent's seat driven by the same fixed rule and the other
seat by the same table: observations, masks, rewards, dones and terminal
observations must agree at every step.  Sampled win rates must match the
solver's exact ones.
"""

import numpy as np
import pytest

from core.dice import ScriptedDice
from core.engine import IllegalAction
from games.pig import codec
from games.pig import solver as s
from games.pig.bots import Hold20Agent, OptimalPigAgent
from games.pig.game import HOLD, ROLL, PigGame
from games.pig.vec import VecPigEnv, scripted_dice


def random_table(goal, seed):
    """A deterministic opponent: roll or hold drawn at random in every decision state."""
    rng = np.random.default_rng(seed)
    return np.where(s.decision_mask(goal), (rng.random((goal,) * 3) < 0.7).astype(float), 0.0)


def rule(obs, mask):
    """The agent's fixed choice, a function of the observation."""
    if not mask[HOLD]:
        return ROLL
    return HOLD if (int(obs.sum()) * 7 + int(obs[0])) % 4 == 0 else ROLL


def engine_steps(script, seat, goal, table, n_steps):
    """What the env must show in one row: per step (obs, mask, reward, done, terminal obs),
    games played one after another by the engine from the row's dice script."""
    dice = ScriptedDice(script)

    def opponent(game):
        while not game.is_over and game.current_player != seat:
            me = game.current_player
            game.apply(ROLL if table[game.scores[me], game.scores[1 - me], game.turn_total] > 0.5 else HOLD)
        return game

    game, out = opponent(PigGame(dice=dice, goal=goal)), []
    for _ in range(n_steps):
        obs = codec.observe(game, seat)
        if game.is_over:  # decided before the agent's first choice
            out.append((obs, [True, False], game.outcome(seat), True, obs))
        else:
            mask = codec.mask(game)
            game.apply(rule(obs, mask))
            opponent(game)
            over = game.is_over
            out.append(
                (
                    obs,
                    mask.tolist(),
                    game.outcome(seat) if over else 0.0,
                    over,
                    codec.observe(game, seat) if over else None,
                )
            )
        if out[-1][3]:
            game = opponent(PigGame(dice=dice, goal=goal))
    return out


@pytest.mark.parametrize("seat, goal", [(0, 30), (1, 30), (1, 3), (0, 4)])
def test_scripted_games_are_the_engines(seat, goal):
    n, steps = 12, 150
    rng = np.random.default_rng(goal * 10 + seat)
    scripts = [rng.integers(1, 7, size=4000).tolist() for _ in range(n)]
    table = random_table(goal, seat)
    env = VecPigEnv(n, table, agent_seat=seat, dice=scripted_dice(scripts), goal=goal)
    expected = [engine_steps(script, seat, goal, table, steps) for script in scripts]
    obs = env.reset()
    decided = 0
    for t in range(steps):
        masks = env.action_masks()
        actions = np.array([rule(obs[r], masks[r]) for r in range(n)])
        new_obs, rewards, dones, infos = env.step(actions)
        for r in range(n):
            e_obs, e_mask, e_reward, e_done, e_term = expected[r][t]
            assert obs[r].tolist() == e_obs.tolist(), (r, t)
            assert masks[r].tolist() == e_mask, (r, t)
            assert (rewards[r], dones[r]) == (e_reward, e_done), (r, t)
            if e_done:
                assert infos[r]["terminal_observation"].tolist() == e_term.tolist()
            decided += e_mask == [True, False]
        obs = new_obs
    assert sum(e[3] for row in expected for e in row) > 20  # many games were played
    if goal <= 4:
        assert decided > 0  # games decided before the agent's first choice were met


def first_games(env, agent, k):
    """P(the agent wins) over the first ``k`` games of every row (counting only those, so
    short games are not over-represented), and how many games that is."""
    obs = env.reset()
    count, total = np.zeros(env.num_envs, dtype=int), np.zeros(env.num_envs)
    while (count < k).any():
        obs, rewards, dones, _ = env.step(agent.actions(obs, env.action_masks()))
        take = dones & (count < k)
        total[take] += rewards[take]
        count[dones] += 1
    n = env.num_envs * k
    return (total.sum() / n + 1) / 2, n


@pytest.mark.slow
def test_sampled_win_rates_match_evaluate():
    goal = 60
    optimal = s.solve(goal)
    hold20 = s.policy_table(Hold20Agent(), goal=goal)
    exact = s.win_probabilities(hold20, optimal.policy)
    for seat in (0, 1):
        env = VecPigEnv(2048, optimal.policy, agent_seat=seat, seed=seat, goal=goal)
        p, n = first_games(env, Hold20Agent(), 3)
        assert abs(p - exact[seat]) < 4 * np.sqrt(exact[seat] * (1 - exact[seat]) / n)
    # the published figure, sampled: optimal against optimal, moving first, goal 100
    optimal = s.solve()
    p, n = first_games(VecPigEnv(2048, optimal.policy, agent_seat=0, seed=7), OptimalPigAgent(), 3)
    assert abs(p - optimal.first_win) < 4 * np.sqrt(0.25 / n)


def test_a_table_of_probabilities_is_sampled():
    goal = 25
    uniform = np.where(s.decision_mask(goal), 0.5, 0.0)
    agent = OptimalPigAgent(goal)
    exact = s.win_probabilities(s.policy_table(agent, goal=goal), uniform)
    p, n = first_games(VecPigEnv(4096, uniform, agent_seat=1, seed=3, goal=goal), agent, 3)
    assert abs(p - exact[1]) < 4 * np.sqrt(exact[1] * (1 - exact[1]) / n)


def test_a_pool_draws_its_tables_by_weight():
    goal = 25
    hold20, uniform = s.policy_table(Hold20Agent(), goal=goal), np.where(s.decision_mask(goal), 0.5, 0.0)
    agent = OptimalPigAgent(goal)
    mine = s.policy_table(agent, goal=goal)
    exact = {name: s.win_probabilities(mine, table)[0] for name, table in (("hold20", hold20), ("uniform", uniform))}
    env = VecPigEnv(4096, [hold20, uniform], agent_seat=0, seed=11, goal=goal, weights=[1, 3])
    p, n = first_games(env, agent, 3)
    want = (exact["hold20"] + 3 * exact["uniform"]) / 4
    assert abs(p - want) < 4 * np.sqrt(0.25 / n)
    assert set(np.unique(env.opp_index)) == {0, 1}


def test_same_seed_same_games():
    table = s.policy_table(Hold20Agent(), goal=40)

    def run(seed):
        env = VecPigEnv(64, table, seed=seed, goal=40)
        obs, seen = env.reset(), []
        for _ in range(60):
            obs, rewards, dones, _ = env.step(Hold20Agent().actions(obs, env.action_masks()))
            seen.append((obs.copy(), rewards.copy(), dones.copy()))
        return seen

    a, b, c = run(5), run(5), run(6)
    assert all(np.array_equal(x, y) for sa, sb in zip(a, b) for x, y in zip(sa, sb))
    assert not all(np.array_equal(x[0], y[0]) for x, y in zip(a, c))


def test_refusals():
    table = random_table(10, 0)
    with pytest.raises(ValueError, match="shape"):
        VecPigEnv(2, random_table(12, 0), goal=10)
    with pytest.raises(ValueError, match="agent_seat"):
        VecPigEnv(2, table, agent_seat=2, goal=10)
    with pytest.raises(ValueError, match="pool entry 1"):
        VecPigEnv(2, [table, np.full((10, 10, 10), 2.0)], goal=10)
    with pytest.raises(ValueError, match="goal must be"):
        VecPigEnv(2, table, goal=0)
    env = VecPigEnv(2, table, goal=10, seed=0)
    env.reset()
    with pytest.raises(IllegalAction, match="game 1: illegal action 2"):
        env.step(np.array([0, 2]))
    assert env.action_masks().shape == (2, 2)
    assert env.observation_space.contains(env.reset()[0])
