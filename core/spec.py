"""What a game declares about itself: its :class:`GameSpec` and its :class:`Option` s.

A game folder (``games/<name>/``) makes one ``GameSpec``; the registry
(``games``) finds it.  The spec points down to the game's engine, codec and
narrator directly and to everything else of the game by ``"module:attribute"``
strings that are imported only when used (:func:`load`), the way Gymnasium's
registry names entry points, so reading a spec imports no RL library.
"""

from __future__ import annotations

import importlib
from dataclasses import dataclass, field
from typing import Any, Callable, Mapping, Optional

import numpy as np

from core import engine
from core.dice import DiceSource

PLAYER_WORDS = {2: "two", 3: "three", 4: "four"}


class NoExactFigure(Exception):
    """A table whose exact figure cannot be computed (an evaluator of ``GameSpec.exact_tables``
    raises it); the message says why."""


def load(target: str) -> Any:
    """The object a ``"package.module:attribute"`` string names."""
    module, _, attr = target.partition(":")
    obj = importlib.import_module(module)
    return getattr(obj, attr) if attr else obj


@dataclass(frozen=True)
class Option:
    """A game option (421's pot): its default and allowed range."""

    name: str
    default: int
    low: int
    high: int
    help: str

    def check(self, value: Any) -> int:
        """``value`` as an int (a Python or numpy integer, not a bool), or ValueError in one line."""
        return engine.check_count(value, self.low, self.high, self.name)


@dataclass(frozen=True)
class GameSpec:
    """What a game is (players, options, actions, observation bounds) and what it offers
    (bots, envs, exact modules, front-ends), as the game's folder declares it."""

    name: str  # "420"
    title: str  # one line for help texts
    # the engine, codec and narrator (the game's folder)
    engine: type  # the rules engine class, core.engine's interface
    codec: Any  # module: observe(game, seat), legal_mask(actions), ...
    narrator: type  # core.narrate.Narrator subclass
    min_players: int
    max_players: int
    n_actions: int
    options: tuple[Option, ...] = ()
    how_to_move: str = ""  # what a person types at their turn, for help texts
    env_id: str = ""  # the Gymnasium id of the single-agent env
    env: str = ""  # "module:class" of that env (the id's entry point)
    aec_module: str = ""  # the PettingZoo AEC env module
    batched_env: str = ""  # "module:class" of the numpy VecEnv: (num_envs, opponent table, seed=, **options)
    batched_players: tuple[int, ...] = (2,)  # the player counts it plays
    # "module:class" of the numpy VecEnv whose other seats are batch policies asked live
    # (agents.batch_policy): (num_envs, policies, n_players=, seed=, weights=, **options)
    live_env: str = ""
    live_players: tuple[int, ...] = ()  # the player counts training plays in it
    # "module:function" (agent, n_players) -> a table the live env plays instead of asking the
    # agent live (faster), or ValueError for an agent it cannot tabulate
    live_table: str = ""
    observation_bounds: Callable[..., tuple[Any, Any, tuple[int, ...]]] = None  # (n_players, **options)
    # bots: name -> "module:factory"; factories take ``seed=`` when they need one
    bots: Mapping[str, str] = field(default_factory=dict)
    # bots that play some table sizes only: name -> those numbers of players
    bot_players: Mapping[str, tuple[int, ...]] = field(default_factory=dict)
    # bots kept in files of their own kind: suffix -> "module:factory" taking the path
    bot_files: Mapping[str, str] = field(default_factory=dict)
    shipped: str = ""  # the shipped trained bot, "ppo-420"
    more_shipped: tuple[str, ...] = ()  # other shipped trained bots, by name (checkpoints/NAME.pt)
    presets: str = ""  # "module:attr" of its training presets (a list of core.preset.Preset)
    # its own feature extractors for trained networks: name (as checkpoints write it) -> "module:class"
    features: Mapping[str, str] = field(default_factory=dict)
    suggested_bot: str = "random"  # what to suggest when the shipped bot cannot load
    exact: str = ""  # module with the exact two-player evaluator
    # module with exact tables of more players: seat_figures(agents, seat, **options) -> (P(not losing), best reply's)
    exact_n: str = ""
    default_bot: Mapping[int, str] = field(default_factory=dict)  # players -> the terminal's default opponent
    # How a finishing order ranks the players in tournament ratings: "left" ranks the
    # winners by the order they left the table, then the loser; "tied" ties every
    # winner above the loser; "winner" puts the one winner above the others, who tie.
    finish_ranking: str = "tied"
    # players (None: any other number) -> "module:function" giving a table's exact
    # P(not losing) per player (see play.tournament.exact_evaluator)
    exact_tables: Mapping[Optional[int], str] = field(default_factory=dict)
    # front-ends (play/)
    view: str = ""  # module of the game's words for the front-ends (play.terminal: intro, board, prompt, parse, ...)
    web: str = ""  # "module:attr" of the game's adapter for the web page (play.web)
    # module of the game's evaluation capabilities for ``python -m play evaluate`` (each optional:
    # two_player_lines, table_figures, table_note; see play.evaluate)
    evaluate: str = ""
    explain: str = ""  # "module:function" behind ``evaluate GAME --exact --explain`` (or "")
    export: str = ""  # "module" with write_policy_csv, policy_table, is_deterministic (or "")
    # module of the game's speed measurements for ``python -m train.bench`` (ENVS, and optionally
    # TRAINING, PEERS, SHARED_PEERS, summary; see train.bench)
    bench: str = ""

    # --- players and options ---------------------------------------------------
    def check_players(self, n_players: Any, what: str = "") -> int:
        """``n_players`` as an int if the game is played by that many (``what``: the argument's
        name, put before the message), or ValueError in one line: the one check of a table's size."""
        if (
            isinstance(n_players, (bool, np.bool_))
            or not isinstance(n_players, (int, np.integer))
            or not (self.min_players <= n_players <= self.max_players)
        ):
            raise ValueError(
                f"{what + ': ' if what else ''}{self.name} is played by {self.min_players} to "
                f"{self.max_players} players, got {n_players!r}"
            )
        return int(n_players)

    def check_options(self, options: Mapping[str, Any]) -> dict[str, int]:
        """The game options with defaults filled in; unknown names and bad values refused."""
        known = {o.name: o for o in self.options}
        unknown = set(options) - set(known)
        if unknown:
            allowed = ", ".join(known) or "none"
            raise ValueError(f"{self.name} has no option {', '.join(sorted(unknown))} (options: {allowed})")
        return {name: o.check(options.get(name, o.default)) for name, o in known.items()}

    @property
    def players(self) -> range:
        return range(self.min_players, self.max_players + 1)

    # --- engine ----------------------------------------------------------------
    def new_game(
        self, n_players: int, dice: Optional[DiceSource] = None, first_player: Optional[int] = None, **options
    ) -> engine.Game:
        n_players = self.check_players(n_players)
        return self.engine(n_players, dice=dice, first_player=first_player, **self.check_options(options))

    def observation_space(self, n_players: int = 2, **options):
        """The Gymnasium ``Box`` of an observation (imports gymnasium)."""
        import numpy as np
        from gymnasium import spaces

        low, high, shape = self.observation_bounds(self.check_players(n_players), **self.check_options(options))
        return spaces.Box(low, high, shape=shape, dtype=np.int64)

    def action_space(self):
        from gymnasium import spaces

        return spaces.Discrete(self.n_actions)

    # --- agents ----------------------------------------------------------------
    @property
    def agent_names(self) -> tuple[str, ...]:
        """Every agent a name can give: the bots and the shipped trained bots."""
        return (*self.bots, *self.shipped_bots)

    @property
    def shipped_bots(self) -> tuple[str, ...]:
        """The shipped trained bots, by name: ``shipped`` first, then ``more_shipped``."""
        return (*((self.shipped,) if self.shipped else ()), *self.more_shipped)

    def bots_for(self, n_players: int) -> tuple[str, ...]:
        return tuple(b for b in self.bots if self.plays(b, n_players))

    def plays(self, bot: str, n_players: int) -> bool:
        """Whether ``bot`` plays a table of ``n_players`` (every bot not in ``bot_players`` does)."""
        return n_players in self.bot_players.get(bot, (n_players,))

    def why_not(self, bot: str, n_players: int) -> str:
        """Why ``bot`` cannot sit at a table of ``n_players``, in words ("" when it can)."""
        if self.plays(bot, n_players):
            return ""
        words = " or ".join(PLAYER_WORDS.get(n, str(n)) for n in self.bot_players[bot])
        return f"the {bot} {self.name} bot is made for {words} players only, not {n_players}"


