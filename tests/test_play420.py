"""The terminal harness for 420: interactive game, matches, exact evaluation, export."""

from __future__ import annotations

import csv
import io
import math
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
from agents import make_agent
from games.dice420 import solver as solver420
from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import ScriptedDice
from games.dice420 import evaluate as evaluate420
from games.dice420 import export as export420
from play import match as matches
from play.__main__ import main
from games.dice420 import view as view420
from play.terminal import ScriptedInput, play_terminal, read_command

ROOT = Path(__file__).resolve().parent.parent


def flat(text: str) -> str:
    """The text with every line break and run of spaces as one space: sentences the
    terminal wraps to fit 80 columns read as one line again."""
    return " ".join(text.split())


def parse_command(text, hand):
    """A line typed at the person's turn with ``hand``, read as the terminal reads it."""
    return read_command(text, lambda line: view420.read(line, hand))


def session(dice, lines, seat="red", opponent="greedy", games=1):
    out = io.StringIO()
    rc = play_terminal(
        "420",
        make_agent("420", opponent),
        ScriptedDice(dice),
        opponent_names=opponent,
        seat=seat,
        games=games,
        input_fn=ScriptedInput(lines, out),
        out=out,
    )
    return rc, out.getvalue()


def _fails_for_ppo(monkeypatch):
    """make_agent as it is, except that the trained bot never loads (tests use only the bots)."""
    real = agents.make_agent

    def fake(game, name, seed=None):
        if name == "ppo-420":
            raise ValueError("no checkpoint at checkpoints/ppo-420.pt")
        return real(game, name, seed)

    monkeypatch.setattr(agents, "make_agent", fake)


# --- interactive game -----------------------------------------------------------------
def test_bad_inputs_are_explained_and_asked_again_then_a_legal_move_wins():
    # Red (you) 1-5-6-6, Blue 1-1-2-3; you reroll 1-5 (keep 6-6) and roll 3-5 -> 3-5-6-6 = 20.
    bad = ["x", "7", "1 1 1 1 1", "2", "6", ""]
    rc, text = session([1, 5, 6, 6, 1, 1, 2, 3, 3, 5], [*bad, "1 5"])
    assert rc == 0
    prompts = re.findall(r"Your hand 6-6-5-1 \(18\)\. Reroll which dice\?", text)
    assert len(prompts) == len(bad) + 1  # one re-prompt per bad input, nothing lost
    assert '"1 5", "1,5", "15", "all"' in text and '"?" for help' in text
    assert "could not read 'x'" in text
    assert "7 is not a die value" in text
    assert "only 4 dice" in text
    assert "cannot reroll 2: the hand 6-6-5-1 does not hold those dice" in flat(text)
    assert "cannot keep 6-5-1 and reroll 6" in flat(text) and "(R3)" in text
    assert "Red (you) kept 6-6, rolled 5-3 -> 6-6-5-3 (20)" in text
    assert "Red (you) made 20: you win!" in text
    # both hands are shown, with totals, before the person moves
    assert re.search(r"Red \(you\)\s+6-6-5-1 \(18\)\n\s+Blue \(greedy\)\s+3-2-1-1 \(7\)", text)


@pytest.mark.parametrize("typed", ["1 5", "1,5", "15", "5 1", "1-5", "keep 6 6", "k66", "reroll 15"])
def test_input_forms_all_mean_the_same_move(typed):
    assert parse_command(typed, (1, 5, 6, 6)).action == g.KEEP_INDEX[(6, 6)]


def test_all_help_and_legal_commands():
    hand = (1, 5, 6, 6)
    assert parse_command("all", hand).action == g.REROLL_ALL
    assert parse_command(" ? ", hand).kind == "help"
    assert parse_command("legal", hand).kind == "legal"
    assert parse_command("Q", hand).kind == "quit"
    with pytest.raises(g.IllegalAction, match="R3"):
        parse_command("5 6 6", hand)  # keep the 1: rerolling 3 needs a kept 5 or 6
    rc, text = session([1, 5, 6, 6, 1, 1, 2, 3, 3, 5, 1, 1, 1, 1, 1, 1], ["?", "legal", "all"])
    assert rc == 0
    assert "reroll 3 dice only if the die you keep is 5 or 6" in text
    legal_block = text.split("Legal moves with 6-6-5-1 (18):")[1]
    for a in g.legal_keeps((1, 5, 6, 6)):
        assert g.describe_action(a, (1, 5, 6, 6)) in legal_block
    assert "Red (you) rerolled all four, rolled 5-3-1-1 -> 5-3-1-1 (10)" in text


