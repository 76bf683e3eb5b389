"""Dice420-v0 (Gymnasium) with two players, and the batched Vec420Env, against the engine.

More players: ``tests/test_env_multi420.py``.
"""

import ast
import pathlib

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import envs
import games  # noqa: F401  (registers the Gymnasium ids)
from agents import make_agent, make_env
from games.dice420 import solver as solver420
from agents.base import RandomAgent
from games.dice420.bots import GreedyAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import ScriptedDice
from games.dice420.env import Dice420Env
from core.engine import IllegalAction
from games.dice420.vec import Vec420Env, scripted_dice

ENVS_DIR = pathlib.Path(envs.__file__).resolve().parent


def test_registered_and_the_defaults_pass_gymnasium_check_env():
    env = gym.make("Dice420-v0")
    assert env.spec.id == "Dice420-v0"
    gym_check_env(env.unwrapped)


def test_passes_sb3_check_env():
    sb3_check_env(Dice420Env(), warn=False)


def test_mask_in_info_and_action_masks_agree_and_match_the_hand():
    env = Dice420Env(opponent=RandomAgent(), agent_seat="red")
    obs, info = env.reset(seed=3)
    for _ in range(200):
        mask = env.action_masks()
        assert np.array_equal(mask, info["action_mask"])
        assert env.observation_space.contains(obs)
        if info["decided"]:
            assert mask.sum() == 1 and mask[g.REROLL_ALL]
        else:
            own, opp = codec420.decode(obs)
            assert own == env.game.hands[g.RED] and opp == env.game.hands[g.BLUE]
            assert np.array_equal(mask, codec420.action_mask(own)) and mask.sum() > 1
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        if term:
            assert reward in (1.0, -1.0)
            obs, info = env.reset()


def test_illegal_action_falls_back_by_default_and_raises_when_asked():
    env = Dice420Env(agent_seat="red", illegal_action="raise")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(IllegalAction, match="illegal move"):
        env.step(illegal)
    with pytest.raises(IllegalAction):
        env.step(99)
    env = Dice420Env(agent_seat="red")
    env.reset(seed=0)
    turns = len(env.game.history)
    *_, info = env.step(illegal)
    assert info["illegal_action"] is True
    assert env.game.history[turns].seat == g.RED and env.game.history[turns].kept == ()  # rerolled all


@pytest.mark.parametrize("illegal_action", ["raise", "reroll_all"])
@pytest.mark.parametrize("bad", [1.0, np.float64(0.0), True, np.bool_(False), "3", None, np.array([0]), np.array(0.0)])
def test_ill_typed_actions_raise_in_both_modes(illegal_action, bad):
    env = Dice420Env(agent_seat="red", illegal_action=illegal_action)
    env.reset(seed=0)
    history = list(env.game.events)
    with pytest.raises(IllegalAction, match="integer"):
        env.step(bad)
    assert env.game.events == history  # nothing was played


@pytest.mark.parametrize("good", [0, np.int64(0), np.int32(0), np.uint8(0), np.array(0)])
def test_integer_actions_of_every_kind_are_accepted(good):
    env = Dice420Env(agent_seat="red", illegal_action="raise")
    env.reset(seed=0)
    _, _, _, _, info = env.step(good)
    assert "illegal_action" not in info


def test_step_after_the_end_raises_until_reset():
    env = Dice420Env()
    _, info = env.reset(seed=1)
    term = False
    while not term:
        _, _, term, _, info = env.step(int(np.flatnonzero(info["action_mask"])[0]))
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(0)
    env.reset()
    env.step(int(np.flatnonzero(env.action_masks())[0]))  # a new episode steps again
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        Dice420Env().step(0)


def play_episode(env, seed, chooser_seed=0, options=None):
    rng = np.random.default_rng(chooser_seed)
    obs, info = env.reset(seed=seed, options=options)
    trace = [obs.tolist()]
    while True:
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        trace.append(obs.tolist())
        if term:
            return trace, reward


@pytest.mark.parametrize("opponent", [None, "random-agent", "greedy"])
def test_same_seed_same_game(opponent):
    def build():
        if opponent == "random-agent":
            return Dice420Env(opponent=make_agent("420", "random"))
        if opponent == "greedy":
            return make_env("Dice420-v0", opponent="greedy").unwrapped
        return Dice420Env()

    env1, env2 = build(), build()
    for seed in range(20):
        assert play_episode(env1, seed) == play_episode(env2, seed)
    assert play_episode(env1, 1) != play_episode(env1, 2)


def test_random_opponents_follow_the_env_seed_not_their_own():
    # Two random agents built with different seeds play the same game from the same
    # env seed: the env reseeds them at reset.  Red's dice are the same either way
    # (the env draws them), so only the opponent's choices could differ.
    env1 = Dice420Env(opponent=RandomAgent(seed=1), agent_seat="red")
    env2 = Dice420Env(opponent=RandomAgent(seed=2), agent_seat="red")
    for seed in range(30):
        play_episode(env1, seed)
        play_episode(env2, seed)
        assert env1.game.events == env2.game.events


