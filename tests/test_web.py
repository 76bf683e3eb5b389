"""The web table's API (``play.web``), through FastAPI's TestClient: games of every kind
played to the end, bad requests, concurrent games, records that survive a restart,
replays, and the coach's figures against the exact solvers."""

from __future__ import annotations

import io
import json
import random
import threading
import warnings

import numpy as np
import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():  # newer Starlette prefers httpx2 and says so on import
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from games.dice420 import solver as solver420  # noqa: E402
from games.dice421 import solver as solver421
from games.dice420 import game as g420  # noqa: E402
from games.dice421 import game as g421  # noqa: E402
from games.dice420 import web as web420  # noqa: E402
from games.dice421 import web as web421  # noqa: E402
from play.web.app import MAX_BODY, create_app  # noqa: E402
from play.web.records import default_db_path, replay_actions  # noqa: E402

SEED_6651 = 260  # Game420(2, RandomDice(260)): Red's first choice is 6-6-5-1 against 5-1-1-1


@pytest.fixture
def db(tmp_path):
    return tmp_path / "records.sqlite3"


@pytest.fixture
def client(db):
    return make_client(db)


def make_client(db) -> TestClient:
    return TestClient(create_app(db), raise_server_exceptions=False)


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def refused(response, status: int, *words: str) -> str:
    """A 4xx with a JSON {"error": message} that contains ``words``."""
    assert response.status_code == status, (response.status_code, response.text)
    assert response.headers["content-type"].startswith("application/json")
    message = response.json()["error"]
    for word in words:
        assert word in message, (word, message)
    return message


def start(client, **body) -> dict:
    return ok(client.post("/api/games", json=body), 201)


def move(client, gid: str, **body) -> dict:
    return ok(client.post(f"/api/games/{gid}/moves", json=body))


def random_move(state: dict, rng: random.Random) -> dict:
    """A legal move, named each of the ways the API takes."""
    if state["stop"] and state["stop"]["ok"] and rng.random() < 0.3:
        return {"stop": True}
    key, c = rng.choice([(k, c) for k, c in state["choices"].items() if c["ok"]])
    reroll = [int(v) for v in key.split("-")] if key else []
    way = rng.randrange(3)
    if way == 0:
        return {"action": c["action"]}
    if way == 1:
        hand = list(state["hand"])
        for v in reroll:
            hand.remove(v)
        return {"keep": hand}
    return {"reroll": reroll}


def play_to_end(client, gid: str, state: dict, rng: random.Random, limit: int = 400) -> tuple[dict, list]:
    sent = []
    while not state["over"]:
        assert state["waiting"] and state["legal"]
        body = random_move(state, rng)
        body["turn"] = state["turn"]
        sent.append(body)
        reply = move(client, gid, **body)
        assert all(set(step) == {"text", "event"} for step in reply["steps"])
        state = reply["state"]
        assert len(sent) < limit
    return state, sent


# ----------------------------------------------------------------------------- games


def test_setup_lists_the_games_their_bots_and_seats(client):
    setup = ok(client.get("/api/setup"))
    by_name = {g["name"]: g for g in setup["games"]}
    assert set(by_name) == {"420", "421", "pig"}
    assert sorted(map(int, by_name["420"]["tables"])) == list(range(2, 9))
    assert sorted(map(int, by_name["421"]["tables"])) == [2, 3]
    assert "optimal" in by_name["421"]["tables"]["2"]["bots"]
    assert "optimal" not in by_name["421"]["tables"]["3"]["bots"]  # solved for two players only
    assert by_name["420"]["tables"]["2"]["seats"] == ["Red", "Blue"]
    assert by_name["421"]["options"][0]["name"] == "pot"


