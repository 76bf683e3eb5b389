"""Tournaments (``python -m play tournament``): every table of N out of the agents,
seats rotated through every order, counts, intervals, exact figures, ratings, the
JSON and CSV files, and the one-line errors."""

from __future__ import annotations

import argparse
import csv
import dataclasses
import io
import json
import math
import shlex

import numpy as np
import pytest

import agents
import games
from games.dice420 import race as race420
from games.dice420 import solver as solver420
from games.dice421 import solver as solver421
from core.spec import NoExactFigure
from games.dice420.reply import tournament_figure as exact_race_420
from play import match as M
from play import ratings as R
from play import tournament as T
from play import tournament_cli as cli


def parse(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog=cli.PROG)
    cli.add_arguments(parser)
    return parser.parse_args(argv)


def run_cli(argv: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = cli.run(parse(argv), out, err)
    return code, out.getvalue(), err.getvalue()


def entries(game: str, names: list[str]) -> list[tuple[str, object]]:
    return list(zip(cli.entry_labels(names), (agents.make_agent(game, n) for n in names)))


# --- the schedule and the counts ------------------------------------------------------------
def test_every_table_plays_every_seat_order_equally_and_the_counts_add_up():
    names = ["greedy", "foundation", "random", "greedy"]
    n, k = 3, 2
    t = T.run_tournament("420", entries("420", names), n, k, seed=5)
    orders = M.seatings(n)
    per_table = k * len(orders)
    assert [tb.players for tb in t.tables] == [(0, 1, 2), (0, 1, 3), (0, 2, 3), (1, 2, 3)]
    assert t.labels == ("greedy (1)", "foundation", "random", "greedy (2)")
    assert t.n_games == len(t.tables) * per_table == math.comb(len(names), n) * per_table
    for tb in t.tables:
        # every player holds every seat k * (n - 1)! times; one loser a game
        assert (tb.match.games == per_table // n).all()
        assert tb.match.wins.sum() == (n - 1) * per_table
        assert (tb.places.sum(axis=0) == per_table).all() and (tb.places.sum(axis=1) == per_table).all()
        assert (tb.match.wins.sum(axis=1) == tb.places[:, : n - 1].sum(axis=1)).all()
    # the log holds every game once, by entry, a permutation of the table's entries
    for tb in t.tables:
        games = [g for g in t.log if sorted(g) == sorted(tb.players)]
        assert len(games) == per_table
        assert [
            sum(g.index(p) == place for g in games) for p in tb.players for place in range(n)
        ] == tb.places.ravel().tolist()
    for e in range(len(names)):
        sat = [tb for tb in t.tables if e in tb.players]
        assert t.overall(e).games == len(sat) * per_table
        assert t.overall(e).wins == sum(int(tb.match.wins[tb.players.index(e)].sum()) for tb in sat)


def test_more_than_four_players_rotate_through_the_cyclic_shifts():
    t = T.run_tournament("420", entries("420", ["greedy", "random", "foundation", "greedy", "random"]), 5, 1, seed=1)
    assert len(t.orders) == 5 and t.n_games == 5
    assert (t.tables[0].match.games == 1).all()  # each player in each seat once


def test_the_same_seed_gives_the_same_tournament_and_another_seed_another():
    names = ["random", "greedy", "random"]
    a, b, c = (T.run_tournament("420", entries("420", names), 2, 20, seed=s, exact=False) for s in (3, 3, 4))
    assert a.log == b.log and a.openskill == b.openskill and a.bradley_terry == b.bradley_terry
    assert a.log != c.log
    # a table's games do not depend on the tables played after it (nor before: its seed is its own)
    alone = T.run_tournament("420", entries("420", names[:2]), 2, 20, seed=3, exact=False)
    assert alone.log == [g for g in a.log if sorted(g) == [0, 1]]


def test_the_cli_prints_and_writes_the_same_on_a_second_run(tmp_path):
    argv = [
        "421",
        "--players",
        "3",
        "--agents",
        "heuristic,random,cautious,greedy421",
        "--games",
        "1",
        "--seed",
        "11",
        "--out",
        str(tmp_path / "a.json"),
    ]
    code, first, _ = run_cli(argv)
    data = (tmp_path / "a.json").read_text()
    assert code == 0 and run_cli([*argv, "--force"])[1] == first and (tmp_path / "a.json").read_text() == data


# --- exact figures ----------------------------------------------------------------------------
def test_the_exact_column_of_two_player_420_is_the_solvers_figure():
    names = ["greedy", "optimal", "random"]
    t = T.run_tournament("420", entries("420", names), 2, 1, seed=0)
    tables = {n: solver420.policy_table(agents.make_agent("420", n)) for n in names}
    for tb in t.tables:
        a, b = (names[e] for e in tb.players)
        red, blue = solver420.win_probabilities(tables[a], tables[b])
        assert tb.exact.tolist() == [(red + blue) / 2, 1 - (red + blue) / 2]


def test_the_exact_column_of_two_player_421_is_the_solvers_figure():
    names = ["heuristic", "random"]
    t = T.run_tournament("421", entries("421", names), 2, 1, seed=0, pot=4)
    p = solver421.win_probability(agents.make_agent("421", "heuristic"), agents.make_agent("421", "random"), pot=4)
    assert t.tables[0].exact.tolist() == [p, 1 - p]


def test_the_n_player_race_agrees_with_race420_and_with_the_two_player_solver():
    for n in (3, 4):  # everyone the same policy: race420's own recursion, over the seat orders
        bots = [agents.make_agent("420", "greedy") for _ in range(n)]
        p = exact_race_420(bots, M.seatings(n), {}, {})
        assert np.allclose(p, 1 - race420.loser_probabilities(n, "greedy", first_player=0).mean(), rtol=0, atol=1e-15)
    # two different own-hand policies: the solver, which knows nothing of races
    greedy, rand = (race420.policy_matrix(n) for n in ("greedy", "random"))
    red, blue = solver420.win_probabilities(race420.two_player_table(greedy), race420.two_player_table(rand))
    p = exact_race_420([agents.make_agent("420", n) for n in ("greedy", "random")], M.seatings(2), {}, {})
    assert abs(p[0] - (red + blue) / 2) < 1e-12


class Peeker:
    """Keeps by another player's hand: its move changes with the next player's lowest die."""

    name = "peeker"

    def act(self, obs, mask):
        legal = np.flatnonzero(mask)
        return int(legal[0] if obs[4] == 1 else legal[-1])


@pytest.mark.slow
def test_an_agent_that_looks_at_other_hands_gets_no_exact_n_player_figure():
    with pytest.raises(NoExactFigure, match="own hand"):
        exact_race_420(
            [Peeker(), agents.make_agent("420", "greedy"), agents.make_agent("420", "random")], M.seatings(3), {}, {}
        )
    t = T.run_tournament(
        "420", [("peeker", Peeker())] + entries("420", ["greedy", "random", "foundation"]), 3, 1, seed=0
    )
    assert [tb.exact is None for tb in t.tables] == [True, True, True, False]
    assert "peeker does not play from its own hand alone" in t.tables[0].exact_note
    assert "peeker does not play from its own hand" in " ".join(T.format_tournament(t).split())
    assert t.exact_overall(0) is None and t.exact_overall(1) is None  # greedy sat at a table without one


def test_a_game_and_table_size_without_an_exact_evaluator_says_so(monkeypatch):
    spec = games.get("420")
    monkeypatch.setitem(games.REGISTRY, "420", dataclasses.replace(spec, exact_tables={}, exact=""))
    t = T.run_tournament("420", entries("420", ["greedy", "random"]), 2, 1, seed=0)
    assert t.tables[0].exact is None and "no exact evaluator" in t.tables[0].exact_note
    text = T.format_tournament(t)
    assert "(No exact figures: no exact evaluator for this game and number of players.)" in text
    assert "exact" not in text.replace("No exact figures: no exact evaluator", "")


# --- ratings ------------------------------------------------------------------------------------
def test_heads_up_ratings_put_a_clearly_stronger_bot_above_random():
    t = T.run_tournament("420", entries("420", ["random", "optimal"]), 2, 150, seed=2)
    bt = t.bradley_terry
    assert bt[1]["low"] > bt[0]["high"]  # the intervals are apart
    assert abs(bt[0]["elo"] + bt[1]["elo"]) < 1e-9  # mean 0
    assert t.openskill[1]["ordinal"] > t.openskill[0]["mu"]
    assert t.ranking() == [1, 0]


@pytest.mark.slow
def test_multiplayer_ratings_put_clearly_stronger_bots_above_random():
    t = T.run_tournament("421", entries("421", ["random", "heuristic", "cautious"]), 3, 50, seed=2, exact=False)
    skill = t.openskill
    assert t.bradley_terry is None and t.ranking()[-1] == 0
    # mu apart by more than twice the spread of the difference (3.4 and 3.2 of it here)
    assert all(skill[e]["mu"] - skill[0]["mu"] > 2 * math.hypot(skill[e]["sigma"], skill[0]["sigma"]) for e in (1, 2))
    assert t.mean_place(0) > max(t.mean_place(1), t.mean_place(2))


def test_bradley_terry_recovers_the_log_odds_and_stays_finite_when_one_side_wins_everything():
    elo, low, high = R.bradley_terry(np.array([[0, 300], [100, 0]]))
    p = 1 / (1 + math.exp(-(elo[0] - elo[1]) / R.ELO_PER_NATURAL))
    assert 0.74 < p < 0.75 and low[0] < elo[0] < high[0]  # 300 of 400; the prior pulls a little toward 1/2
    assert abs(elo.sum()) < 1e-9
    elo, low, high = R.bradley_terry(np.array([[0, 20], [0, 0]]))
    assert np.all(np.isfinite(elo)) and elo[0] > 0 > elo[1] and low[0] > elo[1]


def test_the_finishing_order_is_the_winners_in_the_order_they_left_then_the_loser():
    from core.dice import RandomDice

    table = M._play_table("420", [agents.make_agent("420", "greedy")] * 4, RandomDice(3))
    order = M.finishing_order(table)
    assert order == (*table.finish_order, table.loser) and sorted(order) == [0, 1, 2, 3]
    ends = [e for e in table.events if e["type"] == "round_won"]
    assert [e["seat"] for e in ends] == list(order[:-1])


# --- the files -------------------------------------------------------------------------------------
def test_json_and_csv_are_written_and_hold_the_tables(tmp_path):
    path = tmp_path / "t.json"
    code, out, err = run_cli(
        ["420", "--agents", "greedy,random,optimal", "--games", "3", "--seed", "9", "--out", str(path)]
    )
    assert code == 0, err
    data = json.loads(path.read_text())
    assert data["settings"]["seed"] == 9 and data["settings"]["games_per_seat_order"] == 3
    assert shlex.split(data["command"])[4:] == [
        "420",
        "--players",
        "2",
        "--agents",
        "greedy,random,optimal",
        "--games",
        "3",
        "--seed",
        "9",
        "--out",
        str(path),
    ]
    assert len(data["tables"]) == 3 and data["ranking"][0] in ("greedy", "random", "optimal")
    rows = list(csv.DictReader(path.with_suffix(".csv").open()))
    assert len(rows) == 6
    for table in data["tables"]:
        for r in table["results"]:
            row = next(x for x in rows if int(x["table"]) == table["table"] and x["agent"] == r["agent"])
            assert int(row["not_lost"]) == r["not_lost"] == sum(s["not_lost"] for s in r["by_seat"])
            assert int(row["games"]) == r["games"] == 6
            assert float(row["exact"]) == r["exact"] and r["interval"][0] <= r["rate"] <= r["interval"][1]
    assert sum(a["games"] for a in data["agents"]) == 2 * data["settings"]["games"]
    assert not [p for p in tmp_path.iterdir() if p.name.startswith(".")]  # no temporary file left
    # within 80 columns but for a line that holds a path, which is not broken (it is as long as the
    # temporary folder: longer under pytest-xdist, which adds its worker's folder)
    paths = (str(path), str(path.with_suffix(".csv")))
    assert all(len(line) <= 80 for line in out.splitlines() if not any(p in line for p in paths)), out
    assert all(p in out for p in paths), out


def test_the_report_fits_in_80_columns_with_long_names_and_many_players():
    t = T.run_tournament(
        "420",
        [
            ("a-rather-long-checkpoint-name-indeed", agents.make_agent("420", "greedy")),
            ("random", agents.make_agent("420", "random")),
            ("foundation", agents.make_agent("420", "foundation")),
            ("optimal", agents.make_agent("420", "optimal")),
        ],
        4,
        1,
        seed=0,
    )
    text = T.format_tournament(t)
    assert all(len(line) <= 80 for line in text.splitlines()), text
    assert "mean place" in text and "exact" in text


# --- errors: one line, exit code 2 ------------------------------------------------------------------
@pytest.mark.parametrize(
    "argv, message",
    [
        (["420", "--agents", "greedy,nobody"], "unknown agent 'nobody'"),
        (["420", "--players", "3", "--agents", "greedy,random"], "2 agents for tables of 3 players"),
        (["421", "--players", "4", "--agents", "heuristic,random,cautious,greedy421"], "421 is played by 2 to 3"),
        (["421", "--players", "3", "--agents", "heuristic,random,optimal"], "two players only"),
        (["420", "--agents", "greedy,,random"], "empty name"),
        (["420", "--agents", "greedy,random", "--pot", "3"], "420 has no option pot"),
        (["420", "--agents", "greedy,random", "--out", "results.csv"], "give a FILE.json"),
        (["420", "--agents", "greedy,random", "--out", "no/such/folder/t.json"], "there is no folder"),
    ],
)
def test_a_bad_request_is_one_error_line(argv, message):
    code, out, err = run_cli(argv)
    assert code == 2 and out == ""
    assert err.count("\n") == 1 and err.startswith(f"{cli.PROG}: error: ") and message in err, err


def test_a_folder_or_an_unwritable_place_as_out_is_one_error_line(tmp_path, monkeypatch):
    (tmp_path / "d.json").mkdir()
    code, _, err = run_cli(["420", "--agents", "greedy,random", "--out", str(tmp_path / "d.json")])
    assert code == 2 and "is a folder" in err and err.count("\n") == 1

    import core.files

    monkeypatch.setattr(core.files.os, "access", lambda *args, **kwargs: False)  # a folder we may not write in
    code, _, err = run_cli(["420", "--agents", "greedy,random", "--out", str(tmp_path / "t.json")])
    assert code == 2 and "cannot write the JSON file there" in err and "not writable" in err and err.count("\n") == 1


@pytest.mark.parametrize("games", ["0", "-3", "many"])
def test_fewer_than_one_game_per_seat_order_is_refused_by_the_parser(games, capsys):
    with pytest.raises(SystemExit) as e:
        parse(["420", "--agents", "greedy,random", "--games", games])
    assert e.value.code == 2
    assert "argument --games" in capsys.readouterr().err


def test_run_tournament_refuses_what_the_cli_refuses():
    with pytest.raises(ValueError, match="at least one game"):
        T.run_tournament("420", entries("420", ["greedy", "random"]), 2, 0, seed=0)
    with pytest.raises(ValueError, match="cannot fill a table of 3"):
        T.run_tournament("420", entries("420", ["greedy", "random"]), 3, 1, seed=0)


def test_ratings_rank_420_by_the_order_players_left_and_tie_421s_winners():
    assert R.finish_ranks((2, 0, 1), R.finish_ranking("420")) == [0, 1, 2]
    assert R.finish_ranks((2, 0, 1), R.finish_ranking("421")) == [0, 0, 1]
    # the same games rated both ways: only the order between the two winners differs
    log = [(0, 1, 2)] * 30
    left, tied = R.openskill_ratings(log, 3, "left"), R.openskill_ratings(log, 3, "tied")
    assert left[0]["mu"] > left[1]["mu"] > left[2]["mu"]
    assert tied[0]["mu"] == tied[1]["mu"] > tied[2]["mu"]


def test_python_m_play_tournament_is_this_command(tmp_path):
    from play.__main__ import main

    argv = ["420", "--agents", "greedy,random", "--games", "2", "--seed", "4"]
    out, err = io.StringIO(), io.StringIO()
    assert main(["tournament", *argv], out=out, err=err) == 0
    assert out.getvalue() == run_cli(argv)[1]
    out, err = io.StringIO(), io.StringIO()
    assert main(["tournament", "420", "--agents", "greedy,nobody"], out=out, err=err) == 2
    assert err.getvalue().startswith(f"{cli.PROG}: error: --agents: unknown agent 'nobody'")


def test_the_files_are_made_as_open_would_make_them_and_replace_old_ones(tmp_path):
    import os

    path = tmp_path / "t.json"
    path.write_text("old")
    cli.write_output(path, "new", force=True)
    umask = os.umask(0)
    os.umask(umask)
    assert path.read_text() == "new" and path.stat().st_mode & 0o777 == 0o666 & ~umask
    assert [p.name for p in tmp_path.iterdir()] == ["t.json"]