def test_the_default_random_opponent_draws_from_the_env_generator():
    # Scripted dice, so only the opponent's choices can make the two games differ.
    script = np.random.default_rng(99).integers(1, 7, size=3000).tolist()
    games_by_seed = {}
    for seed in (0, 0, 1, 2, 3):
        env = Dice420Env(agent_seat="red")
        play_episode(env, seed, options={"dice": ScriptedDice(script)})
        keeps = [e["keep"] for e in env.game.events if e["type"] == "roll" and e["seat"] == g.BLUE]
        games_by_seed.setdefault(seed, []).append(keeps)
    assert games_by_seed[0][0] == games_by_seed[0][1]
    assert len({tuple(v[0]) for v in games_by_seed.values()}) > 1


def test_rewards_follow_the_winner_and_the_opponent_is_played_inside_step():
    env = Dice420Env(opponent=GreedyAgent(), agent_seat="blue")
    wins = 0
    for seed in range(200):
        _, reward = play_episode(env, seed)
        assert reward == (1.0 if env.game.winner == g.BLUE else -1.0)
        wins += reward > 0
    assert 0 < wins < 200


@pytest.mark.parametrize(
    "seat, name", [("red", "red"), ("blue", "blue"), (0, "red"), (1, "blue"), (np.int64(1), "blue")]
)
def test_agent_seat_by_name_or_number(seat, name):
    env = Dice420Env(agent_seat=seat)
    _, info = env.reset(seed=4)
    assert info["seat"] == name and env.seat == g.SEAT_NAMES.index(name.title())
    assert set(info) == {"action_mask", "seat", "hands", "decided", "winner"}


def test_game_decided_before_the_agent_moves_still_counts():
    # Red's first roll is 6-5-5-4 = 20: the agent (Blue) has lost before its first choice.
    for reward_mode in ("outcome", "rank"):
        env = Dice420Env(agent_seat="blue", reward=reward_mode)
        obs, info = env.reset(options={"dice": ScriptedDice([6, 5, 5, 4])})
        assert info["decided"] and info["winner"] == "red"
        assert obs.tolist() == [1, 1, 1, 1, 4, 5, 5, 6]  # Blue has not rolled: 1 1 1 1
        assert env.action_masks().tolist() == [True] + [False] * 13
        _, reward, term, _, _ = env.step(0)
        assert term and reward == -1.0


def test_the_agent_winning_on_a_step_ends_the_episode_with_plus_one():
    # Red (agent) 6-6-5-1, Blue 3-3-2-1 (nothing to keep: it rerolls all four), Red keeps
    # 6-6-5 and rolls a 3: 20.
    env = Dice420Env(agent_seat="red")
    obs, info = env.reset(options={"dice": ScriptedDice([6, 6, 5, 1, 3, 3, 2, 1, 3])})
    assert not info["decided"] and obs.tolist() == [1, 5, 6, 6, 1, 2, 3, 3]
    obs, reward, term, _, info = env.step(g.KEEP_INDEX[(6, 6, 5)])
    assert (reward, term, info["winner"], info["decided"]) == (1.0, True, "red", True)
    assert info["hands"] == ((6, 6, 5, 3), (3, 3, 2, 1))


def test_render_ansi_narrates_and_shows_both_hands():
    env = Dice420Env(agent_seat="red", render_mode="ansi")
    env.reset(options={"dice": ScriptedDice([1, 5, 6, 6, 2, 2, 3, 3])})
    text = env.render()
    assert "6-6-5-1 (18)" in text and "3-3-2-2 (10)" in text
    assert "Red (you)" in text and "Blue (bot)" in text
    assert env.render().splitlines() == text.splitlines()[-1:]  # the turns are narrated once
    assert all(len(line) <= 80 for line in text.splitlines()[-1:])


def test_render_human_prints(capsys):
    env = Dice420Env(agent_seat="blue", render_mode="human")
    env.reset(seed=3)
    assert "Blue (you)" in capsys.readouterr().out


def test_bad_constructor_arguments_are_explained():
    with pytest.raises(ValueError, match="agent_seat"):
        Dice420Env(agent_seat="green")
    with pytest.raises(ValueError, match="agent_seat"):
        Dice420Env(agent_seat=2)
    with pytest.raises(ValueError, match="n_players"):
        Dice420Env(n_players=9)
    with pytest.raises(ValueError, match="reward"):
        Dice420Env(reward="score")
    with pytest.raises(ValueError, match="illegal_action"):
        Dice420Env(illegal_action="ignore")
    with pytest.raises(TypeError, match="act"):
        Dice420Env(opponent=object())