@pytest.mark.parametrize(
    "game, players, bots, options",
    [
        ("420", 2, ["optimal"], {}),
        ("420", 3, ["greedy", "random"], {}),
        ("420", 8, ["foundation"], {}),
        ("421", 2, ["optimal"], {"pot": 7}),
        ("421", 2, ["heuristic"], {"pot": 15}),
        ("421", 3, ["greedy421", "cautious"], {"pot": 6}),
        ("421", 3, ["exact3"], {"pot": 15}),
    ],
)
def test_games_of_every_kind_play_to_the_end_with_legal_moves(client, game, players, bots, options):
    rng = random.Random(players)
    for seed in range(3):
        reply = start(
            client,
            game=game,
            players=players,
            bots=bots,
            seat=seed % players,
            seed=seed,
            options=options,
            player="tester",
        )
        gid, state = reply["id"], reply["state"]
        assert state["players"] == players and state["seat"] == seed % players
        assert state["seed"] is None or state["over"]  # the seed predicts the rolls: kept back until the end
        assert [s["bot"] for s in state["seats"]].count(None) == 1
        assert reply["steps"] and state["log"] == [s["text"] for s in reply["steps"] if s["text"]]
        if not state["over"]:
            assert {m["action"] for m in state["legal"]} == {
                c["action"] for c in state["choices"].values() if c["ok"]
            } | ({state["stop"]["action"]} if state["stop"] and state["stop"]["ok"] else set())
        final, _ = play_to_end(client, gid, state, rng)
        assert final["over"] and final["outcome"] in (1.0, -1.0) and final["loser"] is not None
        assert final["seed"] == seed  # shown once over, for the replay
        assert final["result"] and (
            "You win!" in final["result"]
            or "You lose." in final["result"]
            or "you win!" in final["result"]
            or "you lose" in final["result"]
        )
        again = ok(client.get(f"/api/games/{gid}"))["state"]
        assert again["log"][-1] == final["result"] and again["over"]
    records = ok(client.get("/api/records", params={"player": "tester"}))
    assert sum(r["games"] for r in records["records"]) == 3
    assert {r["opponents"] for r in records["records"]} == {
        ", ".join(sorted(bots * (players - 1) if len(bots) == 1 else bots))
    }


def test_the_table_shows_every_hand_in_420_and_the_pot_tokens_and_rolls_in_421(client):
    state = start(client, game="420", players=4, bots="greedy", seat=2, seed=3)["state"]
    seats = state["table"]["seats"]
    assert len(seats) == 4 and all("hand" in s and "status" in s for s in seats)
    state = start(client, game="421", players=2, bots="heuristic", seat=0, seed=4)["state"]
    table = state["table"]
    assert table["pot"] == 0 and sum(s["tokens"] for s in table["seats"]) == 15
    assert table["round"]["entries"] and all(e["text"] for e in table["round"]["entries"] if e["kind"] != "turn_end")
    if state["waiting"]:
        assert table["round"]["entries"][-1]["hand"] == state["hand"]


# ----------------------------------------------------------------------------- illegal moves


def test_a_table_without_bots_named_gets_the_default_that_can_sit_there(client):
    assert start(client, game="421", players=3, seed=1)["state"]["bots"] == ["exact3", "exact3"]
    # exact3 is built for pot 15: at another pot the suggested bot takes its place
    assert start(client, game="421", players=3, seed=1, options={"pot": 7})["state"]["bots"] == ["heuristic"] * 2
    assert start(client, game="421", seed=1)["state"]["bots"] == ["ppo-421"]


def test_every_shipped_trained_bot_is_offered_and_plays_on_the_page(client):
    """ppo-421-3p, learned at a table of three, sits at a 421 table as ppo-421 does."""
    tables = next(g for g in client.get("/api/setup").json()["games"] if g["name"] == "421")["tables"]
    assert {"ppo-421", "ppo-421-3p"} <= set(tables["3"]["bots"])
    state = start(client, game="421", players=3, bots=["ppo-421-3p", "heuristic"], seat=0, seed=2)["state"]
    assert state["bots"] == ["ppo-421-3p", "heuristic"]
    reply = client.post("/api/games", json={"game": "421", "players": 3, "bots": ["ppo-421-4p"], "seed": 1})
    refused(reply, 422, "unknown bot 'ppo-421-4p'", "ppo-421-3p")


