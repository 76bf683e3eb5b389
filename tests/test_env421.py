"""Dice421-v0 (Gymnasium) and its observation codec, against the 421 engine."""

from __future__ import annotations

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import games  # noqa: F401  (registers the Gymnasium ids)
from agents import make_agent, make_env
from agents.base import RandomAgent
from games.dice421 import codec as codec421
from games.dice421 import game as g
from core.dice import ScriptedDice
from games.dice421.env import REROLL_ALL, Dice421Env
from core.engine import IllegalAction


def rolls(spec: str) -> list[int]:
    """'211 551 6' -> [2, 1, 1, 5, 5, 1, 6]: die values in the order rolled."""
    return [int(c) for c in spec if c.isdigit()]


class ScriptedAgent:
    """Plays the given actions in order, checking each is in the mask it is shown."""

    name = "scripted"

    def __init__(self, actions):
        self.actions = list(actions)
        self.seen = []

    def act(self, obs, action_mask):
        self.seen.append(codec421.decode(obs))
        action = self.actions.pop(0)
        assert action_mask[action]
        return action


def random_choice(rng, info):
    return int(rng.choice(np.flatnonzero(info["action_mask"])))


# --- API checks -----------------------------------------------------------------


def test_registered_and_the_defaults_pass_gymnasium_check_env():
    env = gym.make("Dice421-v0")
    assert env.spec.id == "Dice421-v0"
    gym_check_env(env.unwrapped)


def test_three_players_pass_gymnasium_check_env():
    gym_check_env(gym.make("Dice421-v0", n_players=3).unwrapped)


@pytest.mark.parametrize("n_players", [2, 3])
def test_passes_sb3_check_env(n_players):
    sb3_check_env(Dice421Env(n_players=n_players), warn=False)


def test_illegal_action_falls_back_by_default_and_raises_when_asked():
    env = Dice421Env(agent_seat=0, illegal_action="raise")
    obs, info = env.reset(seed=0)
    while info["decided"]:
        obs, info = env.reset()
    illegal = int(np.flatnonzero(~info["action_mask"])[0])
    with pytest.raises(IllegalAction, match="not legal"):
        env.step(illegal)
    with pytest.raises(IllegalAction):
        env.step(-1)
    env = Dice421Env(agent_seat=0)
    obs, info = env.reset(seed=0)
    while info["decided"]:
        obs, info = env.reset()
    events = len(env.game.events)
    _, _, _, _, info = env.step(illegal)
    assert info["illegal_action"] is True
    assert env.game.events[events]["type"] == "reroll" and env.game.events[events]["keep"] == ()
    assert REROLL_ALL == g.action_for_keep(())


def test_bad_constructor_arguments_are_explained():
    with pytest.raises(ValueError, match="n_players"):
        Dice421Env(n_players=4)
    with pytest.raises(ValueError, match="agent_seat"):
        Dice421Env(n_players=2, agent_seat=2)
    with pytest.raises(ValueError, match="one opponent per other seat"):
        Dice421Env(n_players=3, opponent=[RandomAgent()])
    with pytest.raises(ValueError, match="pot"):
        Dice421Env(pot=0)
    with pytest.raises(ValueError, match="illegal_action"):
        Dice421Env(illegal_action="ignore")
    with pytest.raises(TypeError, match="act"):
        Dice421Env(opponent=42)


@pytest.mark.parametrize(
    "n_players, opponent", [(2, "heuristic"), (2, "nobody"), (3, [RandomAgent(), "cautious"]), (3, "random")]
)
def test_a_named_opponent_is_refused_with_the_way_to_get_an_agent(n_players, opponent):
    with pytest.raises(TypeError) as err:
        Dice421Env(n_players=n_players, opponent=opponent)
    message = str(err.value)
    assert "agents.make_agent('421'" in message and "agents.make_env('Dice421-v0'" in message


def test_make_env_names_the_opponents():
    env = make_env("Dice421-v0", opponent=["heuristic", "cautious"], n_players=3).unwrapped
    assert [o.name for o in env.opponents] == ["heuristic", "cautious"]
    _, info = env.reset(seed=0)
    assert env.observation_space.contains(env.reset(seed=1)[0])


