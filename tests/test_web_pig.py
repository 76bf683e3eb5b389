"""Pig on the web table (``play.web`` over ``games/pig/web.py``): a game started over the
API and played to the end by rolling and banking, the bots' moves, wrong moves refused
with one line, the generic table the page draws, records and replays, and the coach's
figures against the exact solver."""

from __future__ import annotations

import random
import warnings

import pytest

pytest.importorskip("fastapi", reason="the web extra is not installed (pip install -e '.[web]')")
pytest.importorskip("httpx", reason="FastAPI's TestClient needs httpx")

with warnings.catch_warnings():
    warnings.simplefilter("ignore")
    from fastapi.testclient import TestClient

from games.pig import game as gp  # noqa: E402
from games.pig import solver  # noqa: E402
from games.pig import web as webpig  # noqa: E402
from play.web.app import create_app  # noqa: E402
from play.web.records import replay_actions  # noqa: E402


@pytest.fixture
def client(tmp_path):
    return TestClient(create_app(tmp_path / "records.sqlite3"), raise_server_exceptions=False)


def ok(response, status: int = 200) -> dict:
    assert response.status_code == status, (response.status_code, response.text)
    return response.json()


def refused(response, status: int, *words: str) -> str:
    assert response.status_code == status, (response.status_code, response.text)
    message = response.json()["error"]
    assert "\n" not in message and message
    for word in words:
        assert word in message, (word, message)
    return message


def start(client, **body) -> dict:
    return ok(client.post("/api/games", json={"game": "pig", **body}), 201)


def check_table(state: dict) -> None:
    """The generic table: one card per seat with its score, whose turn, the turn total."""
    table = state["table"]
    assert table["kind"] == "seats" and len(table["seats"]) == state["players"]
    for seat in table["seats"]:
        assert int(seat["score"]) >= 0 and seat["detail"] == f"of {table['goal']}"
    if not state["over"]:
        assert table["to_move"] == state["to_move"]
        assert table["seats"][state["to_move"]]["status"] == "to move"


def play_to_end(client, gid: str, state: dict, rng: random.Random) -> dict:
    ways = 0
    while not state["over"]:
        assert state["waiting"] and [m["action"] for m in state["legal"]] == [gp.ROLL, gp.HOLD]
        assert state["hand"] is None and state["choices"] == {} and state["turn_title"].startswith("Your turn")
        check_table(state)
        roll = rng.random() < 0.7
        way = ways % 3
        ways += 1
        body = (
            {"action": gp.ROLL if roll else gp.HOLD}
            if way == 0
            else {"text": "roll" if roll else "bank"}
            if way == 1
            else {"text": "r" if roll else "b"}
        )
        reply = ok(client.post(f"/api/games/{gid}/moves", json={**body, "turn": state["turn"]}))
        assert reply["steps"] and all(set(s) == {"text", "event", "view"} for s in reply["steps"])
        assert reply["steps"][-1]["view"] == reply["state"]["table"]  # the last step's table is the game's
        state = reply["state"]
        assert state["turn"] < 500
    return state


@pytest.mark.parametrize("players, bots", [(2, ["optimal"]), (2, ["hold20"]), (3, ["hold20", "random"])])
def test_a_pig_game_plays_to_the_end_by_rolling_and_banking(client, players, bots):
    for seed in range(3):
        reply = start(client, players=players, bots=bots, seat=seed % players, seed=seed, player="pat")
        state = reply["state"]
        assert state["game"] == "pig" and state["seat"] == seed % players
        assert reply["steps"][0]["text"].startswith("First to 100 wins")
        final = play_to_end(client, reply["id"], state, random.Random(seed))
        assert final["over"] and final["outcome"] in (1.0, -1.0) and final["legal"] == []
        assert ("You win!" in final["result"]) == (final["outcome"] > 0)
        assert "You lose." in final["result"] or "You win!" in final["result"]
        winner = [s for s in final["table"]["seats"] if s["won"]]
        assert len(winner) == 1 and int(winner[0]["score"]) >= 100 and winner[0]["status"] == "wins"
        assert all(s["status"] == "loses" for s in final["table"]["seats"] if not s["won"])
        again = ok(client.get(f"/api/games/{reply['id']}"))["state"]
        assert again["log"][-1] == final["result"] and again["table"] == final["table"]
        record = ok(client.get(f"/api/records/{reply['id']}"))
        assert record["status"] == "over" and replay_actions(record) == record["events"]
    records = ok(client.get("/api/records", params={"player": "pat"}))["records"]
    assert sum(r["games"] for r in records) == 3 and records[0]["game"] == "pig"


