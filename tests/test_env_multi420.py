"""Dice420-v0 with 3 to 8 players (R7): one agent, the other seats played by opponents."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env

import games  # noqa: F401  (registers the Gymnasium ids)
from agents import make_env
from agents.base import RandomAgent
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import ScriptedDice
from games.dice420.env import Dice420Env

C = [6, 5, 1, 1]  # a first roll with a choice (keep 6, 5 or 6-5, or reroll all)
TWENTY = [5, 5, 5, 5]


class ScriptedAgent:
    """Plays the given keeps in order, checking each is in the mask it is shown."""

    def __init__(self, actions=()):
        self.actions = list(actions)
        self.seen = []

    def act(self, obs, action_mask):
        self.seen.append(codec420.decode(obs))
        action = self.actions.pop(0)
        assert action_mask[action]
        return action


def rounds(env):
    """(Player 1, players) of every round of the env's game."""
    return [(e["first_player"], e["players"]) for e in env.game.events if e["type"] == "round"]


def test_three_players_the_agent_makes_20_drops_out_and_the_episode_ends_with_plus_one():
    # Player 1 is seat 1.  First rolls: seat 1 6-6-5-1, seat 2 3-3-2-1 (nothing to keep),
    # the agent (seat 0) 6-5-4-1.  Seat 1 keeps 6-6-5 and rolls a 2 (19); seat 2 rerolls all
    # (4-3-2-1, nothing to keep again); the agent keeps 6-5-4 and rolls a 5: 20.
    seat1, seat2 = ScriptedAgent([g.KEEP_INDEX[(6, 6, 5)]]), ScriptedAgent()
    env = Dice420Env(opponent=[seat1, seat2], n_players=3, agent_seat=0)
    script = [6, 6, 5, 1, 3, 3, 2, 1, 6, 5, 4, 1, 2, 4, 3, 2, 1, 5] + C + C
    obs, info = env.reset(options={"dice": ScriptedDice(script, seats=[1])})
    assert not info["decided"] and info["seat"] == 0
    assert obs.tolist() == [1, 4, 5, 6, 2, 5, 6, 6, 1, 2, 3, 4]  # own, then seats 1 and 2 (after their turns)
    assert info["remaining"] == [0, 1, 2] and info["finish_order"] == [] and "place" not in info
    assert seat1.seen == [((6, 6, 5, 1), (3, 3, 2, 1), (6, 5, 4, 1))]  # seat 1 sees itself first

    obs, reward, term, trunc, info = env.step(g.KEEP_INDEX[(6, 5, 4)])
    assert (reward, term, trunc) == (1.0, True, False)
    assert info["place"] == 1 and info["finish_order"] == [0] and info["remaining"] == [1, 2]
    assert env.observation_space.contains(obs) and obs[:4].tolist() == [0, 0, 0, 0]  # out: no hand
    # The next round's Player 1 is the next remaining player clockwise from seat 1: seat 2.
    assert rounds(env) == [(1, [0, 1, 2]), (2, [1, 2])]
    assert not env.game.is_over
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(0)


def test_three_players_the_last_player_left_loses_and_player_1_rotates_past_the_winner():
    # Player 1 is seat 2.  Round 1: seat 2 6-5-1-1, the agent (seat 0) 6-4-1-1, seat 1
    # 6-6-4-4 = 20: seat 1 is out.  Round 2 starts with the next remaining seat clockwise
    # from seat 2: seat 0 (the agent) 6-5-2-1, seat 2 5-4-3-1; the agent rerolls all four
    # (1-1-1-1), seat 2 keeps its 5 and rolls 6-5-4: 20.  The agent is the last one left.
    for reward_mode in ("outcome", "rank"):
        seat2 = ScriptedAgent([g.KEEP_INDEX[(5,)]])
        env = Dice420Env(opponent=[ScriptedAgent(), seat2], n_players=3, agent_seat=0, reward=reward_mode)
        script = C + [6, 4, 1, 1] + [6, 6, 4, 4] + [6, 5, 2, 1, 5, 4, 3, 1] + [1, 1, 1, 1] + [6, 5, 4]
        obs, info = env.reset(options={"dice": ScriptedDice(script, seats=[2])})
        assert not info["decided"]
        assert info["finish_order"] == [1] and info["remaining"] == [0, 2]
        assert rounds(env) == [(2, [0, 1, 2]), (0, [0, 2])]
        assert obs.tolist() == [1, 2, 5, 6, 0, 0, 0, 0, 1, 3, 4, 5]  # seat 1 is out: no hand

        obs, reward, term, _, info = env.step(g.REROLL_ALL)
        assert (reward, term) == (-1.0, True)
        assert info["place"] == 3 and info["finish_order"] == [1, 2] and info["remaining"] == [0]
        assert env.game.is_over and env.game.loser == 0
        assert obs.tolist() == [1, 1, 1, 1, 0, 0, 0, 0, 4, 5, 5, 6]


