"""The game registry, the one engine interface, the one game loop and the layers."""

from __future__ import annotations

import ast
import dataclasses
import re
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

import agents
import core.spec
import games
from agents.base import RandomAgent
from agents.ppo_agent import CheckpointError, check_policy_spec
from games.dice420 import game as game420
from core.dice import RandomDice, ScriptedDice
from core.engine import IllegalAction, check_action, play_out

ROOT = Path(__file__).resolve().parent.parent
# Low to high.  A game folder (games/<name>/) sits over the generic envs and agents and under
# the registry (games/__init__.py), which the front-ends (train, play) sit on.
LAYERS = ("core", "envs", "agents", "game", "registry", "train", "play")
GENERIC = ("core", "envs", "agents", "registry", "train", "play")
GAME_FOLDERS = sorted(p.name for p in (ROOT / "games").iterdir() if (p / "__init__.py").exists())

# Imports that still look up, to be paid off as the generic layers take the games' place;
# the test fails on any other, and on an entry here that no longer holds (so the list stays true).
UPWARD_DEBTS: set[tuple[str, str]] = set()
# Generic modules that still name a game, to be moved into the games' folders or made generic.
NAMING_DEBTS: set[str] = set()


def layer_of(module: str) -> str | None:
    """The layer of a dotted module name of the project (None for other packages)."""
    parts = module.split(".")
    if parts[0] == "games":
        return "game" if len(parts) > 1 and parts[1] in GAME_FOLDERS else "registry"
    return parts[0] if parts[0] in LAYERS else None


def file_layer(path: Path) -> str:
    rel = path.relative_to(ROOT)
    if rel.parts[0] == "games":
        return "game" if len(rel.parts) > 2 else "registry"
    return rel.parts[0]


def imported_modules(path: Path) -> set[str]:
    """Dotted module names a file imports (statically, or by importlib / load strings)."""
    tree = ast.parse(path.read_text())
    names = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    for n in ast.walk(tree):
        if isinstance(n, ast.ImportFrom) and n.module and n.level == 0:
            names |= {f"{n.module}.{a.name}" for a in n.names} if n.module == "games" else {n.module}
    for call in (n for n in ast.walk(tree) if isinstance(n, ast.Call)):
        func = call.func
        name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
        if name in ("import_module", "load", "__import__") and call.args and isinstance(call.args[0], ast.Constant):
            names.add(str(call.args[0].value).split(":")[0])
    return names


def project_files():
    for layer in ("core", "envs", "agents", "games", "train", "play"):
        yield from sorted((ROOT / layer).rglob("*.py"))


def test_layers_only_look_down():
    found = set()
    for path in project_files():
        mine = file_layer(path)
        for module in imported_modules(path):
            theirs = layer_of(module)
            if theirs == "game" and module.split(".")[1] in GAME_FOLDERS and mine == "game":
                own = path.relative_to(ROOT).parts[1]
                assert module.split(".")[1] == own, f"{path.relative_to(ROOT)} imports another game's {module}"
                continue
            if theirs is not None and LAYERS.index(theirs) > LAYERS.index(mine):
                found.add((str(path.relative_to(ROOT)), theirs))
    assert found - UPWARD_DEBTS == set(), f"imports from a layer above: {sorted(found - UPWARD_DEBTS)}"
    assert UPWARD_DEBTS - found == set(), f"paid off, remove from UPWARD_DEBTS: {sorted(UPWARD_DEBTS - found)}"


def _docstrings(tree) -> set[int]:
    kinds = (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)
    return {
        id(n.body[0].value)
        for n in ast.walk(tree)
        if isinstance(n, kinds)
        and n.body
        and isinstance(n.body[0], ast.Expr)
        and isinstance(n.body[0].value, ast.Constant)
    }


def games_named(path: Path) -> set[str]:
    """The registered games a file names in its code (names, strings, imports; not its docstrings)."""
    tree = ast.parse(path.read_text())
    docs = _docstrings(tree)
    texts = []
    for n in ast.walk(tree):
        if isinstance(n, ast.Constant) and isinstance(n.value, str) and id(n) not in docs:
            texts.append(n.value)
        elif isinstance(n, ast.Name):
            texts.append(n.id)
        elif isinstance(n, ast.Attribute):
            texts.append(n.attr)
        elif isinstance(n, (ast.FunctionDef, ast.ClassDef)):
            texts.append(n.name)
        elif isinstance(n, ast.ImportFrom) and n.module:
            texts += [n.module, *(a.name for a in n.names)]
        elif isinstance(n, ast.Import):
            texts += [a.name for a in n.names]
    named = set()
    for name in games.names():
        folder = games.get(name).engine.__module__.split(".")[1]
        word = re.compile(rf"(?<![0-9A-Za-z]){re.escape(name)}(?![0-9])|{re.escape(folder)}", re.I)
        if any(word.search(t) for t in texts):
            named.add(name)
    return named


def test_generic_modules_name_no_game():
    """Only a game's folder names it (and the registry's one list, games.GAMES)."""
    found = {
        str(p.relative_to(ROOT))
        for p in project_files()
        if file_layer(p) in GENERIC and p != ROOT / "games" / "__init__.py" and games_named(p)
    }
    assert found - NAMING_DEBTS == set(), f"generic modules naming a game: {sorted(found - NAMING_DEBTS)}"
    assert NAMING_DEBTS - found == set(), f"paid off, remove from NAMING_DEBTS: {sorted(NAMING_DEBTS - found)}"