def test_an_illegal_420_move_is_refused_with_the_rule_and_changes_nothing(client):
    reply = start(client, game="420", bots="optimal", seat=0, seed=SEED_6651)
    gid, state = reply["id"], reply["state"]
    assert state["hand"] == [6, 6, 5, 1]
    choices = state["choices"]
    assert choices["5-1"] == {"ok": True, "action": g420.KEEP_INDEX[(6, 6)], "text": "keep 6-6, reroll 5-1"}
    assert choices["6"]["ok"] is False and "R3" in choices["6"]["why"]
    assert choices[""] == {"ok": False, "why": "you must reroll at least one die (R2)"}
    # what the page says before sending is what the server says when sent anyway
    for key in ("6", "", "6-5", "5-1-1"):
        body = {"reroll": [int(v) for v in key.split("-")] if key else []}
        if key not in choices:  # dice the hand does not hold: the engine says so
            assert "does not hold" in refused(client.post(f"/api/games/{gid}/moves", json=body), 422)
            continue
        assert refused(client.post(f"/api/games/{gid}/moves", json=body), 422) == choices[key]["why"]
    refused(client.post(f"/api/games/{gid}/moves", json={"keep": [6, 6, 6]}), 422, "does not hold")
    refused(client.post(f"/api/games/{gid}/moves", json={"reroll": [1, 1, 1, 1, 1]}), 422, "only 4 dice")
    refused(client.post(f"/api/games/{gid}/moves", json={"action": 99}), 422, "0..13")
    refused(
        client.post(f"/api/games/{gid}/moves", json={"action": g420.KEEP_INDEX[(6, 6, 6)]}),
        422,
        "illegal move",
        "does not hold",
    )
    refused(client.post(f"/api/games/{gid}/moves", json={"stop": True}), 422, "no stop", "R2")
    refused(client.post(f"/api/games/{gid}/moves", json={"reroll": [5, 1], "turn": 3}), 409, "out of turn")
    assert ok(client.get(f"/api/games/{gid}"))["state"] == state | {"log": state["log"]}
    after = move(client, gid, reroll=[5, 1], turn=0)
    assert after["steps"][0]["text"].startswith("Red (you) kept 6-6, rolled")
    refused(client.post(f"/api/games/{gid}/moves", json={"reroll": [5, 1], "turn": 0}), 409, "out of turn")


def _follower_game(client):
    for seed in range(200):
        reply = start(client, game="421", bots="heuristic", seat=1, seed=seed, options={"pot": 4})
        state = reply["state"]
        if state["waiting"] and state["table"]["leader"] != 1:
            return reply["id"], state
    raise AssertionError("no seed puts the person at a follower's decision")


def test_a_421_follower_cannot_stop_and_the_page_and_the_server_say_why_in_the_terminals_words(client):
    gid, state = _follower_game(client)
    stop = state["stop"]
    assert stop["ok"] is False and stop["why"].startswith("you cannot stop: the leader P1 (heuristic) made")
    assert "(H4)" in stop["why"]
    assert refused(client.post(f"/api/games/{gid}/moves", json={"stop": True}), 422) == stop["why"]
    assert refused(client.post(f"/api/games/{gid}/moves", json={"action": g421.STOP}), 422) == stop["why"]
    hand = state["hand"]
    assert "H4" in refused(client.post(f"/api/games/{gid}/moves", json={"keep": hand}), 422)
    assert "H4" in refused(client.post(f"/api/games/{gid}/moves", json={"reroll": []}), 422)
    missing = next(v for v in range(1, 7) if v not in hand)
    refused(client.post(f"/api/games/{gid}/moves", json={"reroll": [missing]}), 422, f"cannot reroll {missing}")
    keep = [m for m in state["legal"] if m["text"] == "reroll all three"]
    assert keep and move(client, gid, action=keep[0]["action"])["steps"]


