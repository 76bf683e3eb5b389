"""The terminal harness for 421: interactive game (2 and 3 players), matches, evaluation."""

from __future__ import annotations

import io
import re

import numpy as np
import pytest

import agents
from agents import make_agent
from helpers import BOT_NAMES_421
from games.dice421 import game as g
from core.dice import RandomDice, ScriptedDice
from play import match as matches
from play.__main__ import main
from games.dice421 import view as view421
from games.dice421.view import legal_moves_text
from play.terminal import ScriptedInput, play_terminal, read_command


def rolls(spec: str) -> list[int]:
    """'211 551 6' -> [2, 1, 1, 5, 5, 1, 6]: die values in the order rolled."""
    return [int(c) for c in spec if c.isdigit()]


# The rules' worked example (games/dice421/rules.md): 2 players, pot 5, P1 (seat 0) plays first.
CHARGE = "211 551  643 541  621 621 642 632  642 113"  # P1 ends with 2 tokens, P2 with 3; P1 leads
WORKED = CHARGE + "  541 6 4  111 41 1"  # with greedy421 as P2: it keeps one 1, then 4-1


class ScriptedAgent:
    """A bot that plays a fixed list of engine actions (and checks they are legal)."""

    name = "scripted"

    def __init__(self, actions):
        self.actions = list(actions)

    def act(self, obs, mask):
        action = self.actions.pop(0)
        assert mask[action]
        return action


def flat(text: str) -> str:
    """The text with every line break and run of spaces as one space: sentences the
    terminal wraps to fit 80 columns read as one line again."""
    return " ".join(text.split())


def parse_command(text, hand):
    """A line typed at the person's turn with ``hand``, read as the terminal reads it."""
    return read_command(text, lambda line: view421.read(line, hand))


def session(dice, lines, seat=0, opponents=("greedy421",), pot=5, seats=(0,), games=1):
    out = io.StringIO()
    bots = [make_agent("421", o) if isinstance(o, str) else o for o in opponents]
    names = [o if isinstance(o, str) else o.name for o in opponents]
    rc = play_terminal(
        "421",
        bots,
        ScriptedDice(rolls(dice) if isinstance(dice, str) else dice, seats=seats),
        opponent_names=names,
        seat=seat,
        pot=pot,
        games=games,
        input_fn=ScriptedInput(lines, out),
        out=out,
    )
    return rc, out.getvalue()


def _fails_for_ppo(monkeypatch):
    """make_agent as it is, except that the trained bot never loads (tests use only the bots)."""
    real = agents.make_agent

    def fake(game, name, seed=None):
        if name.startswith("ppo-"):
            raise ValueError(f"no checkpoint at checkpoints/{name}.pt")
        return real(game, name, seed)

    monkeypatch.setattr(agents, "make_agent", fake)