@pytest.mark.parametrize("illegal_action", ["raise", "reroll_all"])
@pytest.mark.parametrize("bad", [1.0, np.float32(1.0), True, np.bool_(True), "1", None, [1], np.array([1])])
def test_ill_typed_actions_raise_in_both_modes(illegal_action, bad):
    env = Dice421Env(agent_seat=0, illegal_action=illegal_action)
    _, info = env.reset(seed=0)
    while info["decided"]:
        _, info = env.reset()
    events = list(env.game.events)
    with pytest.raises(IllegalAction, match="integer"):
        env.step(bad)
    assert env.game.events == events


@pytest.mark.parametrize("good", [np.int64(1), np.int8(1), np.array(1, dtype=np.int16)])
def test_numpy_integer_actions_are_accepted(good):
    env = Dice421Env(agent_seat=0, illegal_action="raise")
    _, info = env.reset(seed=0)
    while info["decided"]:
        _, info = env.reset()
    _, _, _, _, info = env.step(good)  # 1 = reroll all: always legal
    assert "illegal_action" not in info


def test_step_after_the_end_raises_until_reset():
    env = Dice421Env(pot=3)
    rng = np.random.default_rng(0)
    _, info = env.reset(seed=0)
    term = False
    while not term:
        _, _, term, _, info = env.step(random_choice(rng, info))
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(g.STOP)
    _, info = env.reset()
    env.step(random_choice(rng, info))


# --- the mask is the legal set --------------------------------------------------


@pytest.mark.parametrize("n_players", [2, 3])
def test_mask_is_exactly_the_engine_legal_set_at_every_decision(n_players):
    env = Dice421Env(n_players=n_players, agent_seat="random")
    rng = np.random.default_rng(n_players)
    decisions = {"leader": 0, "follower": 0}
    for seed in range(150):
        obs, info = env.reset(seed=seed)
        while True:
            game, mask = env.game, env.action_masks()
            assert np.array_equal(mask, info["action_mask"]) and mask.any()
            assert env.observation_space.contains(obs)
            if not info["decided"]:
                assert game.current_player == env.seat
                assert np.array_equal(mask, codec421.legal_mask(game.legal_actions()))
                o = codec421.decode(obs)
                assert o.hand == game.dice_in_hand and (o.rolls_used, o.rolls_allowed) == (
                    game.rolls_used,
                    game.rolls_allowed,
                )
                assert np.array_equal(mask, codec421.mask_of(obs))
                assert np.array_equal(mask, codec421.action_mask(o.hand, o.is_leader))
                if game.leader == env.seat:
                    decisions["leader"] += 1
                    assert o.is_leader and o.rolls_used in (1, 2) and o.rolls_allowed == 3
                    assert mask[g.STOP]
                else:
                    decisions["follower"] += 1
                    assert not o.is_leader and not mask[g.STOP]
                    assert o.rolls_allowed == o.leader_rolls == game.leader_rolls >= 2
                    assert 1 <= o.rolls_used < o.rolls_allowed
            else:
                assert mask.tolist() == [True] + [False] * (g.N_ACTIONS - 1)
            obs, reward, term, trunc, info = env.step(random_choice(rng, info))
            if term:
                assert reward in (1.0, -1.0)
                break
            assert reward == 0.0 and not trunc
        # Every follower made exactly as many rolls as its round's leader (H4).
        rounds = []
        for e in env.game.events:
            if e["type"] == "round" and e["phase"] == "discharge":
                rounds.append([])
            elif e["type"] == "turn_end":
                rounds[-1].append(e["rolls"])
        assert all(len(set(r)) == 1 for r in rounds if r)
    assert decisions["leader"] > 100 and decisions["follower"] > 100


def test_opponents_see_their_own_seat():
    env = Dice421Env(n_players=3, agent_seat=1)

    class Spy:
        calls = 0

        def act(self, obs, action_mask):
            game = env.game
            o = codec421.decode(obs)
            assert game.current_player != env.seat and o.hand == game.dice_in_hand
            assert o.tokens == game.tokens[game.current_player]
            assert np.array_equal(action_mask, codec421.legal_mask(game.legal_actions()))
            Spy.calls += 1
            return int(np.flatnonzero(action_mask)[-1])

    env = Dice421Env(opponent=[Spy(), Spy()], n_players=3, agent_seat=1)
    rng = np.random.default_rng(0)
    for seed in range(20):
        _, info = env.reset(seed=seed)
        term = False
        while not term:
            _, _, term, _, info = env.step(random_choice(rng, info))
    assert Spy.calls > 50


# --- observation codec -----------------------------------------------------------


