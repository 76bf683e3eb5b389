"""Pig through the generic layers: Pig-v0 (Gymnasium), pig_v0 (PettingZoo), the bots by name,
the terminal, evaluate, match and tournament, as any registered game gets them."""

from __future__ import annotations

import io
import re

import gymnasium as gym
import numpy as np
import pytest
from gymnasium.utils.env_checker import check_env
from pettingzoo.test import api_test, seed_test

import games
from agents import make_agent
from core.dice import ScriptedDice
from core.engine import IllegalAction
from games.pig import game as g
from games.pig import solver
from games.pig.bots import Hold20Agent
from play.__main__ import main


def test_pig_is_registered_with_its_ids():
    spec = games.get("pig")
    assert spec.env_id == "Pig-v0" and spec.env_id in gym.envs.registry
    assert spec.check_options({}) == {"goal": 100, "faces": 6}
    assert games.aec_env("pig").metadata["name"] == "pig_v0"
    for name in ("random", "hold20", "optimal"):
        assert callable(make_agent("pig", name, seed=1).act)


def test_the_gymnasium_env_passes_the_checker_and_replays_a_seed():
    check_env(gym.make("Pig-v0").unwrapped)
    check_env(gym.make("Pig-v0", n_players=4, goal=30, faces=4).unwrapped)

    def run(seed):
        env = gym.make("Pig-v0", opponent=Hold20Agent())
        obs, info = env.reset(seed=seed)
        trace = [tuple(obs)]
        done = False
        while not done:
            obs, reward, done, _, info = env.step(int(obs[1] >= 25))  # hold at 25
            trace.append(tuple(obs))
        return trace, reward, info["scores"]

    assert run(3) == run(3) and run(3) != run(4)


def test_the_env_plays_scripted_dice_as_the_rules_say():
    env = gym.make("Pig-v0", agent_seat=0, illegal_action="raise").unwrapped
    # seat 0 rolls 5 (its forced first roll), then chooses
    obs, info = env.reset(seed=0, options={"dice": ScriptedDice([5, 6, 1, 4, 4, 6])})
    assert list(obs) == [0, 5, 0] and info["turn_total"] == 5
    obs, reward, done, _, info = env.step(g.ROLL)  # 6: turn total 11
    assert list(obs) == [0, 11, 0] and not done
    obs, reward, done, _, info = env.step(g.HOLD)  # banks 11; the random opponent rolls 1 at once
    assert info["scores"] == [11, 0] and list(obs) == [11, 4, 0]  # and seat 0's first roll is 4
    assert reward == 0.0


def test_a_win_and_a_loss_are_the_rewards():
    env = gym.make("Pig-v0", agent_seat=0, goal=10).unwrapped
    env.reset(seed=0, options={"dice": ScriptedDice([6, 5])})  # 6, then 5 reaches 10
    _, reward, done, _, info = env.step(g.ROLL)
    assert done and reward == 1.0 and info["decided"]
    env = gym.make("Pig-v0", agent_seat=1, goal=10, opponent=Hold20Agent()).unwrapped
    obs, info = env.reset(seed=0, options={"dice": ScriptedDice([6, 5])})  # seat 0 wins before seat 1 moves
    assert info["decided"] and env.game.winner == 0
    _, reward, done, _, _ = env.step(0)
    assert done and reward == -1.0


def test_illegal_actions_raise_or_are_replaced_as_asked():
    env = gym.make("Pig-v0", illegal_action="raise").unwrapped
    env.reset(seed=0)
    with pytest.raises(IllegalAction, match="an action is 0 \\(roll\\) or 1 \\(hold\\)"):
        env.step(7)
    env = gym.make("Pig-v0").unwrapped
    env.reset(seed=0)
    _, _, _, _, info = env.step(7)
    assert info["illegal_action"]
    with pytest.raises(ValueError, match="goal must be a whole number in 1..1000"):
        gym.make("Pig-v0", goal=0)
    with pytest.raises(ValueError, match="pig has no option pot"):
        gym.make("Pig-v0", pot=3)