@pytest.mark.parametrize("opponent", ["greedy", ["greedy"], "nobody"])
def test_a_named_opponent_is_refused_with_the_way_to_get_an_agent(opponent):
    with pytest.raises(TypeError) as err:
        Dice420Env(opponent=opponent)
    message = str(err.value)
    assert "agents.make_agent('420'" in message and "agents.make_env('Dice420-v0'" in message
    # ... and the way it names works.
    env = make_env("Dice420-v0", opponent="greedy")
    env.reset(seed=0)
    assert isinstance(env.unwrapped.opponents[0], GreedyAgent)


# --- layers ----------------------------------------------------------------------


def agents_imports(source: str) -> list[str]:
    """Every place ``path`` imports the ``agents`` package: import statements and
    ``importlib.import_module("agents...")`` / ``__import__("agents...")`` calls."""

    def is_agents(name) -> bool:
        return isinstance(name, str) and (name == "agents" or name.startswith("agents."))

    found = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name}" for a in node.names if is_agents(a.name)]
        elif isinstance(node, ast.ImportFrom) and node.level == 0 and is_agents(node.module):
            found.append(f"from {node.module} import ...")
        elif isinstance(node, ast.Call) and node.args:
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            arg = node.args[0]
            if (
                name in ("import_module", "__import__")
                and isinstance(arg, ast.Constant)
                and is_agents(str(arg.value).split(":")[0])
            ):
                found.append(f"{name}({arg.value!r})")
    return found


def test_the_agents_import_finder_finds_every_form():
    source = (
        "import agents\nimport agents.base as b\nfrom agents.policy import X\nimport importlib\n"
        "def f():\n    importlib.import_module('agents.features')\n    return __import__('agents')\n"
        "from envs import agentsx\nimport_module('agentsy')\nfrom . import agents\nimport agentsz\n"
    )
    assert agents_imports(source) == [
        "import agents",
        "import agents.base",
        "from agents.policy import ...",
        "import_module('agents.features')",
        "__import__('agents')",
    ]


def test_no_module_under_envs_imports_agents():
    files = sorted(ENVS_DIR.rglob("*.py"))
    assert ENVS_DIR / "batched.py" in files and ENVS_DIR / "aec" / "base.py" in files
    offenders = [
        f"{path.relative_to(ENVS_DIR.parent)}: {hit}" for path in files for hit in agents_imports(path.read_text())
    ]
    assert offenders == []


# --- the batched env ---------------------------------------------------------


class TableAgent:
    """Plays a two-player keep table ``[own hand, other hand]``."""

    def __init__(self, table):
        self.table = table

    def act(self, obs, action_mask):
        own, other = codec420.decode(obs)
        return int(self.table[g.HAND_INDEX[own], g.HAND_INDEX[other]])


class ListAgent:
    def __init__(self, keeps):
        self.keeps = iter(keeps)

    def act(self, obs, action_mask):
        return next(self.keeps)


def engine_game(script, agent_red, agent_keeps, opponent_table):
    """Play one game through the engine with scripted dice; the agent plays ``agent_keeps`` in order."""
    from core.engine import play_out

    game = g.Game420(dice=ScriptedDice(script))
    agent_seat = g.RED if agent_red else g.BLUE
    agents = [None, None]
    agents[agent_seat], agents[1 - agent_seat] = ListAgent(agent_keeps), TableAgent(opponent_table)
    play_out(game, agents, codec420)
    return 1.0 if game.winner == agent_seat else -1.0


def test_batched_env_plays_the_same_scripted_games_as_the_engine():
    rng = np.random.default_rng(5)
    opponent = solver420.solve().policy
    n = 64
    scripts = [rng.integers(1, 7, size=600).tolist() for _ in range(n)]
    for seat in ("red", "blue"):
        venv = Vec420Env(n, opponent, agent_seat=seat, dice=scripted_dice(scripts))
        venv.reset()
        chosen = [[] for _ in range(n)]
        results = [None] * n
        chooser = np.random.default_rng(1)
        for _ in range(200):
            masks = get_action_masks(venv)
            actions = np.array([chooser.choice(np.flatnonzero(m)) for m in masks])
            decided = venv.pending != 0
            _, rewards, dones, _ = venv.step(actions)
            for i in range(n):
                if results[i] is None:
                    if not decided[i]:
                        chosen[i].append(int(actions[i]))
                    if dones[i]:
                        results[i] = float(rewards[i])
            if all(r is not None for r in results):
                break
        for i in range(n):
            assert results[i] == engine_game(scripts[i], seat == "red", chosen[i], opponent), (seat, i)