def test_observation_layout_and_decode_round_trip():
    others = [codec421.OtherPlayer(True, (4, 4, 1), 2, True, True), codec421.OtherPlayer(False, None, 0, False, False)]
    obs = codec421.encode((1, 1, 1), 1, 3, False, 3, others, 3, 0, "discharge", 3)
    assert obs.shape == (codec421.OBS_SIZE,) == (25,)
    assert obs.tolist() == [1, 1, 1, 1, 3, 0, 3, 1, 4, 4, 1, 2, 1, 1, 0, 0, 0, 0, 0, 0, 0, 3, 0, 1, 3]
    o = codec421.decode(obs)
    assert o.hand == (1, 1, 1) and o.others == tuple(others) and o.tokens == 3 and o.n_players == 3
    assert o.round_order() == [1, 0]  # the leader (next clockwise) first; slot 1 has left
    assert o.played_hands() == [(1, (4, 4, 1))]
    low, high = codec421.observation_bounds(5)
    assert (low <= obs).all() and (obs <= high).all()


# --- seeding, the worked example, decided games -----------------------------------


def play_episode(env, seed, chooser_seed=0, options=None):
    rng = np.random.default_rng(chooser_seed)
    obs, info = env.reset(seed=seed, options=options)
    trace = [obs.tolist()]
    while True:
        obs, reward, term, trunc, info = env.step(random_choice(rng, info))
        trace.append(obs.tolist())
        if term:
            return trace, reward


def test_same_seed_same_game():
    env1 = Dice421Env(n_players=3)
    env2 = Dice421Env(opponent=[make_agent("421", "random"), make_agent("421", "heuristic")], n_players=3)
    env3 = make_env("Dice421-v0", opponent=["random", "heuristic"], n_players=3).unwrapped
    for seed in range(10):
        assert play_episode(env1, seed) == play_episode(env1, seed)
        assert play_episode(env2, seed) == play_episode(env3, seed)
    assert play_episode(env1, 1) != play_episode(env1, 2)


def test_random_opponents_follow_the_env_seed_not_their_own():
    # Random agents built with different seeds play the same games from the same env seed.
    env1 = Dice421Env(opponent=[RandomAgent(1), RandomAgent(2)], n_players=3, agent_seat=0)
    env2 = Dice421Env(opponent=[RandomAgent(3), RandomAgent(4)], n_players=3, agent_seat=0)
    for seed in range(15):
        play_episode(env1, seed)
        play_episode(env2, seed)
        assert env1.game.events == env2.game.events


def test_the_default_random_opponent_draws_from_the_env_generator():
    # The same dice for every game: only the opponent's choices can differ.
    script = np.random.default_rng(5).integers(1, 7, size=20_000).tolist()
    keeps = {}
    for seed in (0, 0, 1, 2, 3):
        env = Dice421Env(agent_seat=0)
        play_episode(env, seed, options={"dice": ScriptedDice(script, seats=[0])})
        played = tuple(e["keep"] for e in env.game.events if e["type"] == "reroll" and e["seat"] == 1)
        keeps.setdefault(seed, []).append(played)
    assert keeps[0][0] == keeps[0][1]
    assert len({v[0] for v in keeps.values()}) > 1


WORKED_EXAMPLE = (
    "211 551  643 541  621 621 642 632  642 113"  # charge, with a RAMPO
    "  541 6 4  111 4 4"
)  # discharge
P1_KEEPS = [g.action_for_keep((4, 1))] * 2  # replay the 5, then the 6
P2_KEEPS = [g.action_for_keep((1, 1))] * 2  # replay one 1, then the 4