def test_forced_turns_are_played_with_the_reason():
    # You 1-5-6-6 -> keep 6-6, roll 6-6 -> 24; Blue's 1-1-2-3 has nothing to keep (R3);
    # your 6-6-6-6 is over 20 (R4) and rerolls all four: 5-5-5-5 = 20.
    dice = [1, 5, 6, 6, 1, 1, 2, 3, 6, 6, 1, 1, 1, 1, 5, 5, 5, 5]
    rc, text = session(dice, ["15"])
    assert rc == 0
    assert "Red (you) rolls all four (first turn, R1) -> 6-6-5-1 (18)" in text
    assert "Blue (greedy): nothing in 3-2-1-1 (7) may be kept (R3), rerolls all four -> 1-1-1-1 (4)" in flat(text)
    assert "Red (you): 6-6-6-6 (24) is over 20, rerolls all four (R4) -> 5-5-5-5 (20)  = 20!" in text
    assert text.count("Reroll which dice?") == 1  # forced turns never ask
    assert "you win!" in text


def test_the_opponents_move_is_shown():
    # Red is the bot (greedy): 1-5-6-6 vs your 2-3-4-6; then you hit end of input.
    red, blue = (1, 5, 6, 6), (2, 3, 4, 6)
    action = make_agent("420", "greedy").act(codec420.encode(red, blue), codec420.action_mask(red))
    rerolled = len(g.reroll_of(red, action))
    rolled = [2, 2, 2, 2][:rerolled]
    new = g.canonical((*g.KEEPS[action], *rolled))
    rc, text = session([*red, *blue, *rolled], [], seat="blue")
    kept = g.format_hand(g.KEEPS[action]) if g.KEEPS[action] else None
    line = (
        f"Red (greedy) kept {kept}, rolled {g.format_hand(rolled)} -> {g.format_hand(new)} ({sum(new)})"
        if kept
        else f"Red (greedy) rerolled all four, rolled {g.format_hand(rolled)}"
    )
    assert line in text
    assert "Your hand 6-4-3-2 (15)" in text


def test_end_of_input_mid_game_exits_cleanly():
    rc, text = session([1, 5, 6, 6, 1, 1, 2, 3], [])
    assert rc == 0
    assert "End of input: game abandoned" in text
    assert "made 20" not in text


def test_quit_and_ctrl_c_exit_cleanly():
    rc, text = session([1, 5, 6, 6, 1, 1, 2, 3], ["q"])
    assert rc == 0 and "You quit" in text

    def interrupt(prompt):
        raise KeyboardInterrupt

    out = io.StringIO()
    rc = play_terminal(
        "420",
        make_agent("420", "greedy"),
        ScriptedDice([1, 5, 6, 6, 1, 1, 2, 3]),
        seat="red",
        input_fn=interrupt,
        out=out,
    )
    assert rc == 0 and "Interrupted" in out.getvalue()


def test_a_seeded_game_through_the_cli_plays_to_the_end_and_replays():
    def run():
        out = io.StringIO()
        rc = main(
            ["420", "--opponent", "optimal", "--seat", "blue", "--seed", "11", "--games", "3"],
            input_fn=lambda prompt: "all",
            out=out,
        )
        return rc, out.getvalue()

    rc, text = run()
    assert rc == 0
    assert len(re.findall(r"made 20: (you win!|optimal wins, you lose\.)", text)) == 3
    assert "Score after 3 games: you " in text
    assert "you play Blue against optimal (Red)" in text
    assert run() == (rc, text)  # same seed, same input: same session


def test_default_opponent_that_cannot_load_gives_a_clear_message(monkeypatch, capsys):
    _fails_for_ppo(monkeypatch)
    rc = main(["420", "--seed", "1"], input_fn=lambda p: "q")
    err = capsys.readouterr().err
    assert rc == 2
    assert "could not load the trained bot 'ppo-420'" in err and "--opponent optimal" in err
    assert "Traceback" not in err


# --- match ----------------------------------------------------------------------------
def _wilson_by_roots(k, n, z):
    """The Wilson bounds as the roots of (p_hat - p)^2 = z^2 p (1 - p) / n."""
    p_hat = k / n
    a = 1 + z * z / n
    b = -(2 * p_hat + z * z / n)
    c = p_hat * p_hat
    disc = math.sqrt(b * b - 4 * a * c)
    return (-b - disc) / (2 * a), (-b + disc) / (2 * a)


@pytest.mark.parametrize("k,n", [(0, 10), (5, 10), (10, 10), (81, 263), (664, 1000), (1, 2)])
def test_wilson_interval(k, n):
    lo, hi = matches.wilson_interval(k, n)
    z = matches.z_value(0.95)
    assert z == pytest.approx(1.959963984540054)
    exp_lo, exp_hi = _wilson_by_roots(k, n, z)
    assert lo == pytest.approx(max(0.0, exp_lo), abs=1e-12)
    assert hi == pytest.approx(min(1.0, exp_hi), abs=1e-12)
    assert 0.0 <= lo <= k / n <= hi <= 1.0


