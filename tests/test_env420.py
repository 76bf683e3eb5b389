"""Dice420-v0 (Gymnasium) and the batched Vec420Env against the engine."""

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env as gym_check_env
from sb3_contrib.common.maskable.utils import get_action_masks
from stable_baselines3.common.env_checker import check_env as sb3_check_env

import envs  # noqa: F401  (registers Dice420-v0)
from agents import solver420
from agents.base import RandomAgent
from agents.bots420 import GreedyAgent
from envs import codec420
from envs import game420 as g
from envs.dice import ScriptedDice
from envs.dice420_env import Dice420Env
from envs.vec420 import Vec420Env, scripted_dice


def test_registered_and_passes_gymnasium_check_env():
    env = gym.make("Dice420-v0", illegal_action="reroll_all")
    gym_check_env(env.unwrapped)
    assert env.spec.id == "Dice420-v0"


def test_passes_sb3_check_env():
    sb3_check_env(Dice420Env(illegal_action="reroll_all"), warn=False)


def test_mask_in_info_and_action_masks_agree_and_match_the_hand():
    env = Dice420Env(opponent="random", agent_seat="red")
    obs, info = env.reset(seed=3)
    for _ in range(200):
        mask = env.action_masks()
        assert np.array_equal(mask, info["action_mask"])
        if info["decided"]:
            assert mask.sum() == 1 and mask[g.REROLL_ALL]
        else:
            own, _ = codec420.decode(obs)
            assert np.array_equal(mask, codec420.action_mask(own)) and mask.sum() > 1
        obs, reward, term, trunc, info = env.step(int(np.flatnonzero(mask)[0]))
        if term:
            assert reward in (1.0, -1.0)
            obs, info = env.reset()


def test_illegal_action_raises_by_default_and_falls_back_when_asked():
    env = Dice420Env(agent_seat="red")
    env.reset(seed=0)
    illegal = int(np.flatnonzero(~env.action_masks())[0])
    with pytest.raises(g.IllegalMove, match="illegal move"):
        env.step(illegal)
    env = Dice420Env(agent_seat="red", illegal_action="reroll_all")
    env.reset(seed=0)
    *_, info = env.step(illegal)
    assert info["illegal_action"] is True


def play_episode(env, seed, chooser_seed=0):
    rng = np.random.default_rng(chooser_seed)
    obs, info = env.reset(seed=seed)
    trace = [obs.tolist()]
    while True:
        obs, reward, term, trunc, info = env.step(int(rng.choice(np.flatnonzero(info["action_mask"]))))
        trace.append(obs.tolist())
        if term:
            return trace, reward


def test_same_seed_same_game():
    env1, env2 = Dice420Env(opponent="greedy"), Dice420Env(opponent="greedy")
    for seed in range(20):
        assert play_episode(env1, seed) == play_episode(env2, seed)
    assert play_episode(env1, 1) != play_episode(env1, 2)


def test_rewards_follow_the_winner_and_the_opponent_is_played_inside_step():
    env = Dice420Env(opponent=GreedyAgent(), agent_seat="blue")
    wins = 0
    for seed in range(200):
        _, reward = play_episode(env, seed)
        assert reward == (1.0 if env.game.winner == g.BLUE else -1.0)
        wins += reward > 0
    assert 0 < wins < 200


def test_game_decided_before_the_agent_moves_still_counts():
    # Red's first roll is 6-5-5-4 = 20: the agent (Blue) has lost before its first choice.
    env = Dice420Env(agent_seat="blue")
    obs, info = env.reset(options={"dice": ScriptedDice([6, 5, 5, 4])})
    assert info["decided"] and info["winner"] == "red"
    assert env.action_masks().tolist() == [True] + [False] * 13
    _, reward, term, _, _ = env.step(0)
    assert term and reward == -1.0


def test_render_ansi_shows_both_hands():
    env = Dice420Env(agent_seat="red", render_mode="ansi")
    env.reset(options={"dice": ScriptedDice([1, 5, 6, 6, 2, 2, 3, 3])})
    text = env.render()
    assert "1-5-6-6" in text and "2-2-3-3" in text and "you" in text


def test_bad_constructor_arguments_are_explained():
    with pytest.raises(ValueError, match="agent_seat"):
        Dice420Env(agent_seat="green")
    with pytest.raises(ValueError, match="unknown agent"):
        Dice420Env(opponent="nobody")


# --- the batched env ---------------------------------------------------------


def engine_game(script, agent_red, agent_keeps, opponent_table):
    """Play one game through the engine with scripted dice; the agent plays ``agent_keeps`` in order."""
    game = g.Game420(dice=ScriptedDice(script))
    agent_seat = g.RED if agent_red else g.BLUE
    keeps = iter(agent_keeps)
    while not game.is_over:
        legal = game.legal_actions()
        if len(legal) == 1:
            game.play(legal[0])
        elif game.current == agent_seat:
            game.play(next(keeps))
        else:
            h = g.HAND_INDEX[game.hands[game.current]]
            o = g.HAND_INDEX[game.hands[agent_seat]]
            game.play(int(opponent_table[h, o]))
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
    exact_red, exact_blue = solver420.win_probabilities(solver420.policy_table(greedy), solver420.solve().policy_table())
    greedy_keeps = solver420.policy_table(greedy).argmax(axis=2)
    venv = Vec420Env(2000, opponent, agent_seat="random", seed=11)
    obs = venv.reset()
    wins = {0: [0, 0], 1: [0, 0]}
    while sum(sum(v) for v in wins.values()) < 40_000:
        own = np.array([g.HAND_INDEX[tuple(r)] for r in obs[:, :4]])
        opp = np.array([g.HAND_INDEX[tuple(r)] for r in obs[:, 4:]])
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
    with pytest.raises(g.IllegalMove):
        venv.step(actions)


def test_random_agent_opponent_table_is_a_valid_stochastic_opponent():
    table = solver420.policy_table(RandomAgent(0))
    venv = Vec420Env(32, table, seed=0)
    venv.reset()
    for _ in range(100):
        venv.step(get_action_masks(venv).argmax(axis=1))
