"""The non-blocking session a front-end drives, and multiplayer 420 in the terminal (R7)."""

from __future__ import annotations

import io

import pytest

import agents
from games.dice420 import game as g
from core.dice import RandomDice, ScriptedDice
from core.engine import IllegalAction
from play.terminal import ScriptedInput, play_terminal
from play.session import Session

# Three players, Player 1 drawn = seat 1 (the person is seat 0).
# Round 1: seat 1 rolls 2-1-1-1, seat 2 rolls 5-5-5-5 = 20 and drops out.
# Round 2 starts at the next remaining seat clockwise from seat 1: seat 0. Seat 0 rolls 6-6-5-1,
# seat 1 rolls 3-2-1-1, seat 0 keeps 6-6 and rolls 5-3 = 20: seat 1 is left and loses.
R7_DICE = [2, 1, 1, 1, 5, 5, 5, 5, 1, 5, 6, 6, 1, 1, 2, 3, 3, 5]


def test_a_session_waits_for_the_person_and_plays_the_bots_in_between():
    bots = [agents.make_agent("420", "greedy"), agents.make_agent("420", "greedy")]
    session = Session("420", bots, 0, ScriptedDice(R7_DICE, seats=[1]))
    lines = session.read()
    assert any("Player 3 (greedy) made 20 and is out, place 1" in line for line in lines)
    assert any(line == "New round among Player 1, Player 2; Player 1 (you) starts." for line in lines)
    assert session.waiting and session.state()["to_move"] == 0
    assert session.game.hands[0] == (6, 6, 5, 1) and session.read() == []  # nothing new until a move
    assert session.outcome() is None
    before = list(session.game.events)
    with pytest.raises(IllegalAction, match="does not hold"):
        session.submit(g.KEEP_INDEX[(6, 6, 6)])
    with pytest.raises(IllegalAction, match="integer"):
        session.submit("1")
    assert session.game.events == before and session.waiting  # a refused move changes nothing
    session.submit(g.KEEP_INDEX[(6, 6)])
    lines = session.read()
    assert "Player 1 (you) kept 6-6, rolled 5-3 -> 6-6-5-3 (20)  = 20!" in lines
    assert lines[-1] == "Player 2 (greedy) is the last player left and loses. You do not lose: you win!"
    assert session.over and session.outcome() == 1.0 and not session.waiting
    assert session.state()["returns"] == [1.0, -1.0, 1.0]
    with pytest.raises(IllegalAction, match="over"):
        session.submit(0)


def test_a_session_returns_only_at_the_persons_turn_and_refuses_bad_seats():
    bots = [agents.make_agent("421", "heuristic")]
    for seed in range(20):
        session = Session("421", bots, 1, RandomDice(seed), pot=3)
        assert session.waiting or session.over
        assert session.over == (session.outcome() is not None and session.game.is_over)
    with pytest.raises(ValueError, match="seat"):
        Session("421", bots, 2, RandomDice(1))
    with pytest.raises(ValueError, match="played by"):
        Session("421", bots * 3, 0, RandomDice(1))


def test_sessions_of_both_games_play_to_the_end_with_random_moves():
    import numpy as np

    rng = np.random.default_rng(0)
    for game, n, options in (("420", 2, {}), ("420", 5, {}), ("421", 2, {"pot": 6}), ("421", 3, {})):
        for seed in range(5):
            bots = [agents.make_agent(game, "random", seed=seed + i) for i in range(n - 1)]
            session = Session(game, bots, seed % n, RandomDice(seed), **options)
            while not session.over:
                assert session.waiting and session.legal_actions()
                session.submit(int(rng.choice(session.legal_actions())))
                assert session.read() or session.waiting or session.over
            assert session.outcome() in (1.0, -1.0)


def test_terminal_420_with_three_players_follows_r7():
    out = io.StringIO()
    bots = [agents.make_agent("420", "greedy"), agents.make_agent("420", "foundation")]
    rc = play_terminal(
        "420", bots, ScriptedDice(R7_DICE, seats=[1]), seat=0, input_fn=ScriptedInput(["1 5"], out), out=out
    )
    text = out.getvalue()
    assert rc == 0
    assert text.startswith("420 with 3 players: you are Player 1.")
    assert "Player 2 (greedy) starts the first round (drawn at random)." in text
    assert "Player 3 (foundation) rolls all four (first turn, R1) -> 5-5-5-5 (20)  = 20!" in text
    assert "Player 3 (foundation) made 20 and is out, place 1; 2 players left." in text
    assert "New round among Player 1, Player 2; Player 1 (you) starts." in text
    assert text.count("Reroll which dice?") == 1
    assert "Player 2 (greedy) is the last player left and loses. You do not lose: you win!" in text


def test_cli_plays_420_with_n_players(capsys):
    from play.__main__ import main

    answers = ScriptedInput(["all"] * 200)
    assert main(["420", "--players", "4", "--opponent", "greedy", "--seed", "3", "--seat", "2"], input_fn=answers) == 0
    text = capsys.readouterr().out
    assert "420 with 4 players: you are Player 2." in text
    assert text.count("made 20 and is out") + text.count("is the last player left") >= 2
    assert main(["420", "--players", "3", "--seat", "red"]) == 2
    assert "the seats are 1..3 (Player 1, Player 2, Player 3)" in capsys.readouterr().err
    assert main(["420", "--players", "9"]) == 2


def test_matches_of_many_players_give_each_player_each_seat_equally_often():
    from play import match as matches

    for n in (5, 8):
        bots = [agents.make_agent("420", "random", seed=i) for i in range(n)]
        result = matches.play_match_n("420", bots, 2 * n, seed=1)
        assert result.games.tolist() == [[2] * n] * n
    assert len(matches.seatings(4)) == 24 and len(matches.seatings(8)) == 8