def test_the_layer_checks_can_fail(tmp_path):
    """The checks above see what they look for: a generic module naming a game or importing one."""
    fake = tmp_path / "x.py"
    fake.write_text('"""Docstrings may say 420."""\nfrom games.dice420 import game\nNAME = "421"\n')
    assert games_named(fake) == {"420", "421"}
    assert "games.dice420" in imported_modules(fake) and layer_of("games.dice420") == "game"
    assert layer_of("games") == "registry" and layer_of("core.dice") == "core"


# A game another package would declare: Pig under another name (tests/test_registry.py's own)
PLUGIN_SPEC = dataclasses.replace(games.get("pig"), name="pig-plugin", env_id="", env="")


def test_the_registry_finds_games_through_one_list_and_entry_points(monkeypatch, capsys):
    from importlib.metadata import EntryPoint

    assert [games.load(t).name for t in games.GAMES] == list(games.names())[: len(games.GAMES)]
    points = [
        EntryPoint("mine", f"{__name__}:PLUGIN_SPEC", games.ENTRY_POINT_GROUP),
        EntryPoint("broken", f"{__name__}:NO_SUCH_SPEC", games.ENTRY_POINT_GROUP),
        EntryPoint("not-a-spec", f"{__name__}:ROOT", games.ENTRY_POINT_GROUP),
    ]
    asked = []
    monkeypatch.setattr(games, "entry_points", lambda group: asked.append(group) or points)
    monkeypatch.setattr(core.spec, "REGISTRY", dict(core.spec.REGISTRY))  # the plug-in is registered here only
    assert games.discover_plugins() == ["pig-plugin"] and asked == ["dice_arena.games"]
    assert games.get("pig-plugin") is PLUGIN_SPEC and agents.make_agent("pig-plugin", "hold20") is not None
    err = capsys.readouterr().err.splitlines()
    assert len(err) == 2 and "plug-in 'broken'" in err[0] and "'not-a-spec'" in err[1] and "not a GameSpec" in err[1]
    assert games.discover_plugins() == []  # already registered: not twice


def test_the_layers_below_the_registry_find_games_without_importing_it(monkeypatch):
    """Names are looked up in core's table of registered games, which the registry fills on import:
    agents and checkpoints import no game and no layer above them, and find the registry's games."""
    code = "import sys, agents, agents.ppo_agent; print(sorted({m.split('.')[0] for m in sys.modules}))"
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, check=True, cwd=ROOT)
    assert not {"games", "train", "play"} & set(ast.literal_eval(loaded.stdout))
    assert games.names() == core.spec.names() and all(games.get(n) is core.spec.get(n) for n in games.names())
    with pytest.raises(CheckpointError, match=r"'Nope' \(known: .*Rank421Features.*\)$"):
        check_policy_spec({"features_extractor": "Nope"}, "a.json")  # games registered: no hint
    monkeypatch.setattr(core.spec, "REGISTRY", {})
    with pytest.raises(ValueError, match="unknown game '420': no game is registered"):
        agents.make_agent("420", "random")
    # a checkpoint naming a game's own inputs says what is missing, not only which inputs are known
    with pytest.raises(CheckpointError, match=r"'Rank421Features' \(known: .*\); no game is registered"):
        check_policy_spec({"features_extractor": "Rank421Features"}, "ppo-421.json")


def test_no_module_outside_the_registry_tests_a_game_name():
    pattern = re.compile(r"""(==|!=|\bin)\s*\(?\s*["']42[01]["']|["']42[01]["']\s*(==|!=)""")
    offenders = []
    for path in project_files():
        if file_layer(path) == "game":
            continue
        for number, line in enumerate(path.read_text().splitlines(), 1):
            if pattern.search(line):
                offenders.append(f"{path.relative_to(ROOT)}:{number}: {line.strip()}")
    assert not offenders, "\n".join(offenders)


def test_every_game_is_registered_once_with_what_the_layers_need():
    assert games.names()[:2] == ("420", "421")
    for name in games.names():
        spec = games.get(name)
        assert spec.name == name and games.get(name) is spec
        assert set(spec.bots) <= set(spec.agent_names) and (not spec.shipped or spec.shipped in spec.agent_names)
        offered = (
            *spec.bots.values(),
            spec.exact,
            spec.exact_n,
            spec.view,
            spec.web,
            spec.evaluate,
            spec.explain,
            spec.export,
            spec.batched_env,
            spec.live_env,
            spec.live_table,
            spec.aec_module,
            spec.env,
            spec.presets,
            spec.bench,
            *spec.features.values(),
            *spec.bot_files.values(),
            *spec.exact_tables.values(),
        )
        for target in filter(None, offered):
            assert games.load(target) is not None, target
        assert spec.env_id in __import__("gymnasium").envs.registry
    assert games.get(420) is games.get("420")
    with pytest.raises(ValueError, match=f"unknown game '422'; choose one of {', '.join(games.names())}"):
        games.get("422")


@pytest.mark.parametrize("name", games.names())
def test_every_bot_of_the_registry_is_made_by_make_agent(name):
    spec = games.get(name)
    for bot in spec.bots:
        agent = agents.make_agent(name, bot, seed=1)
        assert callable(agent.act), bot
    assert isinstance(agents.make_agent(name, "random", seed=1), RandomAgent)
    with pytest.raises(ValueError, match="unknown agent"):
        agents.make_agent(name, "nobody")


@pytest.mark.parametrize("name", games.names())
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


@pytest.mark.parametrize("name", games.names())
def test_the_engine_interface_over_random_games(name):
    """current_player, legal_actions, apply, is_over, returns, outcome and clone, the same in every game,
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
            assert set(returns) == {-1.0, 1.0}, "someone lost, someone did not"
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