def test_seed_003_worked_example_as_p2_wins():
    p1 = ScriptedAgent(P1_KEEPS)
    env = Dice421Env(opponent=p1, agent_seat=1, pot=5, render_mode="ansi")
    obs, info = env.reset(options={"dice": ScriptedDice(rolls(WORKED_EXAMPLE), seats=[0])})
    assert not info["decided"] and info["tokens"] == [2, 3]
    o = codec421.decode(obs)
    assert o.hand == (1, 1, 1) and (o.rolls_used, o.rolls_allowed, o.leader_rolls) == (1, 3, 3)
    assert not o.is_leader and not info["action_mask"][g.STOP]  # P2 must match 3 rolls
    assert o.others[0] == codec421.OtherPlayer(True, (4, 4, 1), 2, True, True)
    assert (o.tokens, o.pot, o.phase) == (3, 0, "discharge")
    assert p1.seen[0].is_leader and p1.seen[0].hand == (5, 4, 1) and p1.seen[0].others[0].tokens == 3
    text = env.render()
    for line in (
        "P2 (you) has the lowest hand and takes 2 tokens from the pot",
        "RAMPO, one roll each: P2 (you), P1 (bot)",
        "P1 (bot) loses the RAMPO and takes 1 token",
        "Discharge round 1: P1 (bot) leads",
        "P1 (bot) roll 3: kept 4-1, rolled 4 -> 4-4-1",
        "Tokens: P1 2, P2 (you) 3 | pot 0",
        "Your dice 1-1-1, roll 1 of 3",
    ):
        assert line in text
    assert text.count("Charge round 1") == 1 and env.render().count("Charge round") == 0  # narrated once
    obs, reward, term, _, info = env.step(P2_KEEPS[0])
    assert (reward, term) == (0.0, False) and codec421.decode(obs).hand == (4, 1, 1)
    obs, reward, term, _, info = env.step(P2_KEEPS[1])
    assert (reward, term) == (1.0, True)
    assert info["tokens"] == [5, 0] and info["winners"] == [1] and info["loser"] == 0
    text = env.render()
    assert "P2 gives P1 3 tokens (all it held; 4 due)" in text
    assert "P1 (bot) holds all 5 tokens and loses the game. You win!" in text
    assert text.splitlines()[-1] == "Tokens: P1 5, P2 (you) 0 (out) | pot 0"
    with pytest.raises(RuntimeError, match=r"reset\(\)"):
        env.step(g.STOP)


def test_seed_003_worked_example_as_p1_loses():
    env = Dice421Env(opponent=ScriptedAgent(P2_KEEPS), agent_seat=0, pot=5)
    obs, info = env.reset(options={"dice": ScriptedDice(rolls(WORKED_EXAMPLE), seats=[0])})
    o = codec421.decode(obs)
    assert o.is_leader and o.hand == (5, 4, 1) and info["action_mask"][g.STOP]
    _, reward, term, _, _ = env.step(P1_KEEPS[0])
    assert (reward, term) == (0.0, False)
    _, reward, term, _, info = env.step(P1_KEEPS[1])
    assert (reward, term) == (-1.0, True) and info["loser"] == 0


def test_game_decided_in_the_charge_still_counts():
    # Pot 1: whoever rolls lowest in the first charge round holds every token.
    for agent_low, expected in ((True, -1.0), (False, 1.0)):
        script = "652 653" if agent_low else "653 652"
        env = Dice421Env(agent_seat=0, pot=1)
        obs, info = env.reset(options={"dice": ScriptedDice(rolls(script), seats=[0])})
        assert info["decided"] and info["phase"] == "over"
        assert env.action_masks().tolist() == [True] + [False] * (g.N_ACTIONS - 1)
        _, reward, term, _, _ = env.step(g.STOP)
        assert term and reward == expected


def test_agent_out_after_the_charge_wins_while_the_others_play_on():
    # Three players, pot 2: P2 then P3 take a token; P1 (the agent) holds none.
    env = Dice421Env(agent_seat=0, n_players=3, pot=2)
    obs, info = env.reset(options={"dice": ScriptedDice(rolls("653 652 663  653 663 652  421"), seats=[0])})
    assert info["decided"] and info["phase"] == "discharge" and info["winners"] == [0]
    assert codec421.decode(obs).tokens == 0
    _, reward, term, _, _ = env.step(g.STOP)
    assert term and reward == 1.0


@pytest.mark.parametrize("n_players", [2, 3])
def test_every_game_counts_including_those_decided_before_the_first_choice(n_players):
    env = Dice421Env(opponent=make_agent("421", "heuristic"), n_players=n_players, pot=3)
    rng = np.random.default_rng(7)
    n_games = episodes = wins = losses = decided_at_reset = 0
    for seed in range(400):
        obs, info = env.reset(seed=seed)
        n_games += 1
        decided_at_reset += info["decided"]
        while True:
            obs, reward, term, _, info = env.step(random_choice(rng, info))
            if term:
                episodes += 1
                wins += reward == 1.0
                losses += reward == -1.0
                break
            assert reward == 0.0
    assert episodes == n_games and wins + losses == episodes
    assert decided_at_reset > 20 and wins > 0 and losses > 0


def test_render_human_prints(capsys):
    env = Dice421Env(agent_seat=0, render_mode="human")
    env.reset(seed=3)
    out = capsys.readouterr().out
    assert "Charge round 1" in out and "Tokens: P1 (you)" in out and "P2 (bot)" in out