def test_a_move_after_the_end_is_out_of_turn(client):
    reply = start(client, game="420", bots="optimal", seat=1, seed=5)
    state, _ = play_to_end(client, reply["id"], reply["state"], random.Random(0))
    refused(client.post(f"/api/games/{reply['id']}/moves", json={"action": 0}), 409, "over")


# ----------------------------------------------------------------------------- bad requests


def test_garbage_gets_a_4xx_with_a_json_message_never_a_500(client):
    gid = start(client, game="420", bots="optimal", seat=0, seed=1)["id"]
    url = f"/api/games/{gid}/moves"
    json_type = {"content-type": "application/json"}
    refused(client.post(url, content=b"{bad json", headers=json_type), 400, "not valid JSON")
    refused(client.post(url, content=b'{"action": 0}', headers={"content-type": "text/plain"}), 415, "JSON")
    refused(client.post(url, content=b"", headers=json_type), 422, "JSON object")
    refused(client.post(url), 415, "JSON")
    for body, words in [
        ([1, 2], ("JSON object",)),
        ("x", ("JSON object",)),
        (0, ("JSON object",)),
        ({"action": "1"}, ("action",)),
        ({"action": True}, ("action",)),
        ({"action": 1.0}, ("action",)),
        ({"action": -1}, ("action",)),
        ({"reroll": [7]}, ("1 to 6",)),
        ({"reroll": "15"}, ("reroll",)),
        ({"keep": [[6]]}, ("keep",)),
        ({"nope": 1}, ("nope",)),
        ({}, ("exactly one",)),
        ({"action": 0, "reroll": [1]}, ("exactly one",)),
        ({"stop": "yes"}, ("stop",)),
        ({"reroll": list(range(100))}, ("reroll",)),
        ({"turn": "0", "action": 0}, ("turn",)),
    ]:
        refused(client.post(url, json=body), 422, *words)
    # too big: refused by its Content-Length, or as it streams in without one
    refused(client.post(url, content=b" " * (MAX_BODY + 1), headers=json_type), 413, "too large")
    refused(client.post(url, content=(b" " * 1000 for _ in range(100)), headers=json_type), 413, "too large")
    refused(
        client.post("/api/games", content=b'{"game": "420", "player": "' + b"a" * 70000 + b'"}', headers=json_type), 413
    )
    # unknown games, whatever the id looks like; nothing reaches SQL or the file system
    for bad in ("AAAAAAAAAAAAAAAA", "x", "'; DROP TABLE games;--", "..%2F..%2Fetc%2Fpasswd", "%00" * 20):
        refused(client.get(f"/api/games/{bad}"), 404, *(["no such game"] if "%" not in bad else []))
        refused(client.post(f"/api/games/{bad}/moves", json={"action": 0}), 404)
        refused(client.get(f"/api/games/{bad}/coach"), 404)
        refused(client.get(f"/api/records/{bad}"), 404)
    refused(client.delete(url), 405)
    refused(client.get("/api/nothing"), 404)
    # starting games
    for body, words in [
        ({"game": "422"}, ("unknown game",)),
        ({"game": 420}, ("game",)),
        ({"game": "420", "bots": "/etc/passwd"}, ("unknown bot",)),
        ({"game": "420", "bots": "checkpoints/ppo-420.pt"}, ("unknown bot",)),
        ({"game": "421", "players": 3, "bots": "optimal"}, ("two players only",)),
        ({"game": "421", "bots": "exact3"}, ("three players only",)),
        ({"game": "421", "players": 3, "bots": "exact3", "options": {"pot": 7}}, ("built for pot 15, not 7",)),
        ({"game": "421", "bots": "optimal", "options": {"pot": 50}}, ("pots up to 30",)),
        ({"game": "421", "options": {"pot": 500}}, ("pot",)),
        ({"game": "421", "options": {"colour": 5}}, ("no option colour",)),
        ({"game": "420", "options": {"pot": 5}}, ("no option pot",)),
        ({"game": "420", "players": 9}, ("2 to 8",)),
        ({"game": "420", "players": True}, ("players",)),
        ({"game": "420", "players": 3, "bots": ["greedy"] * 3}, ("3 bots",)),
        ({"game": "420", "seat": 5}, ("seat",)),
        ({"game": "420", "seed": -1}, ("seed",)),
        ({"game": "420", "seed": 2**64}, ("seed",)),
        ({"game": "420", "extra": 1}, ("extra",)),
        ({"game": "420", "player": "Robert'); DROP TABLE games;--"}, ("player",)),
    ]:
        refused(client.post("/api/games", json=body), 422, *words)
    refused(client.get("/api/records", params={"player": "x;y"}), 422, "player")
    # a name with a quote is fine (the SQL is parameterised) and the records are intact
    start(client, game="420", bots="random", seed=3, player="O'Brien")
    assert ok(client.get("/api/records", params={"player": "O'Brien"}))["unfinished"] == 1