@pytest.mark.parametrize("kwargs", [{"n_players": 2}, {"n_players": 3, "goal": 40}, {"n_players": 5, "faces": 3}])
def test_the_pettingzoo_env_passes_api_and_seed_tests(kwargs):
    api_test(games.aec_env("pig", **kwargs), num_cycles=200)
    seed_test(lambda: games.aec_env("pig", **kwargs), num_cycles=50)


def test_a_person_plays_in_the_terminal_through_the_view():
    out = io.StringIO()
    lines = iter(["x", "legal", "r", "b"] + ["b"] * 500)
    rc = main(
        ["pig", "--opponent", "hold20", "--seat", "1", "--seed", "5", "--goal", "30"],
        input_fn=lambda prompt: next(lines),
        out=out,
    )
    text = out.getvalue()
    assert rc == 0
    assert "Pig with 2 players: you are Player 1." in text
    assert 'I could not read \'x\': type "r" to roll or "b" to bank' in text
    assert 'Your moves: "r" (roll) or "b" (bank your turn total of' in text
    assert re.search(r"Player \d \((you|hold20)\) reaches \d+ and wins\.", text)
    assert all(len(line) <= 80 for line in text.splitlines())


@pytest.mark.slow
def test_evaluate_exact_gives_the_solver_figures(capsys):
    assert main(["evaluate", "pig", "--agent", "hold20", "--exact"]) == 0
    text = capsys.readouterr().out
    assert re.search(r"^  optimal\s+0\.530593\s+0\.469407\s+0\.0000\s+0\.0000$", text, re.M)
    first, second = solver.win_probabilities(solver.policy_table(Hold20Agent()), solver.solve().policy)
    assert re.search(rf"^  hold20\s+{first:.6f}\s+{second:.6f}", text, re.M)
    assert "exploitable by 5.4875 pp" in text


def test_evaluate_simulated_and_a_game_without_a_table_evaluator_say_so(capsys):
    assert main(["evaluate", "pig", "--agent", "optimal", "--games", "20", "--seed", "1"]) == 0
    assert "pig, simulated: each agent against each bot (random, hold20, optimal)" in capsys.readouterr().out
    assert main(["evaluate", "pig", "--agent", "hold20", "--players", "3", "--exact"]) == 2
    err = capsys.readouterr().err
    assert "pig offers no exact evaluation at a table of 3 players" in err and "Traceback" not in err


@pytest.mark.slow
def test_tournament_gives_exact_heads_up_figures(capsys):
    assert main(["tournament", "pig", "--agents", "hold20,optimal", "--games", "10", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    exact = solver.win_probabilities(solver.policy_table(Hold20Agent()), solver.solve().policy)
    assert re.search(rf"^hold20 .* {100 * np.mean(exact):.4f}%$", text, re.M)


def test_numpy_player_counts_and_bad_options_get_one_line_everywhere(capsys):
    assert games.aec_env("pig", n_players=np.int64(3)).unwrapped.n_players == 3
    assert gym.make("Pig-v0", n_players=np.int64(3)).unwrapped.n_players == 3
    # the solver takes goals up to 200: a bigger one is one line, not a traceback
    assert main(["evaluate", "pig", "--agent", "hold20", "--exact", "--goal", "300"]) == 2
    err = capsys.readouterr().err
    assert "exact evaluation failed" in err and "Traceback" not in err
    # the optimal bot is solved for goal 100: at another goal it says so instead of playing wrong
    assert main(["match", "pig", "--agent", "optimal", "--opponent", "hold20", "--goal", "50", "--games", "2"]) == 2
    err = capsys.readouterr().err
    assert "solved for goal 100 with 6 faces, not goal 50" in err and "Traceback" not in err