# --- the registered games ---------------------------------------------------------------
# Every game registered so far, by name: the one table a name is looked up in.  The registry
# (``games``) registers this project's games and the plug-ins' when it is imported (any module
# of a game's folder imports it first, as its package); below it, ``agents`` turns a name into
# a game here, so the layers under the registry need not import it.
REGISTRY: dict[str, GameSpec] = {}
# what a lookup made before the registry is imported says (here and in the checkpoint loader)
NONE_REGISTERED = "no game is registered (import games, the registry, first)"


def register(spec: GameSpec) -> GameSpec:
    """Add a game to :data:`REGISTRY` (a name once)."""
    if not isinstance(spec, GameSpec):
        raise ValueError(f"a game registers a GameSpec, got {type(spec).__name__}")
    if spec.name in REGISTRY:
        raise ValueError(f"game {spec.name!r} is registered twice")
    REGISTRY[spec.name] = spec
    return spec


def get(name: Any) -> GameSpec:
    """The spec of a registered game by name ("420", "421"; an int is read as its name)."""
    spec = REGISTRY.get(str(name))
    if spec is None and not REGISTRY:
        raise ValueError(f"unknown game {name!r}: {NONE_REGISTERED}")
    if spec is None:
        raise ValueError(f"unknown game {name!r}; choose one of {', '.join(REGISTRY)}")
    return spec


def names() -> tuple[str, ...]:
    """The registered games' names, in the order they were registered."""
    return tuple(REGISTRY)