def test_the_bots_move_between_the_persons_moves_and_each_step_shows_the_table(client):
    reply = start(client, bots="hold20", seat=0, seed=5)
    gid = reply["id"]
    reply = ok(client.post(f"/api/games/{gid}/moves", json={"text": "bank"}))
    texts = [s["text"] for s in reply["steps"]]
    assert texts[0].startswith("Player 1 (you) holds:")
    assert any(t.startswith("Player 2 (hold20)") for t in texts)  # the bot's turn, roll by roll
    bot_steps = [s for s in reply["steps"] if s["event"].get("seat") == 1]
    assert bot_steps and all(s["view"]["to_move"] in (0, 1) for s in bot_steps)
    rolls = [s for s in bot_steps if s["event"]["type"] == "roll"]
    for s in rolls:
        assert s["view"]["centre"]["value"] == str(s["event"]["turn_total"])
        assert s["view"]["seats"][1]["dice"] == [s["event"]["value"]]


def test_wrong_moves_get_a_4xx_with_one_clear_line_and_change_nothing(client):
    reply = start(client, bots="optimal", seat=0, seed=1)
    gid, state = reply["id"], reply["state"]
    url = f"/api/games/{gid}/moves"
    refused(client.post(url, json={"action": 2}), 422, "0 (roll) or 1 (hold)")
    refused(client.post(url, json={"reroll": [3]}), 422, "no dice to choose", "roll", "bank")
    refused(client.post(url, json={"keep": [3]}), 422, "no dice to choose")
    refused(client.post(url, json={"stop": True}), 422, "no dice to choose")
    refused(client.post(url, json={"text": "jump"}), 422, "could not read", '"r" to roll')
    refused(client.post(url, json={"text": "roll", "action": 0}), 422, "exactly one")
    refused(client.post(url, json={"text": "roll", "turn": 4}), 409, "out of turn")
    assert ok(client.get(f"/api/games/{gid}"))["state"] == state
    refused(
        client.post("/api/games", json={"game": "pig", "bots": "optimal", "options": {"goal": 50}}), 422, "goal 100"
    )
    refused(client.post("/api/games", json={"game": "pig", "players": 3, "bots": "optimal"}), 422, "two players only")
    refused(client.post("/api/games", json={"game": "pig", "options": {"goal": 0}}), 422, "goal")
    # a table without bots named gets one that can sit there
    assert start(client, seed=2, options={"goal": 30})["state"]["bots"] != ["optimal"]
    state = play_to_end(client, gid, state, random.Random(0))
    refused(client.post(url, json={"text": "roll"}), 409, "over")


def test_a_short_game_with_another_die_and_goal(client):
    reply = start(client, bots="hold20", seat=1, seed=9, options={"goal": 20, "faces": 8})
    final = play_to_end(client, reply["id"], reply["state"], random.Random(2))
    assert final["table"]["goal"] == 20 and final["options"] == {"goal": 20, "faces": 8}
    assert final["coach"] is True


def test_the_pig_coach_gives_the_solvers_exact_values(client):
    sol = solver.solve()
    reply = start(client, bots="optimal", seat=0, seed=3)
    gid = reply["id"]
    advice = ok(client.get(f"/api/games/{gid}/coach"))
    assert advice["available"] is True
    snap = advice["position"]["snapshot"]
    i, j, k = snap["score"], snap["opponent"], snap["turn_total"]
    assert advice["position"]["value"] == pytest.approx(sol.value[i, j, k], abs=1e-12)
    best = advice["position"]["moves"][0]
    assert best["action"] == (gp.ROLL if sol.policy[i, j, k] > 0.5 else gp.HOLD)
    assert {m["text"] for m in advice["position"]["moves"]} == {"roll", f"bank {k}"}
    # at every decision the better move's value is the solver's V, and its choice the policy's
    for i, j, k in [(0, 0, 5), (50, 80, 12), (90, 90, 9), (10, 95, 30), (97, 0, 2)]:
        value, moves = webpig.values(i, j, k)
        by = {m.action: m.p for m in moves}
        assert value == pytest.approx(max(by.values()), abs=1e-12)
        if abs(by[gp.ROLL] - by[gp.HOLD]) > 1e-9:
            assert (by[gp.ROLL] > by[gp.HOLD]) == (sol.policy[i, j, k] > 0.5)
    ok(client.post(f"/api/games/{gid}/moves", json={"action": 1 - best["action"]}))
    review = ok(client.get(f"/api/games/{gid}/coach"))["review"]
    assert review[0]["made"]["action"] == 1 - best["action"] and review[0]["cost_pp"] > 0


def test_no_pig_coach_at_tables_the_solver_does_not_cover(client):
    three = start(client, players=3, bots="hold20", seed=1)
    assert three["state"]["coach"] is False and "two-player" in three["state"]["coach_why_not"]
    far = start(client, bots="hold20", seed=1, options={"goal": 500})
    why = ok(client.get(f"/api/games/{far['id']}/coach"))["why"]
    assert why.startswith("the exact coach solves goals up to 100")