def test_three_players_the_agent_can_lose_before_its_first_choice():
    # Player 1 is seat 1; seat 1 and then seat 2 make 20 on their first rolls.
    env = Dice420Env(n_players=3, agent_seat=0)
    obs, info = env.reset(options={"dice": ScriptedDice(TWENTY + TWENTY, seats=[1])})
    assert info["decided"] and info["place"] == 3 and info["finish_order"] == [1, 2]
    assert env.action_masks().tolist() == [True] + [False] * 13
    obs, reward, term, _, info = env.step(5)  # any action in the space: nothing is played
    assert (reward, term) == (-1.0, True)


def place_script(place: int) -> list[int]:
    """Dice for 4 players, Player 1 = seat 0 (the agent), in which players make 20 on
    first rolls so that the agent finishes in ``place`` before it has a choice."""
    if place == 1:  # the agent makes 20 at once; round 2 (Player 1 seat 1): seats 1, 2, 3
        return TWENTY + C * 3
    if place == 2:  # seat 1 out; round 2 (seat 2): 2, 3, then the agent makes 20; round 3 (seat 3)
        return C + TWENTY + C + C + TWENTY + C + C
    if place == 3:  # seats 1, 2 out; round 3 (seat 3): seat 3, then the agent makes 20
        return C + TWENTY + TWENTY + C + TWENTY
    return C + TWENTY + TWENTY + TWENTY  # seats 1, 2, 3 out


@pytest.mark.parametrize("place, rank_reward", [(1, 1.0), (2, 1 / 3), (3, -1 / 3), (4, -1.0)])
def test_rank_reward_for_four_players(place, rank_reward):
    for mode, expected in (("rank", rank_reward), ("outcome", 1.0 if place < 4 else -1.0)):
        env = Dice420Env(n_players=4, agent_seat=0, reward=mode)
        _, info = env.reset(options={"dice": ScriptedDice(place_script(place), seats=[0])})
        assert info["decided"] and info["place"] == place
        _, reward, term, _, info = env.step(0)
        assert term and reward == pytest.approx(expected)


def test_rank_reward_paid_on_a_step_for_four_players():
    # Player 1 is seat 0 (the agent).  Round 1: the agent 6-6-5-1, the others 6-5-1-1; the
    # agent keeps 6-6-5 and rolls a 6 (23); seat 1 keeps 6-5 and rolls 5-4: 20, out.
    # Round 2 (Player 1 seat 2): seat 2 5-4-3-1, seat 3 3-3-2-1, the agent 6-6-5-1; seat 2
    # keeps its 5 and rolls 6-5-4: 20, out.  Round 3 (seat 3): seat 3 6-5-1-1, the agent
    # 6-6-5-1; seat 3 rerolls all (3-3-2-1); the agent keeps 6-6-5 and rolls a 3: 20, place 3.
    seat1 = ScriptedAgent([g.KEEP_INDEX[(6, 5)]])
    seat2 = ScriptedAgent([g.KEEP_INDEX[(5,)]])
    seat3 = ScriptedAgent([g.REROLL_ALL])
    env = Dice420Env(opponent=[seat1, seat2, seat3], n_players=4, agent_seat=0, reward="rank")
    script = (
        [6, 6, 5, 1]
        + C * 3
        + [6]
        + [5, 4]
        + [5, 4, 3, 1, 3, 3, 2, 1, 6, 6, 5, 1]
        + [6, 5, 4]
        + C
        + [6, 6, 5, 1]
        + [3, 3, 2, 1]
        + [3]
    )
    obs, info = env.reset(options={"dice": ScriptedDice(script, seats=[0])})
    assert not info["decided"] and info["finish_order"] == []
    assert obs.tolist() == [1, 5, 6, 6] + [1, 1, 5, 6] * 3
    obs, reward, term, _, info = env.step(g.KEEP_INDEX[(6, 6, 5)])
    assert (reward, term) == (0.0, False)
    assert info["finish_order"] == [1, 2] and [first for first, _ in rounds(env)] == [0, 2, 3]
    assert obs.tolist() == [1, 5, 6, 6, 0, 0, 0, 0, 0, 0, 0, 0, 1, 2, 3, 3]
    obs, reward, term, _, info = env.step(g.KEEP_INDEX[(6, 6, 5)])
    assert (reward, term) == (pytest.approx(-1 / 3), True) and info["place"] == 3
    assert env.game.is_over and env.game.loser == 3