# --- interactive game -----------------------------------------------------------------
def test_worked_example_bad_inputs_are_explained_and_the_game_plays_to_the_end():
    bad = ["x", "7", "3", "5 5", "1 1 1 1", "keep 5 4 1", "keep 6", ""]
    rc, text = session(WORKED, [*bad, "5", "keep 4 1"])
    assert rc == 0
    # the charge, with its RAMPO, is narrated roll by roll with the pot and tokens
    assert "Charge round 1 (order P1, P2):\n  P1 (you) rolls 2-1-1\n  P2 (greedy421) rolls 5-5-1" in text
    assert (
        "P2 (greedy421) has the lowest hand and takes 2 tokens from the pot (the highest hand, 2-1-1, is worth 2)"
        in flat(text)
    )
    assert "Tokens: P1 (you) 0, P2 2 | pot 3" in text
    assert "Tie for the lowest hand -> RAMPO, one roll each: P2 (greedy421), P1 (you)" in text
    assert "RAMPO: P2 (greedy421) rolls 6-4-2\n    RAMPO: P1 (you) rolls 6-3-2" in text
    assert "P1 (you) loses the RAMPO and takes 1 token from the pot" in text
    assert "is worth 3; only 1 left" in text and "Tokens: P1 (you) 2, P2 3 | pot 0" in text
    # the decision shows the dice, rolls, that nothing is played yet, and the tokens
    assert "Your turn, P1 (you): you lead this round, roll 1 of at most 3" in text
    assert "  your dice:    5-4-1\n  played:       nothing yet this round\n  Tokens: P1 (you) 2, P2 3" in text
    prompts = re.findall(r"Your dice 5-4-1 \(roll 1 of 3\)\. Stop, or reroll which dice\?", text)
    assert len(prompts) == len(bad) + 1  # one re-prompt per bad input
    assert '"s" stops' in text and '"6 5", "65", "all", or "keep 4 2"' in text
    assert text.count('"s" stops') == 1  # the long hint, on its own line, only before the first question
    assert "could not read 'x'" in text
    assert "7 is not a die value" in text
    assert "cannot reroll 3: your dice are 5-4-1" in flat(text)
    assert "cannot reroll 5: your dice are 5-4-1" in flat(text)  # only one 5 to reroll
    assert "only 3 dice" in flat(text)
    assert "you must reroll at least one die (H4)" in flat(text)
    assert "cannot keep 6: your dice 5-4-1 do not hold those values" in flat(text)
    assert flat(text).count('type "stop", the values of the dice to reroll') >= 2  # "x" and the empty line
    # the moves: the person's, then every roll of the bot, the exchange and the end
    assert "P1 (you) roll 2: kept 4-1, rolled 6 -> 6-4-1" in text
    assert "P1 (you) roll 3: kept 4-1, rolled 4 -> 4-4-1" in text
    assert "P1 (you) plays 4-4-1 after all 3 rolls: the others must make exactly 3 rolls." in text
    assert "P2 (greedy421) roll 1: 1-1-1" in text
    assert "P2 (greedy421) roll 2: kept 1, rolled 4-1 -> 4-1-1" in text
    assert "P2 (greedy421) roll 3: kept 4-1, rolled 1 -> 4-1-1" in text
    assert (
        "highest hand 4-1-1 (worth 4) by P2 (greedy421), lowest 4-4-1 by P1 (you): "
        "P2 gives P1 3 tokens (all it held; 4 due)"
    ) in flat(text)
    assert "Tokens: P1 (you) 5, P2 0" in text
    assert "P2 (greedy421) has no tokens left and leaves the game, a winner." in text
    assert text.rstrip().endswith("Game over: P1 (you) holds all 5 tokens and loses the game. You lose.")


def test_a_follower_cannot_stop_and_must_make_the_leaders_number_of_rolls():
    # P1 is a scripted bot (keeps 4-1 twice, as in the worked example); you are P2 and replay a 1, then the 4.
    leader = ScriptedAgent([g.action_for_keep((4, 1)), g.action_for_keep((4, 1))])
    rc, text = session(CHARGE + " 541 6 4  111 4 4", ["s", "stop", "1", "4"], seat=1, opponents=(leader,))
    assert rc == 0
    assert "P1 (scripted) roll 2: kept 4-1, rolled 6 -> 6-4-1" in text
    assert (
        "Your turn, P2 (you): roll 1 of 3. The leader P1 (scripted) made 3 rolls, "
        "so you must make exactly 3 (no stopping)."
    ) in flat(text)
    assert "played:       P1 (scripted) 4-4-1 (leader, 3 rolls)" in text  # the leader's hand and roll count
    assert (
        flat(text).count(
            "Not a legal move: you cannot stop: the leader P1 (scripted) made 3 rolls, "
            "so you must make exactly 3 and this is roll 1 (H4)"
        )
        == 2
    )
    assert len(re.findall(r"Your dice 1-1-1 \(roll 1 of 3\)\. Reroll which dice\?", text)) == 3
    assert "P2 (you) roll 2: kept 1-1, rolled 4 -> 4-1-1" in text
    assert "P2 (you) roll 3: kept 1-1, rolled 4 -> 4-1-1" in text
    assert "P2 (you) has no tokens left: you are out of the game, a winner!" in text
    assert "Game over: P1 (scripted) holds all 5 tokens and loses the game. You win!" in text