def test_wilson_interval_known_values_and_edges():
    assert matches.wilson_interval(5, 10) == pytest.approx((0.2366, 0.7634), abs=1e-4)
    lo, hi = matches.wilson_interval(0, 10)
    assert lo == 0.0 and hi == pytest.approx(3.8415 / 13.8415, abs=1e-4)
    assert matches.wilson_interval(0, 0) == (0.0, 1.0)
    wide, narrow = matches.wilson_interval(50, 100, 0.99), matches.wilson_interval(50, 100, 0.90)
    assert wide[0] < narrow[0] and wide[1] > narrow[1]
    with pytest.raises(ValueError):
        matches.wilson_interval(3, 2)


def _parse_match(text):
    """{(player, 'overall'|'as Red'|'as Blue'): (rate %, lo %, hi %, wins, games)}."""
    rows, player = {}, None
    pat = re.compile(
        r"^(\S.*?)?\s+(overall|as Red|as Blue)\s+([\d.]+)% \[\s*([\d.]+)%,\s*([\d.]+)%\]\s+\((\d+)/(\d+)\)$"
    )
    for line in text.splitlines():
        m = pat.match(line)
        if m:
            player = m.group(1) or player
            rows[(player.strip(), m.group(2))] = tuple(float(x) for x in m.groups()[2:5]) + (
                int(m.group(6)),
                int(m.group(7)),
            )
    return rows


