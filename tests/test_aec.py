"""PettingZoo AEC envs (envs.aec): the PettingZoo API and seed tests, the rewards of
R7 and of 421's leavers through the AEC cycle, games decided before anyone has a
choice, and the observations and masks against the engines."""

from __future__ import annotations

import numpy as np
import pytest
from pettingzoo.test import api_test, seed_test

from games.dice420 import codec as codec420
from games.dice421 import codec as codec421
from games.dice420 import game as g420
from games.dice421 import game as g421
from games.dice420 import aec as dice420_v0
from games.dice421 import aec as dice421_v0
from core.dice import RandomDice, ScriptedDice
from core.engine import IllegalAction

CONFIGS = [(dice420_v0, {"n_players": n}) for n in range(2, 9)] + [
    (dice421_v0, {"n_players": n, "pot": pot}) for n in (2, 3) for pot in (15, 3)
]
IDS = [f"{m.__name__.rsplit('.', 1)[-1]}-{'-'.join(f'{k}{v}' for k, v in kw.items())}" for m, kw in CONFIGS]


class PrefixDice:
    """Scripted dice first, then random ones: a scripted start played out to the end."""

    def __init__(self, dice, seed: int = 0):
        self.script, self.random = ScriptedDice(dice), RandomDice(seed)

    def roll(self, n):
        left = len(self.script.remaining)
        assert left in (0,) or left >= n, "the script must end on a whole roll"
        return self.script.roll(n) if left else self.random.roll(n)

    def draw_seat(self, n_players):
        return self.random.draw_seat(n_players)


def mask_of(actions, n):
    mask = np.zeros(n, dtype=np.int8)
    mask[list(actions)] = 1
    return mask


def play(env, rng, check=None):
    """Play ``env`` (reset already) to the end with random legal moves.

    Returns each agent's total reward, summed from ``last()`` and, separately, from
    ``env.rewards`` after each step; ``check(env, agent)`` runs before each move."""
    from_last, from_rewards = {}, {}
    for agent in env.agent_iter(100_000):
        obs, reward, terminated, truncated, _ = env.last()
        from_last[agent] = from_last.get(agent, 0.0) + reward
        assert not truncated
        if terminated:
            action = None
        else:
            if check is not None:
                check(env, agent)
            action = int(rng.choice(np.flatnonzero(obs["action_mask"])))
        env.step(action)
        for a, r in env.rewards.items():
            from_rewards[a] = from_rewards.get(a, 0.0) + r
    assert not env.agents
    return from_last, from_rewards


# --- PettingZoo's own tests --------------------------------------------------------------


@pytest.mark.parametrize("module,kwargs", CONFIGS, ids=IDS)
def test_api_test(module, kwargs):
    api_test(module.env(**kwargs), num_cycles=300)


@pytest.mark.parametrize("n_players", [2, 3])
def test_api_test_when_every_game_is_decided_before_anyone_has_a_choice(n_players):
    # With a pot of 1 the first charge round gives the only token away: the game is
    # over at reset, every time, and the formality step has to satisfy api_test.
    env = dice421_v0.env(n_players=n_players, pot=1)
    env.reset(seed=0)
    assert env.unwrapped.game.is_over
    api_test(env, num_cycles=10)


@pytest.mark.parametrize("module,kwargs", CONFIGS, ids=IDS)
def test_seed_test(module, kwargs):
    seed_test(lambda: module.env(**kwargs), num_cycles=100)


def test_same_seed_same_game_other_seed_other_game():
    def events(seed):
        env = dice420_v0.env(n_players=4)
        env.reset(seed=seed)
        play(env, np.random.default_rng(0))
        return env.unwrapped.game.events

    assert events(7) == events(7)
    assert events(7) != events(8)


# --- rewards and terminations through the AEC cycle -------------------------------------