def test_the_leader_stops_the_followers_roll_is_played_then_end_of_input_exits_cleanly():
    # You lead with 5-4-1 and stop: P2 owes one roll, played for it (6-5-3); 5-4-1 is lowest, P2 gives 1.
    rc, text = session(CHARGE + " 541 653  222", ["s"])
    assert rc == 0
    assert "P1 (you) stops after 1 roll with 5-4-1: the others must make exactly 1 roll." in text
    assert "P2 (greedy421) roll 1: 6-5-3\n  P2 (greedy421) plays 6-5-3." in text
    assert "P2 gives P1 1 token." in text and "Tokens: P1 (you) 3, P2 2" in text
    assert "Discharge round 2: P1 (you) leads" in text  # who received leads (H7)
    assert "Your dice 2-2-2 (roll 1 of 3)" in text
    assert "End of input: game abandoned" in text
    assert "Game over" not in text


@pytest.mark.parametrize("typed", ["6 5", "65", "6,5", "5 6", "6-5", "keep 1", "k1", "reroll 65", " 6 5 "])
def test_input_forms_all_mean_the_same_move(typed):
    assert parse_command(typed, (6, 5, 1)).action == g.action_for_keep((1,))


def test_commands_and_rejected_moves():
    hand = (6, 5, 1)
    assert parse_command("s", hand).action == g.STOP and parse_command("STOP", hand).action == g.STOP
    for typed in ("all", "a", "651", "keep", "reroll all"):
        assert parse_command(typed, hand).action == g.action_for_keep(())
    assert parse_command("6 6", (6, 6, 2)).action == g.action_for_keep((2,))
    assert [parse_command(w, hand).kind for w in ("?", "legal", "q", "quit")] == ["help", "legal", "quit", "quit"]
    for bad in ("6 6", "keep 6 5 1", "1 1 1 1", "keep 2"):
        with pytest.raises(g.IllegalAction):
            parse_command(bad, hand)
    for bad in ("x", "0", "", "6 x"):
        with pytest.raises(ValueError):
            parse_command(bad, hand)
    leader_moves = legal_moves_text(hand, [g.STOP, *g._KEEP_ACTIONS_FOR[hand]])
    assert 'type "stop"' in leader_moves and 'type "all"' in leader_moves
    assert re.search(r'type "6 5"\s+keep 1, reroll 6-5', leader_moves)
    assert len(leader_moves.splitlines()) == 1 + 1 + 7  # header, stop, 7 keeps of three different values


def test_help_and_legal_at_the_prompt_then_quit():
    rc, text = session(WORKED, ["?", "legal", "q"])
    assert rc == 0
    assert "RAMPO" in text and "4-2-1 (10)" in text and '"keep 4 2"' in text  # the help
    block = text.split("Legal moves with 5-4-1:")[1]
    assert 'type "stop"' in block and re.search(r'type "5"\s+keep 4-1, reroll 5\n', block)
    assert "You quit: game abandoned" in text


def test_ctrl_c_exits_cleanly():
    def interrupt(prompt):
        raise KeyboardInterrupt

    out = io.StringIO()
    rc = play_terminal(
        "421",
        [make_agent("421", "greedy421")],
        ScriptedDice(rolls(WORKED), seats=[0]),
        seat=0,
        pot=5,
        input_fn=interrupt,
        out=out,
    )
    assert rc == 0 and "Interrupted" in out.getvalue()


def test_three_player_session_through_the_cli_plays_to_the_end_and_replays():
    def run(*opponents):
        out = io.StringIO()
        argv = [
            "421",
            "--players",
            "3",
            *sum((["--opponent", o] for o in opponents), []),
            "--pot",
            "6",
            "--seed",
            "5",
            "--games",
            "2",
        ]
        rc = main(argv, input_fn=lambda prompt: "all", out=out)
        return rc, out.getvalue()

    rc, text = run("heuristic", "cautious")
    assert rc == 0
    assert len(re.findall(r"^421: 3 players \(P\d \(\w+\), P\d \(\w+\), P\d \(\w+\)\), pot 6\.", text, re.M)) == 2
    assert "(heuristic)" in text and "(cautious)" in text
    assert (
        len(
            re.findall(
                r"^Game over: P\d \(\w+\) holds all 6 tokens and loses the game\. You (win!|lose\.)$", text, re.M
            )
        )
        == 2
    )
    assert "Score after 2 games: you won " in text
    assert re.search(r"Charge round 1 \(order P\d, P\d, P\d\):", text)
    assert run("heuristic", "cautious") == (rc, text)  # same seed, same input: same session
    rc, text = run("greedy421")  # one name: both opponents
    assert rc == 0 and text.count("(greedy421)") > 2 and "(heuristic)" not in text