def test_random_json_bodies_never_crash_the_server(client):
    from hypothesis import given, strategies as st

    gid = start(client, game="421", bots="heuristic", seat=0, seed=2)["id"]
    scalars = (
        st.none() | st.booleans() | st.integers(-(2**70), 2**70) | st.floats(allow_nan=False) | st.text(max_size=20)
    )
    values = st.recursive(
        scalars,
        lambda inner: st.lists(inner, max_size=5) | st.dictionaries(st.text(max_size=8), inner, max_size=5),
        max_leaves=20,
    )
    keys = st.sampled_from(
        ["action", "reroll", "keep", "stop", "turn", "game", "players", "bots", "seat", "seed", "options", "player"]
    )
    bodies = values | st.dictionaries(keys, values, max_size=4)

    @given(bodies, st.sampled_from(["/api/games", f"/api/games/{gid}/moves"]))
    def check(body, url):
        response = client.post(url, content=json.dumps(body), headers={"content-type": "application/json"})
        assert response.status_code < 500, (body, response.text)
        if response.status_code >= 400:
            assert "error" in response.json()

    check()


# ----------------------------------------------------------------------------- many players


def test_concurrent_games_are_independent(client):
    a = start(client, game="420", bots="optimal", seat=0, seed=42)
    b = start(client, game="420", bots="optimal", seat=0, seed=42)
    assert a["id"] != b["id"] and a["state"]["log"] == b["state"]["log"]
    key = next(k for k, c in a["state"]["choices"].items() if c["ok"])
    move(client, a["id"], reroll=[int(v) for v in key.split("-")] if key else [])
    assert ok(client.get(f"/api/games/{b['id']}"))["state"] == b["state"]

    # several people at once, each in their own thread: each game is what it would be alone
    results, errors = {}, []

    def person(n: int) -> None:
        try:
            reply = start(
                client, game="421", bots="heuristic", seat=n % 2, seed=100 + n, options={"pot": 5}, player=f"p{n}"
            )
            final, sent = play_to_end(client, reply["id"], reply["state"], random.Random(n))
            results[n] = (reply["id"], final, sent)
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=person, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors, errors
    for n, (gid, _final, sent) in results.items():
        alone = start(client, game="421", bots="heuristic", seat=n % 2, seed=100 + n, options={"pot": 5})
        for body in sent:
            move(client, alone["id"], **{k: v for k, v in body.items() if k != "turn"})
        assert (
            ok(client.get(f"/api/games/{alone['id']}"))["state"]["log"]
            == ok(client.get(f"/api/games/{gid}"))["state"]["log"]
        )
        assert ok(client.get("/api/records", params={"player": f"p{n}"}))["records"][0]["games"] == 1