def test_three_player_420_round_winner_drops_out_and_the_next_round_starts_clockwise_from_player_1():
    keep6, keep665 = g420.KEEP_INDEX[(6,)], g420.KEEP_INDEX[(6, 6, 5)]
    dice = ScriptedDice(
        [
            6,
            1,
            1,
            1,
            6,
            1,
            1,
            1,
            6,
            6,
            5,
            1,  # round 1 first rolls: seats 0 (Player 1), 1, 2
            1,
            1,
            1,
            1,
            1,
            1,
            3,  # seat 0 and 1 keep a 6; seat 2 keeps 6-6-5 and makes 20
            6,
            1,
            1,
            1,
            6,
            1,
            1,
            1,  # round 2 first rolls: seat 1 (next after seat 0), seat 0
            6,
            6,
            2,  # seat 1 keeps a 6 and makes 6-6-6-2
        ]
    )
    env = dice420_v0.env(n_players=3)
    env.reset(options={"dice": dice, "first_player": 0})
    game = env.unwrapped.game
    for agent, action in [("player_0", keep6), ("player_1", keep6)]:
        assert env.agent_selection == agent
        env.step(action)
        assert not any(env.rewards.values()) and not any(env.terminations.values())
    assert env.agent_selection == "player_2"
    env.step(keep665)
    assert env.rewards == {"player_0": 0.0, "player_1": 0.0, "player_2": 1.0}
    assert env.terminations == {"player_0": False, "player_1": False, "player_2": True}
    assert env.agent_selection == "player_2"  # the winner is removed first
    assert env.last()[1:3] == (1.0, True)
    env.step(None)
    assert env.agents == ["player_0", "player_1"]
    # Round 2 starts with seat 1, the next remaining player clockwise from round 1's
    # Player 1 (seat 0), not with the seat after the winner (seat 0).
    assert game.round_first == 1 and [e["first_player"] for e in game.events if e["type"] == "round"] == [0, 1]
    assert env.agent_selection == "player_1"
    assert env.last()[1:3] == (0.0, False)
    env.step(keep6)
    assert env.rewards == {"player_0": -1.0, "player_1": 1.0}
    assert all(env.terminations.values()) and game.is_over and game.loser == 0
    seen = {}
    while env.agents:
        seen[env.agent_selection] = env.last()[1]
        env.step(None)
    assert seen == {"player_0": -1.0, "player_1": 1.0}
    assert dice.remaining == ()


@pytest.mark.parametrize("winner_seat", [0, 1])
def test_two_player_420_decided_by_a_first_roll(winner_seat):
    # Red's first roll makes 20, or Red's does not and Blue's does: nobody had a choice.
    dice = [5, 5, 5, 5] if winner_seat == 0 else [4, 3, 2, 1, 5, 5, 5, 5]
    raw = dice420_v0.raw_env()
    raw.reset(options={"dice": ScriptedDice(dice)})
    with pytest.raises(IllegalAction, match="only legal action is 0"):
        raw.step(3)
    env = dice420_v0.env()
    env.reset(options={"dice": ScriptedDice(dice)})
    assert env.unwrapped.game.is_over
    # Every agent is alive after reset (PettingZoo's API), player_0 has the formality.
    assert env.agents == ["player_0", "player_1"] and not any(env.terminations.values())
    assert env.agent_selection == "player_0"
    obs, reward, terminated, _truncated, _ = env.last()
    assert list(obs["action_mask"]) == [1] + [0] * 13 and (reward, terminated) == (0.0, False)
    assert not env.observe("player_1")["action_mask"].any()
    env.step(0)
    expected = {f"player_{winner_seat}": 1.0, f"player_{1 - winner_seat}": -1.0}
    assert env.rewards == expected and all(env.terminations.values())
    seen = {}
    while env.agents:
        assert env.last()[2] is True
        seen[env.agent_selection] = env.last()[1]
        env.step(None)
    assert seen == expected


def test_three_player_420_first_roll_of_20_is_revealed_by_the_first_step():
    keep6 = g420.KEEP_INDEX[(6,)]
    env = dice420_v0.env(n_players=3)
    # Seat 0 (Player 1) makes 20 with its first roll; round 2 starts with seat 1.
    env.reset(options={"dice": PrefixDice([5, 5, 5, 5, 6, 1, 1, 1, 6, 1, 1, 1, 1, 1, 1]), "first_player": 0})
    game = env.unwrapped.game
    assert game.outcome(0) == 1.0 and not game.is_over
    assert not any(env.terminations.values()) and env.agent_selection == "player_1"
    env.step(keep6)
    assert env.rewards == {"player_0": 1.0, "player_1": 0.0, "player_2": 0.0}
    assert env.terminations == {"player_0": True, "player_1": False, "player_2": False}
    assert env.agent_selection == "player_0" and env.last()[1:3] == (1.0, True)
    env.step(None)
    assert env.agent_selection == "player_2"
    totals, _ = play(env, np.random.default_rng(1))
    assert "player_0" not in totals  # removed by its dead step, never selected again
    assert sorted(totals.values()) == [-1.0, 1.0]