def test_short_match_prints_rates_and_intervals_reproducibly(capsys):
    argv = ["match", "420", "--agent", "greedy", "--opponent", "random", "--games", "200", "--seed", "3"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    rows = _parse_match(text)
    assert len(rows) == 6
    for (_player, where), (rate, lo, hi, wins, games) in rows.items():
        assert games == (200 if where == "overall" else 100)
        assert lo <= rate <= hi and 0 <= lo and hi <= 100
        exp_lo, exp_hi = matches.wilson_interval(wins, games)
        assert (lo, hi) == pytest.approx((100 * exp_lo, 100 * exp_hi), abs=0.006)
    assert rows[("greedy", "overall")][3] + rows[("random", "overall")][3] == 200
    assert rows[("greedy", "as Red")][3] + rows[("random", "as Blue")][3] == 100
    assert rows[("greedy", "overall")][0] > 50  # greedy beats random (exactly: about 64%)
    assert main(argv) == 0
    assert capsys.readouterr().out == text


def test_play_match_alternates_seats_and_replays_with_random_bots():
    def run(seed):
        finishes = []  # each game's seating and finishing order, by player
        result = matches.play_match_n(
            "420",
            (make_agent("420", "random", 1), make_agent("420", "random", 2)),
            50,
            seed=seed,
            on_game=lambda seating, finish: finishes.append((seating, finish)),
        )
        return result, finishes

    (a, games_a), (b, games_b) = run(9), run(9)
    assert np.array_equal(a.wins, b.wins) and games_a == games_b  # the seed replays every game
    assert a.games.tolist() == [[25, 25], [25, 25]]
    assert a.wins[0, 0] + a.wins[1, 1] == 25  # each game has one winner
    assert [seating for seating, _ in games_a] == [(0, 1), (1, 0)] * 25  # the players swap seats every game
    assert [finish[-1] for _, finish in games_a].count(0) == 50 - a.wins[0].sum()  # the loser finishes last
    c, games_c = run(10)
    # another seed, other dice: the same 50 winners in a row would be a 1 in 2^50 chance
    assert [finish for _, finish in games_c] != [finish for _, finish in games_a]
    assert c.games.tolist() == a.games.tolist()


# --- evaluate and export ---------------------------------------------------------------
def test_policy_table_of_the_optimal_bot_is_the_solvers():
    table = export420.policy_table(make_agent("420", "optimal"))
    solver420.check_policy(table)
    expected = solver420.solve().policy_table()
    assert np.array_equal(table[solver420.DECISION], expected[solver420.DECISION])
    states, obs, masks = export420.decision_batch()
    assert len(states) == len(codec420.decision_states())
    h, o = states[1234]
    assert np.array_equal(obs[1234], codec420.encode(g.HANDS[h], g.HANDS[o]))
    assert np.array_equal(masks[1234], codec420.LEGAL_MASKS[h])


def test_policy_table_falls_back_to_act():
    greedy = make_agent("420", "greedy")

    class ActOnly:
        name = "act-only"

        def act(self, obs, mask):
            return greedy.act(obs, mask)

    assert np.array_equal(export420.policy_table(ActOnly()), export420.policy_table(greedy))


def test_evaluate_exact_optimal_has_zero_gap(capsys):
    assert main(["evaluate", "420", "--agent", "optimal", "--exact"]) == 0
    text = capsys.readouterr().out
    line = next(l for l in text.splitlines() if l.startswith("optimal "))
    red, opt_red, gap_red, blue, opt_blue, gap_blue = line.split()[1:]
    assert gap_red == "+0.0000" and gap_blue == "+0.0000"
    red_win = solver420.solve().red_win
    assert float(red) == pytest.approx(red_win, abs=1e-6) and float(opt_red) == pytest.approx(red_win, abs=1e-6)
    assert float(blue) == pytest.approx(1 - red_win, abs=1e-6)
    r = evaluate420.exact_evaluation(make_agent("420", "optimal"))
    assert r.red == pytest.approx(red_win, abs=1e-12) and r.gap_red_pp == 0.0 and r.gap_blue_pp == 0.0


def test_evaluate_exact_greedy_is_below_optimal():
    r = evaluate420.exact_evaluation(make_agent("420", "greedy"))
    assert r.red < r.optimal_red and r.blue < r.optimal_blue
    assert r.gap_red_pp < 0 and r.gap_blue_pp < 0


def test_evaluate_all_skips_a_trained_bot_that_does_not_load(monkeypatch, capsys):
    _fails_for_ppo(monkeypatch)
    assert main(["evaluate", "420", "--agent", "all", "--exact"]) == 0
    text = capsys.readouterr().out
    assert "skipping ppo-420" in text
    for name in ("random", "greedy", "foundation", "optimal"):
        assert re.search(rf"^{name}\s+0\.\d{{6}}", text, re.M)


def test_evaluate_by_simulation_prints_intervals(capsys):
    assert main(["evaluate", "420", "--agent", "greedy", "--games", "100", "--seed", "1"]) == 0
    rows = _parse_match(capsys.readouterr().out)
    assert rows[("optimal", "overall")][4] == 100 and rows[("optimal", "as Red")][4] == 50


def test_export_optimal_policy(tmp_path, capsys):
    path = tmp_path / "optimal.csv"
    assert main(["export", "420", "--agent", "optimal", "--out", str(path)]) == 0
    states = codec420.decision_states()
    assert f"wrote {len(states)} rows" in capsys.readouterr().out
    with open(path, newline="") as f:
        assert f.readline() == "hand,opponent,reroll\n"
    with open(path, newline="") as f:
        rows = list(csv.DictReader(f))
    assert len(rows) == len(states)
    assert [(r["hand"], r["opponent"]) for r in rows] == [
        (g.format_hand(g.HANDS[h]), g.format_hand(g.HANDS[o])) for h, o in states
    ]
    solution = solver420.solve()
    hand = (6, 6, 5, 1)
    h = g.HAND_INDEX[hand]
    mine = [r for r in rows if r["hand"] == "6-6-5-1"]
    assert len(mine) == sum(1 for s in states if s[0] == h)
    for r in mine:
        o = g.HAND_INDEX[tuple(int(d) for d in r["opponent"].split("-"))]
        assert r["reroll"] == g.format_hand(g.reroll_of(hand, int(solution.policy[h, o])))
    assert {r["reroll"] for r in mine} == {"5-1"}  # the solver keeps 6-6 against every opponent


# --- CLI plumbing ---------------------------------------------------------------------
@pytest.mark.parametrize("argv", [[], ["420"], ["match"], ["evaluate"], ["export"]])
def test_help_for_every_command(argv, capsys):
    assert main([*argv, "--help"]) == 0
    assert "usage: python -m play" in capsys.readouterr().out


def test_module_entry_point_help():
    done = subprocess.run(
        [sys.executable, "-m", "play", "--help"], cwd=ROOT, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0 and "evaluate" in done.stdout and "export" in done.stdout


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "420", "--agent", "nosuchbot", "--opponent", "random", "--games", "10"],
        ["evaluate", "420", "--agent", "nosuchbot", "--exact"],
        ["export", "420", "--agent", "nosuchbot", "--out", "x.csv"],
        ["420", "--opponent", "nosuchbot"],
    ],
)
def test_unknown_agent_is_a_clear_error(argv, capsys):
    assert main(argv) == 2
    captured = capsys.readouterr()
    assert "unknown agent 'nosuchbot'" in captured.err and "Traceback" not in captured.err
    assert captured.out == ""


@pytest.mark.parametrize(
    "argv",
    [
        ["match", "420", "--agent", "random"],
        ["match", "420", "--agent", "a", "--opponent", "b", "--games", "0"],
        ["evaluate", "421", "--agent", "x"],
        [],
    ],
)
def test_usage_errors_exit_2(argv, capsys):
    assert main(argv) == 2
    assert "usage:" in capsys.readouterr().err