# ----------------------------------------------------------------------------- records


def test_records_survive_a_restart_and_a_game_in_progress_goes_on(db):
    first = make_client(db)
    done = start(first, game="420", bots="greedy", seat=1, seed=8, player="ada")
    final, _ = play_to_end(first, done["id"], done["state"], random.Random(1))
    for seed in range(9, 60):  # a game still in progress after one of the person's moves
        playing = start(first, game="421", bots="optimal", seat=0, seed=seed, player="ada", options={"pot": 15})
        state = playing["state"]
        if not state["over"]:
            state = move(first, playing["id"], **random_move(state, random.Random(2)))["state"]
            if not state["over"]:
                break
    assert not state["over"] and state["turn"] == 1
    before = ok(first.get(f"/api/games/{playing['id']}"))["state"]

    second = make_client(db)  # a new server on the same file
    record = ok(second.get("/api/records", params={"player": "ada"}))
    assert record["records"] == [
        {
            "game": "420",
            "players": 2,
            "opponents": "greedy",
            "games": 1,
            "wins": int(final["outcome"] > 0),
            "losses": int(final["outcome"] < 0),
        }
    ]
    assert record["recent"][0]["id"] == done["id"] and record["unfinished"] >= 1
    assert (
        ok(second.get(f"/api/games/{done['id']}"))["state"]["log"]
        == ok(first.get(f"/api/games/{done['id']}"))["state"]["log"]
    )
    restored = ok(second.get(f"/api/games/{playing['id']}"))["state"]
    assert restored == before  # rebuilt from its seed, bots and the person's move
    play_to_end(second, playing["id"], restored, random.Random(3))
    assert [r["opponents"] for r in ok(second.get("/api/records", params={"player": "ada"}))["records"]] == [
        "greedy",
        "optimal",
    ]
    assert ok(second.get("/api/records"))["player"] is None


def test_games_pushed_out_of_memory_come_back_from_the_records(db):
    small = TestClient(create_app(db, max_live=1), raise_server_exceptions=False)
    first = start(small, game="420", bots="foundation", seat=0, seed=12)
    state = move(small, first["id"], **random_move(first["state"], random.Random(0)))["state"]
    start(small, game="421", bots="random", seat=0, seed=13)  # pushes the first game out
    assert first["id"] not in small.app.state.store.live
    assert (
        ok(small.get(f"/api/games/{first['id']}"))["state"]
        == ok(make_client(db).get(f"/api/games/{first['id']}"))["state"]
    )
    back = ok(small.get(f"/api/games/{first['id']}"))["state"]
    assert {k: v for k, v in back.items() if k != "log"} == state and back["turn"] == 1


def test_a_recorded_game_replays_from_its_seed_and_moves(client):
    for game, bots, options, seat in [
        ("420", "random", {}, 0),
        ("420", ["greedy", "random", "optimal"], {}, 2),
        ("421", "random", {"pot": 9}, 1),
        ("421", ["random", "cautious"], {"pot": 5}, 0),
    ]:
        reply = start(client, game=game, bots=bots, seat=seat, seed=77, options=options)
        play_to_end(client, reply["id"], reply["state"], random.Random(4))
        record = ok(client.get(f"/api/records/{reply['id']}"))
        assert record["status"] == "over" and record["seed"] == 77 and record["seat"] == seat
        assert replay_actions(record) == record["events"]
        rolled = [d for e in record["events"] if "rolled" in e for d in e["rolled"]]
        assert rolled == record["dice"]
        assert [a for s, a in record["actions"] if s == seat] == [m["action"] for m in record["moves"]]