def test_421_charge_that_gives_every_token_to_one_player_ends_the_game_at_reset():
    # Two charge rounds, 4-2-1 against 3-2-2 (the lowest hand): seat 1 takes 10, then the last 5.
    env = dice421_v0.env(n_players=2, pot=15)
    env.reset(options={"dice": ScriptedDice([4, 2, 1, 3, 2, 2] * 2), "first_player": 0})
    game = env.unwrapped.game
    assert game.is_over and game.tokens == [0, 15] and game.loser == 1
    assert not any(env.terminations.values()) and env.agent_selection == "player_0"
    assert list(env.last()[0]["action_mask"]) == [1] + [0] * 28
    env.step(0)
    assert env.rewards == {"player_0": 1.0, "player_1": -1.0} and all(env.terminations.values())
    env.step(None)
    env.step(None)
    assert not env.agents


def test_three_player_421_player_without_tokens_after_the_charge_wins_and_the_others_play_on():
    # Seat 1 takes 10, seat 2 the last 5: seat 0 never took a token and leaves as a winner.
    keep65 = g421.action_for_keep((6, 5))
    charge = [4, 2, 1, 3, 2, 2, 6, 5, 3, 4, 2, 1, 6, 5, 3, 3, 2, 2]
    env = dice421_v0.env(n_players=3, pot=15)
    env.reset(options={"dice": PrefixDice([*charge, 6, 5, 3, 4]), "first_player": 0})
    game = env.unwrapped.game
    assert game.tokens == [0, 10, 5] and game.winners == [0] and not game.is_over
    assert not any(env.terminations.values()) and env.agent_selection == "player_2"
    np.testing.assert_array_equal(env.last()[0]["action_mask"], mask_of(game.legal_actions(), g421.N_ACTIONS))
    env.step(keep65)
    assert env.rewards == {"player_0": 1.0, "player_1": 0.0, "player_2": 0.0}
    assert env.terminations == {"player_0": True, "player_1": False, "player_2": False}
    assert env.agent_selection == "player_0"
    env.step(None)
    assert env.agents == ["player_1", "player_2"] and env.agent_selection == "player_2"
    assert game.dice_in_hand == (6, 5, 4)
    totals, _ = play(env, np.random.default_rng(2))
    assert sorted([totals["player_1"], totals["player_2"]]) == [-1.0, 1.0]


@pytest.mark.parametrize("module,kwargs", CONFIGS, ids=IDS)
def test_random_games_every_non_loser_gets_plus_one_and_the_loser_minus_one(module, kwargs):
    rng = np.random.default_rng(11)
    n = kwargs["n_players"]
    for seed in range(20):
        env = module.env(**kwargs)
        env.reset(seed=seed)
        game = env.unwrapped.game
        from_last, from_rewards = play(env, rng)
        assert game.is_over
        assert from_last == from_rewards
        assert from_last == {f"player_{s}": -1.0 if s == game.loser else 1.0 for s in range(n)}
        assert sum(from_last.values()) == n - 2


@pytest.mark.parametrize(
    "module,codec,kwargs",
    [(dice420_v0, codec420, {"n_players": n}) for n in (2, 3, 5, 8)]
    + [(dice421_v0, codec421, {"n_players": n}) for n in (2, 3)],
    ids=["420-2", "420-3", "420-5", "420-8", "421-2", "421-3"],
)
def test_observations_and_masks_are_the_codecs_and_the_engines(module, codec, kwargs):
    rng = np.random.default_rng(5)
    checked = []

    def check(env, agent):
        raw = env.unwrapped
        game, seat = raw.game, raw.agent_name_mapping[agent]
        if game.is_over:  # the formality of a game decided at reset
            return
        assert seat == game.current_player
        for other in env.agents:
            obs = env.observe(other)
            np.testing.assert_array_equal(obs["observation"], codec.observe(game, raw.agent_name_mapping[other]))
            assert obs["observation"].dtype == np.int64 and obs["action_mask"].dtype == np.int8
            if other == agent:
                np.testing.assert_array_equal(
                    obs["action_mask"], mask_of(game.legal_actions(), len(obs["action_mask"]))
                )
                np.testing.assert_array_equal(obs["action_mask"], codec.legal_mask(game.legal_actions()))
            else:
                assert not obs["action_mask"].any()
        checked.append(seat)

    for seed in range(10):
        env = module.env(**kwargs)
        env.reset(seed=seed)
        play(env, rng, check)
    assert len(set(checked)) == kwargs["n_players"]


# --- options, errors, rendering -------------------------------------------------------