def test_seat_and_opponent_options_are_checked(capsys):
    assert main(["421", "--seat", "3", "--opponent", "random"]) == 2
    assert "with 2 players the seats are 1..2" in capsys.readouterr().err
    assert main(["421", "--opponent", "random", "--opponent", "random"]) == 2
    assert "use --players 3" in capsys.readouterr().err
    assert main(["421", "--seat", "0"]) == 2
    assert "usage:" in capsys.readouterr().err
    out = io.StringIO()
    assert main(["421", "--opponent", "greedy421", "--seat", "2", "--seed", "1"], input_fn=lambda p: "q", out=out) == 0
    assert "P2 (you)" in out.getvalue() and "You quit" in out.getvalue()


def test_default_opponent_that_cannot_load_gives_a_clear_message(monkeypatch, capsys):
    _fails_for_ppo(monkeypatch)
    rc = main(["421", "--seed", "1"], input_fn=lambda p: "q")
    err = capsys.readouterr().err
    assert rc == 2
    assert "could not load the trained bot 'ppo-421'" in err and "--opponent heuristic" in err
    assert "Traceback" not in err


# --- agents -----------------------------------------------------------------------------
def test_make_agent_knows_the_421_bots():
    import games

    assert "421" in games.names() and games.get("421").shipped == "ppo-421"
    names = agents.agent_names("421")
    assert names[: len(BOT_NAMES_421)] == BOT_NAMES_421 and names[-2:] == ("ppo-421", "ppo-421-3p")
    assert "optimal" in names and games.get("421").bots_for(3) == (*BOT_NAMES_421, "exact3")
    assert games.get("421").bots_for(2) == (*BOT_NAMES_421, "optimal")
    for name in names[:-2]:
        assert hasattr(make_agent("421", name, seed=1), "act")
    with pytest.raises(ValueError, match="unknown agent 'nosuchbot' for 421: not one of random, heuristic"):
        make_agent("421", "nosuchbot")
    assert agents.agent_names("420") == ("random", "greedy", "foundation", "optimal", "ppo-420")


# --- match ------------------------------------------------------------------------------
ROW = re.compile(r"^(\S.*?)?\s+(overall|as P\d)\s+([\d.]+)% \[\s*([\d.]+)%,\s*([\d.]+)%\]\s+\((\d+)/(\d+)\)$")


def _parse_match(text):
    """{(player, 'overall'|'as P1'|...): (rate %, lo %, hi %, wins, games)}."""
    rows, player = {}, None
    for line in text.splitlines():
        m = ROW.match(line)
        if m:
            player = (m.group(1) or player).strip()
            rows[(player, m.group(2))] = tuple(float(x) for x in m.groups()[2:5]) + (int(m.group(6)), int(m.group(7)))
    return rows


def _check_rows(rows):
    for (_, _), (rate, lo, hi, wins, games) in rows.items():
        assert lo <= rate <= hi and 0 <= lo and hi <= 100
        exp_lo, exp_hi = matches.wilson_interval(wins, games)
        assert (lo, hi) == pytest.approx((100 * exp_lo, 100 * exp_hi), abs=0.006)
        assert rate == pytest.approx(100 * wins / games, abs=0.006)