def test_a_web_game_replays_in_the_terminal_with_the_same_seed_and_moves(client):
    from play.__main__ import main
    from play.terminal import ScriptedInput

    reply = start(client, game="420", bots="optimal", seat=1, seed=31)
    final, _ = play_to_end(client, reply["id"], reply["state"], random.Random(5))
    record = ok(client.get(f"/api/records/{reply['id']}"))
    typed = [
        "keep " + " ".join(map(str, g420.KEEPS[m["action"]])) if g420.KEEPS[m["action"]] else "all"
        for m in record["moves"]
    ]
    out = io.StringIO()
    main(["420", "--opponent", "optimal", "--seat", "2", "--seed", "31"], input_fn=ScriptedInput(typed), out=out)
    assert final["result"] in out.getvalue()


def test_the_default_records_file_is_under_the_users_data_directory(monkeypatch, tmp_path):
    monkeypatch.setenv("XDG_DATA_HOME", str(tmp_path))
    assert default_db_path() == tmp_path / "dice-arena" / "records.sqlite3"
    monkeypatch.delenv("XDG_DATA_HOME")
    monkeypatch.setenv("HOME", str(tmp_path))
    assert default_db_path() == tmp_path / ".local" / "share" / "dice-arena" / "records.sqlite3"


# ----------------------------------------------------------------------------- the coach


def test_the_420_coach_gives_the_solvers_exact_values(client):
    reply = start(client, game="420", bots="optimal", seat=0, seed=SEED_6651)
    gid = reply["id"]
    advice = ok(client.get(f"/api/games/{gid}/coach"))
    position = advice["position"]
    sol = solver420.solve()
    h, o = g420.HAND_INDEX[(6, 6, 5, 1)], g420.HAND_INDEX[(5, 1, 1, 1)]
    assert position["value"] == pytest.approx(sol.value[h, o], abs=1e-12)
    assert {m["action"]: m["p"] for m in position["moves"]} == pytest.approx(
        {a: sol.q[a, o] for a in g420.legal_keeps((6, 6, 5, 1))}, abs=1e-12
    )
    best = position["moves"][0]
    assert best["best"] and best["text"] == "keep 6-6, reroll 5-1" and best["cost_pp"] == 0
    keep665 = next(m for m in position["moves"] if m["text"] == "keep 6-6-5, reroll 1")
    assert round(keep665["cost_pp"], 2) >= 0.53
    assert keep665["cost_pp"] == pytest.approx(
        100 * (sol.q[g420.KEEP_INDEX[(6, 6)], o] - sol.q[g420.KEEP_INDEX[(6, 6, 5)], o])
    )
    # from 6-6-5-1, keeping 6-6 is best whatever the opponent holds, and 6-6-5 always costs at least 0.53 pp
    for opp in g420.HANDS:
        if g420.is_win(opp):
            continue
        value, moves = web420.values((6, 6, 5, 1), opp)
        by_keep = {g420.KEEPS[m.action]: m.p for m in moves}
        assert max(by_keep, key=by_keep.get) == (6, 6)
        assert round(100 * (value - by_keep[(6, 6, 5)]), 2) >= 0.53

    # the review: the move made, the best, the cost
    move(client, gid, keep=[6, 6, 5])
    review = ok(client.get(f"/api/games/{gid}/coach"))["review"]
    assert review[0]["made"]["text"] == "keep 6-6-5, reroll 1" and review[0]["best"]["text"] == "keep 6-6, reroll 5-1"
    assert review[0]["cost_pp"] == pytest.approx(keep665["cost_pp"])