def test_spaces_agents_and_metadata():
    env = dice420_v0.env(n_players=5)
    env.reset(seed=0)
    assert env.possible_agents == [f"player_{i}" for i in range(5)]
    space = env.observation_space("player_3")
    assert space["observation"].shape == (20,) and space["observation"].dtype == np.int64
    assert space["observation"].low.min() == 0 and space["observation"].high.max() == 6
    assert space["action_mask"].shape == (14,) and env.action_space("player_3").n == 14
    assert env.metadata["name"] == "dice420_v0" and env.metadata["render_modes"] == ["human", "ansi"]
    env = dice421_v0.env(n_players=3, pot=7)
    env.reset(seed=0)
    assert env.observation_space("player_0")["observation"].high.max() == 7
    assert env.action_space("player_2").n == 29
    assert env.metadata["name"] == "dice421_v0" and env.metadata["is_parallelizable"] is False


def test_first_player_option():
    for first in range(4):
        env = dice420_v0.env(n_players=4)
        env.reset(seed=3, options={"first_player": first})
        assert env.unwrapped.game.first_player == first
    env = dice421_v0.env(n_players=3)
    env.reset(seed=3, options={"first_player": 2})
    assert env.unwrapped.game.first_player == 2
    with pytest.raises(ValueError, match="first_player"):
        env.reset(options={"first_player": 3})


@pytest.mark.parametrize(
    "make,match",
    [
        (lambda: dice420_v0.env(n_players=1), r"n_players: 420 is played by 2 to 8 players"),
        (lambda: dice420_v0.env(n_players=9), r"n_players: 420 is played by 2 to 8 players"),
        (lambda: dice420_v0.env(n_players=True), r"n_players"),
        (lambda: dice420_v0.env(n_players="3"), r"n_players"),
        (lambda: dice421_v0.env(n_players=4), r"n_players: 421 is played by 2 to 3 players"),
        (lambda: dice421_v0.env(pot=0), r"pot .*1\.\.100"),
        (lambda: dice421_v0.env(pot=2.5), r"pot"),
        (lambda: dice420_v0.env(render_mode="rgb_array"), r"render_mode"),
    ],
)
def test_bad_options_are_refused_by_name(make, match):
    with pytest.raises(ValueError, match=match):
        make()


def test_render_narrates_the_events_since_the_last_render(capsys):
    def narrated(env, events, skip=0):
        narrator = env.unwrapped.spec_of_game.narrator(env.unwrapped.n_players, labels=env.possible_agents)
        narrator.lines(events[:skip])  # narrators keep state: feed every event once, in order
        return "\n".join(narrator.lines(events[skip:]))

    env = dice420_v0.env(n_players=2, render_mode="ansi")
    env.reset(seed=4)
    game = env.unwrapped.game
    text, status = env.render().rsplit("\n", 1)
    assert text == narrated(env, game.events) != ""
    assert status.startswith("Hands: Red (player_0) ") and "To move: " in status
    assert env.render() == status  # nothing new: the status line only
    shown = len(game.events)
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    text, status = env.render().rsplit("\n", 1)
    assert text == narrated(env, game.events, shown) != ""

    env = dice421_v0.env(n_players=3, render_mode="human")
    env.reset(seed=4)
    text, status = capsys.readouterr().out.rstrip("\n").rsplit("\n", 1)
    assert text == narrated(env, env.unwrapped.game.events) != ""
    assert status.startswith("Tokens: P1 (player_0) ")
    env.step(int(np.flatnonzero(env.last()[0]["action_mask"])[0]))
    assert capsys.readouterr().out.strip()
    with pytest.warns(UserWarning, match="without specifying any render mode"):
        assert dice421_v0.env().unwrapped.render() is None


OPTIMISED_CHECK = """
import warnings, games
from core.engine import IllegalAction
assert not __debug__, "run with python -O"
for name in games.names():
    env = games.aec_env(name)
    env.reset(seed=3)
    agent = env.agent_selection
    n = env.action_space(agent).n
    for action in (-1, n, n + 7, 10**9, True, 2.5):
        try:
            env.step(action)
        except IllegalAction as e:
            assert str(e), name
        else:
            raise SystemExit(f"{name}: {action!r} was accepted under python -O")
        assert env.agent_selection == agent and not any(env.terminations.values()), (name, action)
    print(name, "ok")
"""


def test_aec_envs_refuse_out_of_space_actions_under_python_O():
    """Out-of-space actions raise IllegalAction and change nothing, with asserts off too
    (PettingZoo's AssertOutOfBoundsWrapper checked them with assert: under -O a -1 read
    the mask's last entry, and a large action raised IndexError)."""
    import subprocess
    import sys

    import games

    done = subprocess.run([sys.executable, "-O", "-c", OPTIMISED_CHECK], capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.split() == [w for name in games.names() for w in (name, "ok")]