def test_two_player_match_prints_rates_and_intervals_reproducibly(capsys):
    argv = ["match", "421", "--agent", "heuristic", "--opponent", "random", "--games", "40", "--seed", "3"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert text.startswith("421 match: heuristic vs random, 40 games, 2 players, pot 15, seed 3")
    assert "A win is not losing" in text
    rows = _parse_match(text)
    assert len(rows) == 6
    _check_rows(rows)
    for (_player, where), row in rows.items():
        assert row[4] == (40 if where == "overall" else 20)
    assert rows[("heuristic", "overall")][3] + rows[("random", "overall")][3] == 40  # one loser a game
    assert rows[("heuristic", "as P1")][3] + rows[("random", "as P2")][3] == 20
    assert rows[("heuristic", "overall")][0] > 50
    assert main(argv) == 0
    assert capsys.readouterr().out == text


def test_three_player_match_rotates_every_order(capsys):
    argv = [
        "match",
        "421",
        "--agent",
        "heuristic",
        "--opponent",
        "greedy421",
        "--opponent2",
        "random",
        "--games",
        "12",
        "--pot",
        "6",
        "--seed",
        "2",
    ]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "heuristic vs greedy421 vs random, 12 games, 3 players, pot 6" in text
    assert "seats rotate through all 6 orders" in text
    rows = _parse_match(text)
    assert len(rows) == 12
    _check_rows(rows)
    assert all(row[4] == (12 if where == "overall" else 4) for (_, where), row in rows.items())
    assert sum(rows[(p, "overall")][3] for p in ("heuristic", "greedy421", "random")) == 2 * 12  # two winners a game
    # --players 3 without --opponent2: the opponent takes both other seats, told apart
    assert (
        main(
            [
                "match",
                "421",
                "--agent",
                "heuristic",
                "--opponent",
                "random",
                "--players",
                "3",
                "--games",
                "6",
                "--seed",
                "2",
            ]
        )
        == 0
    )
    rows = _parse_match(capsys.readouterr().out)
    assert {p for p, _ in rows} == {"heuristic", "random (B)", "random (C)"}


def test_play_match_n_with_random_bots_replays_and_counts_seats():
    def run(seed):
        bots = [make_agent("421", "random", 1), make_agent("421", "random", 2), make_agent("421", "random", 3)]
        return matches.play_match_n("421", bots, 18, seed=seed)

    a, b = run(9), run(9)
    assert np.array_equal(a.wins, b.wins)
    assert a.games.tolist() == [[6, 6, 6]] * 3
    assert a.wins.sum() == 2 * 18
    calls = []
    matches.play_match_n(
        "421",
        [make_agent("421", "random", 1), make_agent("421", "greedy421")],
        4,
        seed=1,
        progress=lambda done, total: calls.append((done, total)),
    )
    assert calls == [(1, 4), (2, 4), (3, 4), (4, 4)]


def test_the_421_runner_seats_the_first_player_and_returns_all_but_the_loser():
    keep41, keep11 = g.action_for_keep((4, 1)), g.action_for_keep((1, 1))
    worked_example = [ScriptedAgent([keep41, keep41]), ScriptedAgent([keep11, keep11])]
    dice = ScriptedDice(rolls(CHARGE + " 541 6 4  111 4 4"))  # no seat to draw: seat 0 starts
    assert matches.play_game("421", worked_example, dice, pot=5) == {1}  # the worked example: P1 (seat 0) loses
    assert dice.remaining == ()
    bots = [make_agent("421", "greedy421"), make_agent("421", "heuristic")]
    for seed in range(5):
        game_winners = matches.play_game("421", bots + [make_agent("421", "random", seed)], RandomDice(seed), pot=4)
        assert len(game_winners) == 2 and game_winners <= {0, 1, 2}


@pytest.mark.parametrize(
    "argv,message",
    [
        (["match", "420", "--agent", "greedy", "--opponent", "random", "--pot", "5"], "420 has no option pot"),
        (
            ["match", "421", "--agent", "random", "--opponent", "random", "--players", "2", "--opponent2", "random"],
            "--opponent2 needs --players 3",
        ),
    ],
)
def test_match_options_are_checked(argv, message, capsys):
    assert main(argv) == 2
    assert message in capsys.readouterr().err


# --- evaluate ---------------------------------------------------------------------------
def test_evaluate_by_simulation_against_every_bot(capsys):
    assert main(["evaluate", "421", "--agent", "heuristic", "--games", "10", "--seed", "1"]) == 0
    text = capsys.readouterr().out
    assert "heuristic: win rate [95% Wilson CI] (wins/games) against each opponent" in text
    lines = text.splitlines()
    for bot in BOT_NAMES_421:
        start = next(i for i, l in enumerate(lines) if l.startswith(bot + " "))
        block = lines[start : start + 3]  # its rows: overall, then as P1 (moving first), as P2
        assert [re.search(r"(overall|as P1|as P2)", l).group(1) for l in block] == ["overall", "as P1", "as P2"]
        cells = [re.search(r"([\d.]+)% \[\s*([\d.]+)%,\s*([\d.]+)%\]\s+\((\d+)/(\d+)\)", l).groups() for l in block]
        assert [int(c[4]) for c in cells] == [10, 5, 5]  # overall, moving first, moving second
        assert int(cells[0][3]) == int(cells[1][3]) + int(cells[2][3])


@pytest.mark.slow
def test_evaluate_exact_prints_the_solver_figures_and_the_best_reply():
    from games.dice421 import solver as solver421

    out = io.StringIO()
    assert main(["evaluate", "421", "--agent", "random", "--exact"], out=out) == 0
    line = next(l for l in out.getvalue().splitlines() if l.startswith("random "))
    p, gap, vs_reply = (float(x) for x in line.split()[1:4])
    table = agents.bot_table("421", "random", pot=15)
    assert p == pytest.approx(solver421.evaluate(table, agents.bot_table("421", "optimal", pot=15)), abs=1e-6)
    assert gap == pytest.approx(100 * (p - 0.5), abs=1e-4)
    assert 0.0 < vs_reply <= p + 1e-9 < 0.5  # a best reply wins at least as much as the optimal bot does


def test_evaluate_explain_breaks_the_exact_gap_down(capsys):
    from games.dice421 import explain as explain421
    from games.dice421 import solver as solver421

    out = io.StringIO()
    assert main(["evaluate", "421", "--agent", "heuristic", "--exact", "--explain", "3", "--pot", "6"], out=out) == 0
    text = out.getvalue()
    b = explain421.explain(solver421.policy_table(make_agent("421", "heuristic"), 6))
    assert "\n".join(explain421.format_breakdown(b, 3)) in text
    assert f"gap {100 * b.gap:.4f} pp" in text and text.count(" pp  reach ") == 3
    assert all(len(line) <= 80 for line in text.splitlines())
    for argv, words in (
        (
            ["420", "--agent", "optimal", "--exact", "--explain", "--players", "3"],
            "--explain needs --exact and two players",
        ),
        (["421", "--agent", "heuristic", "--explain"], "--explain needs --exact"),
        (
            ["421", "--agent", "heuristic", "--exact", "--explain", "--players", "3"],
            "--explain needs --exact and two players",
        ),
        (["421", "--agent", "heuristic", "--exact", "--explain", "0"], ""),
    ):
        assert main(["evaluate", *argv]) == 2
        assert words in capsys.readouterr().err


def test_the_optimal_bot_is_refused_for_three_players(capsys):
    assert main(["match", "421", "--agent", "optimal", "--opponent", "random", "--players", "3"]) == 2
    assert "two players only" in capsys.readouterr().err
    assert main(["421", "--players", "3", "--opponent", "random", "--opponent", "optimal"]) == 2
    assert "two players only" in capsys.readouterr().err


# --- CLI plumbing -----------------------------------------------------------------------
@pytest.mark.parametrize("argv", [["421"], ["match"], ["evaluate"]])
def test_help(argv, capsys):
    assert main([*argv, "--help"]) == 0
    text = capsys.readouterr().out
    assert "usage: python -m play" in text
    if argv == ["421"]:
        assert "--players" in text and "--opponent" in text and "--pot" in text and "--seat" in text
    if argv == ["match"]:
        assert "--opponent2" in text


@pytest.mark.parametrize(
    "argv",
    [
        ["421", "--opponent", "nosuchbot"],
        ["421", "--players", "3", "--opponent", "random", "--opponent", "nosuchbot"],
        ["match", "421", "--agent", "nosuchbot", "--opponent", "random", "--games", "10"],
        ["match", "421", "--agent", "random", "--opponent", "random", "--opponent2", "nosuchbot"],
        ["evaluate", "421", "--agent", "nosuchbot"],
    ],
)
def test_unknown_agent_is_a_clear_error(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "unknown agent 'nosuchbot' for 421" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""