@pytest.mark.parametrize("n_players", range(2, 9))
def test_random_games_to_the_end(n_players):
    env = Dice420Env(n_players=n_players, reward="rank")
    low, high = codec420.observation_bounds(n_players)
    assert env.observation_space.shape == (4 * n_players,)
    assert (env.observation_space.low == low).all() and (env.observation_space.high == high).all()
    rng = np.random.default_rng(n_players)
    places = set()
    for seed in range(60):
        obs, info = env.reset(seed=seed)
        for _ in range(10_000):
            mask = env.action_masks()
            assert mask.any() and np.array_equal(mask, info["action_mask"])
            assert env.observation_space.contains(obs), obs
            if not info["decided"]:
                assert env.game.current_player == env.seat and mask.sum() > 1
                assert np.array_equal(mask, codec420.legal_mask(env.game.legal_actions()))
            obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(mask))))
            assert not trunc and env.observation_space.contains(obs)
            if term:
                place = info["place"] if n_players > 2 else (1 if info["winner"] == info["seat"] else 2)
                assert reward == pytest.approx(1 - 2 * (place - 1) / (n_players - 1))
                places.add(place)
                break
            assert reward == 0.0
        else:
            pytest.fail("game did not end")
    assert places >= {1, n_players}


@pytest.mark.filterwarnings("ignore:.*not having a spec")  # the direct instance has no spec
@pytest.mark.parametrize("n_players", [3, 5, 8])
def test_passes_gymnasium_check_env(n_players):
    gym_check_env(Dice420Env(n_players=n_players))
    env = gym.make("Dice420-v0", n_players=n_players)
    gym_check_env(env.unwrapped)


def test_agent_seat_and_the_opponents_are_clockwise_from_the_agent():
    class Spy:
        def __init__(self):
            self.seats = set()

        def act(self, obs, action_mask):
            game = env.game
            assert codec420.decode(obs)[0] == game.hands[game.current_player]
            self.seats.add(game.current_player)
            return int(np.flatnonzero(action_mask)[0])

    spies = [Spy() for _ in range(4)]
    env = Dice420Env(opponent=spies, n_players=5, agent_seat=3)
    rng = np.random.default_rng(0)
    for seed in range(40):
        _, info = env.reset(seed=seed)
        assert info["seat"] == 3
        term = False
        while not term:
            _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
    assert [s.seats for s in spies] == [{4}, {0}, {1}, {2}]


def test_random_seat_is_drawn_and_the_same_seed_gives_the_same_game():
    def trace(env, seed):
        rng = np.random.default_rng(0)
        obs, info = env.reset(seed=seed)
        out = [(info["seat"], obs.tolist())]
        term = False
        while not term:
            obs, reward, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
            out.append((obs.tolist(), reward))
        return out, list(env.game.events)

    a = Dice420Env(n_players=4, opponent=[RandomAgent(1), RandomAgent(2), RandomAgent(3)])
    b = Dice420Env(n_players=4, opponent=[RandomAgent(4), RandomAgent(5), RandomAgent(6)])
    seats = set()
    for seed in range(30):
        ta = trace(a, seed)
        assert ta == trace(b, seed)
        seats.add(ta[0][0][0])
    assert seats == {0, 1, 2, 3}
    assert trace(a, 1) != trace(a, 2)


def test_bad_arguments_for_more_players():
    with pytest.raises(ValueError, match="agent_seat"):
        Dice420Env(n_players=3, agent_seat="red")
    with pytest.raises(ValueError, match="agent_seat"):
        Dice420Env(n_players=3, agent_seat=3)
    with pytest.raises(ValueError, match="one opponent per other seat"):
        Dice420Env(n_players=3, opponent=[RandomAgent()])
    with pytest.raises(TypeError, match="make_agent"):
        Dice420Env(n_players=3, opponent=[RandomAgent(), "greedy"])
    with pytest.raises(ValueError, match="n_players"):
        Dice420Env(n_players=1)


def test_make_env_names_the_opponents():
    env = make_env("Dice420-v0", opponent=["greedy", "random"], n_players=3).unwrapped
    assert [o.name for o in env.opponents] == ["greedy", "random"]
    env.reset(seed=0)


def test_render_narrates_and_status_lines_fit_80_columns():
    env = Dice420Env(n_players=8, agent_seat=0, render_mode="ansi")
    _, info = env.reset(seed=2)
    text = env.render()
    assert "Player 1 (you)" in text and "Player 2 (bot)" in text and "rolls all four" in text
    rng = np.random.default_rng(0)
    term = False
    while not term:
        _, _, term, _, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        assert env.render()
    status = env.render().splitlines()  # nothing new happened: the status lines alone
    assert status[0].startswith("Player 1 (you)") and 1 < len(status) <= 4
    assert all(len(line) <= 80 for line in status)
    assert all(f"Player {s + 1} (" in "".join(status) for s in range(8))