def test_batched_env_outcome_frequencies_match_the_exact_values():
    """Agent greedy vs the optimal bot: exact win probability vs 40,000 batched games."""
    greedy = GreedyAgent()
    opponent = solver420.solve().policy
    exact_red, exact_blue = solver420.win_probabilities(
        solver420.policy_table(greedy), solver420.solve().policy_table()
    )
    greedy_keeps = solver420.policy_table(greedy).argmax(axis=2)
    venv = Vec420Env(2000, opponent, agent_seat="random", seed=11)
    obs = venv.reset()
    wins = {0: [0, 0], 1: [0, 0]}
    while sum(sum(v) for v in wins.values()) < 40_000:
        own = np.array([g.HAND_INDEX[g.canonical(r)] for r in obs[:, :4]])
        opp = np.array([g.HAND_INDEX[g.canonical(r)] for r in obs[:, 4:]])
        actions = np.where(venv.pending != 0, 0, greedy_keeps[own, opp])
        seats = venv.seat.copy()
        obs, rewards, dones, _ = venv.step(actions)
        for i in np.flatnonzero(dones):
            wins[int(seats[i])][0 if rewards[i] > 0 else 1] += 1
    for seat, exact in ((0, exact_red), (1, exact_blue)):
        w, l = wins[seat]
        n = w + l
        assert abs(w / n - exact) < 4 * (exact * (1 - exact) / n) ** 0.5, (seat, w / n, exact)


def test_batched_env_seeding_and_masks():
    opponent = solver420.solve().policy
    a, b = Vec420Env(16, opponent, seed=3), Vec420Env(16, opponent, seed=3)
    oa, ob = a.reset(), b.reset()
    for _ in range(50):
        assert np.array_equal(oa, ob)
        masks = get_action_masks(a)
        assert masks.shape == (16, g.N_ACTIONS) and masks.any(axis=1).all()
        actions = masks.argmax(axis=1)
        oa, ra, *_ = a.step(actions)
        ob, rb, *_ = b.step(actions)
        assert np.array_equal(ra, rb)


def test_batched_env_rejects_illegal_actions():
    venv = Vec420Env(4, solver420.solve().policy, seed=0)
    venv.reset()
    masks = venv.action_masks()
    actions = masks.argmax(axis=1)
    live = np.flatnonzero(venv.pending == 0)
    actions[live[0]] = int(np.flatnonzero(~masks[live[0]])[0])
    with pytest.raises(IllegalAction):
        venv.step(actions)


def test_random_agent_opponent_table_is_a_valid_stochastic_opponent():
    """RandomAgent's table is uniform over the legal keeps of every decision (and nothing
    else); the batched env that plays it as the opponent ends its games with rewards +1 and
    -1 only, at the frequencies the solver gives the optimal policy against that table, in
    each seat (figures far from the ones against the optimal opponent, so a table the env
    ignored would show)."""
    table = solver420.policy_table(RandomAgent(0))
    solver420.check_policy(table)
    hands, _ = np.nonzero(solver420.DECISION)
    legal = codec420.LEGAL_MASKS[hands]
    rows = table[solver420.DECISION]
    assert np.array_equal(rows > 0, legal)  # every legal keep, and only those
    assert np.allclose(rows, legal / legal.sum(axis=1, keepdims=True), rtol=0, atol=1e-15)
    assert not table[~solver420.DECISION].any()
    solution = solver420.solve()
    exact = solver420.win_probabilities(solution.policy_table(), table)  # (as Red, as Blue)
    against_optimal = solver420.win_probabilities(solution.policy_table(), solution.policy_table())
    venv = Vec420Env(1000, table, agent_seat="random", seed=5)
    obs = venv.reset()
    outcomes = {0: [0, 0], 1: [0, 0]}  # by the agent's seat: wins, losses
    n = 0
    while n < 30_000:
        own, opp = (codec420.CODE_TO_HAND[(obs[:, k : k + 4] - 1) @ codec420.POWERS] for k in (0, 4))
        actions = np.where(venv.decided, 0, solution.policy[own, opp])
        seats = venv.seat.copy()
        obs, rewards, dones, _ = venv.step(actions)
        assert set(np.unique(rewards[dones])) <= {-1.0, 1.0} and not rewards[~dones].any()
        for seat in (0, 1):
            outcomes[seat][0] += int(np.count_nonzero(dones & (seats == seat) & (rewards > 0)))
            outcomes[seat][1] += int(np.count_nonzero(dones & (seats == seat) & (rewards < 0)))
        n += int(np.count_nonzero(dones))
    for seat in (0, 1):
        wins, losses = outcomes[seat]
        p, n_games = exact[seat], wins + losses
        se = (p * (1 - p) / n_games) ** 0.5
        assert abs(wins / n_games - p) < 4 * se, (seat, wins / n_games, p)
        assert abs(p - against_optimal[seat]) > 10 * se  # the table makes the difference