def test_the_421_coach_agrees_with_the_solver_at_every_decision():
    pot = 5
    sol = solver421.solve(pot)
    for t in range(1, pot):
        first = []
        for rank, hand in enumerate(g421.HANDS):
            for roll in (1, 2):
                value, moves = web421.values(pot, t, True, roll, 3, hand)
                chosen = next(m.p for m in moves if m.action == sol.action(t, True, roll, rank))
                assert chosen == pytest.approx(value, abs=1e-12)
                assert {m.action for m in moves} == set(np.flatnonzero(solver421.LEADER_LEGAL[rank]))
                if roll == 1:
                    first.append(value)
            for leader_rank in range(0, len(g421.HANDS), 7):
                for allowed, used in ((2, 1), (3, 1), (3, 2)):
                    value, moves = web421.values(pot, t, False, used, allowed, hand, g421.HANDS[leader_rank])
                    chosen = next(
                        m.p for m in moves if m.action == sol.action(t, False, used, rank, allowed, leader_rank)
                    )
                    assert chosen == pytest.approx(value, abs=1e-12)
        # the leader's chance before the round's first roll is the solver's W[t]
        assert float(np.dot(first, solver421.FIRST_ROLL)) == pytest.approx(sol.value[t], abs=1e-9)


def test_the_421_coach_in_a_game_recommends_what_the_optimal_bot_plays(client):
    from games.dice421.solver import OptimalAgent421
    from games.dice421 import codec as codec421
    from play.web.table import WebGame

    bot = OptimalAgent421()
    seen = 0
    for seed in range(6):
        reply = start(client, game="421", bots="optimal", seat=seed % 2, seed=seed, options={"pot": 8})
        gid, state = reply["id"], reply["state"]
        web: WebGame = client.app.state.store.get(gid)
        while not state["over"] and seen < 25:
            advice = ok(client.get(f"/api/games/{gid}/coach"))
            game = web.game
            want = bot.act(codec421.observe(game, web.seat), codec421.mask(game))
            assert advice["position"]["moves"][0]["action"] == want or advice["position"]["moves"][0][
                "p"
            ] == pytest.approx(next(m["p"] for m in advice["position"]["moves"] if m["action"] == want), abs=1e-12)
            seen += 1
            state = move(client, gid, action=advice["position"]["moves"][-1]["action"])["state"]
        review = ok(client.get(f"/api/games/{gid}/coach"))["review"]
        assert all(r["cost_pp"] >= 0 for r in review)
    assert seen >= 10


def test_no_coach_for_tables_the_solvers_do_not_cover(client):
    three = start(client, game="420", players=3, bots="greedy", seat=0, seed=1)
    advice = ok(client.get(f"/api/games/{three['id']}/coach"))
    assert advice["available"] is False and "two-player" in advice["why"]
    assert three["state"]["coach"] is False
    big = start(client, game="421", bots="heuristic", seat=0, seed=1, options={"pot": 40})
    assert ok(client.get(f"/api/games/{big['id']}/coach"))["why"].startswith("the exact coach solves pots up to 30")


# ----------------------------------------------------------------------------- the page and the command


def test_the_page_and_its_files_are_served_and_the_api_is_documented(client):
    page = client.get("/")
    assert page.status_code == 200 and "<title>Dice Arena" in page.text
    for name in ("app.js", "style.css"):
        assert client.get(f"/static/{name}").status_code == 200
    refused(client.get("/static/../app.py"), 404)
    schema = ok(client.get("/openapi.json"))
    assert {
        "/api/games",
        "/api/games/{game_id}",
        "/api/games/{game_id}/moves",
        "/api/games/{game_id}/coach",
        "/api/records",
    } <= set(schema["paths"])
    assert client.get("/docs").status_code == 200


def test_the_command_line_listens_on_loopback_by_default():
    import argparse

    from play.web.cli import DEFAULT_HOST, _is_loopback, add_arguments

    parser = argparse.ArgumentParser()
    add_arguments(parser)
    args = parser.parse_args([])
    assert args.host == DEFAULT_HOST == "127.0.0.1" and args.db is None
    assert parser.parse_args(["--port", "9000", "--db", "x.sqlite3"]).port == 9000
    with pytest.raises(SystemExit):
        parser.parse_args(["--port", "70000"])
    assert _is_loopback("127.0.0.1") and _is_loopback("::1") and _is_loopback("localhost")
    assert not _is_loopback("0.0.0.0")
