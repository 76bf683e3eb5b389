"""The game registry, the one engine interface, the one game loop and the layers."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import numpy as np
import pytest

import agents
import games
from agents.base import RandomAgent
from envs import game420
from core.dice import RandomDice, ScriptedDice
from core.engine import IllegalAction, check_action, play_out

ROOT = Path(__file__).resolve().parent.parent
LAYERS = ("core", "envs", "games", "agents", "train", "play")  # low to high


def imported_modules(path: Path) -> set[str]:
    """Top-level package names a file imports (statically, or by importlib / games.load strings)."""
    tree = ast.parse(path.read_text())
    names = {a.name.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    names |= {n.module.split(".")[0] for n in ast.walk(tree) if isinstance(n, ast.ImportFrom) and n.module and n.level == 0}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("import_module", "load", "__import__") and call.args and isinstance(call.args[0], ast.Constant):
            names.add(str(call.args[0].value).split(".")[0].split(":")[0])
    return names


@pytest.mark.parametrize("layer", LAYERS)
def test_layers_only_look_down(layer):
    above = set(LAYERS[LAYERS.index(layer) + 1:])
    offenders = {}
    for path in (ROOT / layer).rglob("*.py"):
        bad = imported_modules(path) & above
        if bad:
            offenders[str(path.relative_to(ROOT))] = sorted(bad)
    assert not offenders, f"imports from a layer above: {offenders}"


def test_the_registry_imports_only_the_engine_layer_and_names_the_rest_by_strings():
    tree = ast.parse((ROOT / "games" / "__init__.py").read_text())
    top = {a.name.split(".")[0] for n in tree.body if isinstance(n, ast.Import) for a in n.names}
    top |= {n.module.split(".")[0] for n in tree.body if isinstance(n, ast.ImportFrom) and n.module}
    assert top & set(LAYERS) <= {"core", "envs"}


def test_no_module_outside_the_registry_tests_a_game_name():
    pattern = re.compile(r"""(==|!=|\bin)\s*\(?\s*["']42[01]["']|["']42[01]["']\s*(==|!=)""")
    offenders = []
    for layer in LAYERS:
        for path in (ROOT / layer).rglob("*.py"):
            for number, line in enumerate(path.read_text().splitlines(), 1):
                if pattern.search(line):
                    offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_every_game_is_registered_once_with_what_the_layers_need():
    assert games.names() == ("420", "421")
    for name in games.names():
        spec = games.get(name)
        assert spec.name == name and games.get(int(name)) is spec
        assert spec.shipped in spec.agent_names and set(spec.bots) < set(spec.agent_names)
        for target in (*spec.bots.values(), spec.exact, spec.terminal, spec.evaluate, spec.batched_env,
                       spec.aec_module):
            assert games.load(target) is not None, target
        assert spec.env_id in __import__("gymnasium").envs.registry
    with pytest.raises(ValueError, match="unknown game '422'; choose one of 420, 421"):
        games.get("422")


@pytest.mark.parametrize("name", ["420", "421"])
def test_every_bot_of_the_registry_is_made_by_make_agent(name):
    spec = games.get(name)
    for bot in spec.bots:
        agent = agents.make_agent(name, bot, seed=1)
        assert callable(agent.act), bot
    assert isinstance(agents.make_agent(name, "random", seed=1), RandomAgent)
    with pytest.raises(ValueError, match="unknown agent"):
        agents.make_agent(name, "nobody")


@pytest.mark.parametrize("name", ["420", "421"])
def test_player_counts_and_options_are_checked(name):
    spec = games.get(name)
    for n in (spec.min_players - 1, spec.max_players + 1, True, 2.0):
        with pytest.raises(ValueError, match="played by"):
            spec.new_game(n)
    with pytest.raises(ValueError, match="has no option"):
        spec.new_game(2, colour="red")
    for o in spec.options:
        for bad in (o.low - 1, o.high + 1, "5", 2.5):
            with pytest.raises(ValueError, match=o.name):
                spec.new_game(2, **{o.name: bad})


@pytest.mark.parametrize("name", ["420", "421"])
def test_the_engine_interface_over_random_games(name):
    """current_player, legal_actions, apply, is_over, returns, outcome and clone, the same in both games,
    and every observation inside the registry's space."""
    spec = games.get(name)
    rng = np.random.default_rng(0)
    for n in spec.players:
        space = spec.observation_space(n)
        for seed in range(6):
            game = spec.new_game(n, dice=RandomDice(seed))
            steps = 0
            while not game.is_over:
                seat = game.current_player
                legal = game.legal_actions()
                assert len(legal) > 1 or name == "421", "the engine plays forced turns itself"
                assert legal and game.outcome(seat) is None
                obs = spec.codec.observe(game, seat)
                assert space.contains(obs), (n, obs)
                assert spec.codec.legal_mask(legal).sum() == len(legal)
                if steps == 3:
                    twin = game.clone(dice=RandomDice(99))
                    twin.apply(legal[0])
                    assert game.current_player == seat and game.legal_actions() == legal
                game.apply(int(rng.choice(legal)))
                steps += 1
            returns = game.returns()
            assert game.current_player is None and game.legal_actions() == []
            assert sorted(returns) == [-1.0] + [1.0] * (n - 1)
            assert [game.outcome(s) for s in range(n)] == returns
            with pytest.raises(IllegalAction, match="over"):
                game.apply(0)


def test_check_action_takes_integers_only():
    assert check_action(3) == 3 and check_action(np.int64(4)) == 4 and check_action(np.array(5)) == 5
    for bad in (1.0, True, "1", None, np.array([1]), np.float32(2)):
        with pytest.raises(IllegalAction, match="integer"):
            check_action(bad)


class Scripted:
    name = "scripted"

    def __init__(self, actions):
        self.actions = list(actions)

    def act(self, obs, mask):
        return self.actions.pop(0)


def test_play_out_asks_each_seat_and_reports_every_event_once():
    # 420, two players: Red 6-6-5-1, Blue 3-2-1-1; Red keeps 6-6 and rolls 5-3 = 20.
    spec = games.get("420")
    game = spec.new_game(2, dice=ScriptedDice([1, 5, 6, 6, 1, 1, 2, 3, 3, 5]))
    seen = []
    play_out(game, [Scripted([game420.KEEP_INDEX[(6, 6)]]), Scripted([])], spec.codec, on_event=seen.append)
    assert seen == game.events
    assert [e["type"] for e in seen] == ["start", "round", "roll", "roll", "roll", "round_won", "game_end"]
    assert game.returns() == [1.0, -1.0]


def test_play_out_stops_where_asked():
    spec = games.get("421")
    bots = [agents.make_agent("421", "heuristic"), agents.make_agent("421", "heuristic")]
    game = spec.new_game(2, dice=RandomDice(3))
    play_out(game, bots, spec.codec, until=lambda g: g.current_player == 1)
    assert game.is_over or game.current_player == 1


def test_dice_of_any_number_of_faces():
    rolls = RandomDice(0).roll(2000, faces=3)
    assert set(rolls) == {1, 2, 3}
    assert set(RandomDice(0).roll(2000)) == set(range(1, 7))
    script = ScriptedDice([8, 2], faces=8)
    with pytest.raises(ValueError, match="do not fit a die of 6 faces"):
        script.roll(1)
    assert script.roll(2, faces=8) == (8, 2) and script.rolled == 2
    with pytest.raises(ValueError, match=r"must be in 1\.\.6"):
        ScriptedDice([7])
