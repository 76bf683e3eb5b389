"""Fuzzing in the suite: property-based tests (hypothesis) that drive random legal and
illegal actions of every type through every env and both engines, and random text
through the terminal prompts' parsers.

What holds at every step, whatever was asked:

* before the end the mask is never empty, and it is exactly what the env accepts;
* 421 conserves tokens (the players' tokens plus the pot make the initial pot);
* observations lie inside their spaces;
* an action that is illegal, out of range or not an integer raises the documented
  error (``core.engine.IllegalAction``, a ``ValueError``; PettingZoo's wrappers:
  their own documented reactions) and nothing else, and changes nothing;
* the same seed and the same actions give the same game.

How many examples run is the hypothesis profile's (``tests/conftest.py``: ``ci`` by
default, ``--hypothesis-profile=long`` for a bug hunt).  Each example plays a whole
game: the first ``DRAWN_MOVES`` moves are drawn by hypothesis, the rest are legal
moves from a generator seeded by the example, so every example reaches the end.

After the fuzz tests: Vec421Env's action and opponent-table checks case by case, then
the bugs this suite found (Vec420Env's action checks, a bool through the wrapped AEC env),
fixed and kept as tests.
"""

from __future__ import annotations

import functools
import warnings
from decimal import Decimal
from fractions import Fraction

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

import agents
import games
from games.dice420 import race as race420
from games.dice420 import codec as codec420
from games.dice421 import codec as codec421
from games.dice420 import game as g420
from games.dice421 import game as g421
from games.dice420 import aec as dice420_v0
from games.dice421 import aec as dice421_v0
from core.dice import RandomDice
from games.dice420.env import Dice420Env
from games.dice421.env import Dice421Env
from core.engine import IllegalAction
from games.dice421.policy import Policy421
from games.dice420.vec import Vec420Env
from games.dice421.vec import Vec421Env
from games.dice420 import view as view420
from games.dice421 import view as view421
from play.prompt import Command
from play.terminal import read_command

DRAWN_MOVES = 25  # moves per game chosen by hypothesis; the rest are legal moves
MAX_MOVES = 2000  # a game longer than this is a bug
SEEDS = st.integers(0, 2**32 - 1)
POTS = st.sampled_from([1, 2, 3, 5, 15])  # 421: small pots and the default

# --- actions of every type --------------------------------------------------------

INT_TYPES = (np.int8, np.int16, np.int32, np.int64, np.uint8, np.uint16, np.uint32, np.uint64)
EDGE_INTS = (-(2**70), -(2**63) - 1, -(2**63), -(2**31), 2**31, 2**63 - 1, 2**63, 2**64 - 1, 2**64, 2**70)


def _fits(dtype, value: int) -> bool:
    info = np.iinfo(dtype)
    return info.min <= value <= info.max


def python_ints(n_actions: int, big: bool = True) -> st.SearchStrategy:
    """Near the action range, and (``big``) at and past the edges of every integer type."""
    near = st.integers(-3, n_actions + 2)
    return near | st.sampled_from(EDGE_INTS if big else [v for v in EDGE_INTS if _fits(np.int64, v)])


def numpy_ints(n_actions: int, types=INT_TYPES) -> st.SearchStrategy:
    """Numpy integer scalars of every type: near the action range and at the type's edges."""

    def values(t):
        info = np.iinfo(t)
        return st.sampled_from(
            sorted(v for v in {*range(-3, n_actions + 3), *EDGE_INTS, info.min, info.max} if _fits(t, v))
        ).map(t)

    return st.one_of([values(t) for t in types])


def not_integers(n_actions: int, bools: bool = True) -> st.SearchStrategy:
    """Scalars that are not integers (some look like one: 1.0, True, "1", 1+0j)."""
    near = st.integers(-3, n_actions + 2)
    return st.one_of(
        st.floats(),
        near.map(float),
        near.map(np.float64),
        near.map(np.float32),
        st.sampled_from([np.nan, np.inf, -np.inf, -0.0]),
        *([st.booleans(), st.sampled_from([np.True_, np.False_])] if bools else []),
        st.text(max_size=3),
        near.map(str),
        st.binary(max_size=2),
        st.none(),
        near.map(complex),
        near.map(Decimal),
        st.decimals(places=2, allow_nan=True),
        near.map(Fraction),
    )


def scalar_actions(n_actions: int) -> st.SearchStrategy:
    """One action as a scalar, integer (in or out of range) or not."""
    return st.one_of(
        python_ints(n_actions, big=True), numpy_ints(n_actions, INT_TYPES), not_integers(n_actions, bools=True)
    )


def any_actions(n_actions: int) -> st.SearchStrategy:
    """One action in any form: scalars, 0-d arrays (integer or not), sequences and arrays."""
    near = st.integers(-3, n_actions + 2)
    return st.one_of(
        scalar_actions(n_actions),
        numpy_ints(n_actions).map(np.array),  # a 0-d integer array: an integer
        near.map(lambda v: np.array(float(v))),
        st.booleans().map(np.array),
        st.lists(near, max_size=2),
        st.lists(near, min_size=1, max_size=2).map(tuple),
        st.lists(near, min_size=1, max_size=2).map(np.array),  # (1,) and (2,) arrays
        st.builds(object),
    )


def as_action(value):
    """The integer ``value`` stands for as one action, or None if it is not an integer: a
    Python or numpy integer, or a 0-d integer array (the envs' documented contract)."""
    if isinstance(value, (bool, np.bool_)):
        return None
    if isinstance(value, (int, np.integer)):
        return int(value)
    if isinstance(value, np.ndarray) and value.shape == () and value.dtype.kind in "iu":
        return int(value)
    return None


LEGAL_FORMS = (int, np.int64, np.int32, np.uint8, np.array)


def one_move(data, legal, n_actions: int):
    """Mostly a legal action (in some integer form), else anything at all."""
    if data.draw(st.integers(0, 3), label="legal?"):
        return data.draw(
            st.tuples(st.sampled_from(list(legal)), st.sampled_from(LEGAL_FORMS)).map(lambda t: t[1](t[0])),
            label="legal action",
        )
    return data.draw(any_actions(n_actions), label="any action")


def rng_move(rng: np.random.Generator, mask: np.ndarray) -> int:
    return int(rng.choice(np.flatnonzero(mask)))


# --- opponents, cached -------------------------------------------------------------


@functools.lru_cache(maxsize=None)
def own_hand_table420(name: str) -> np.ndarray:
    return race420.own_hand_table(agents.make_agent("420", name))


def check_tokens421(game) -> None:
    assert sum(game.tokens) + game.pot == game.initial_pot, (game.tokens, game.pot)


# --- engines -------------------------------------------------------------------------


def engine_snapshot(spec, game):
    return (
        len(game.events),
        repr(game),
        tuple(game.legal_actions()),
        game.is_over,
        tuple(spec.codec.observe(game, s).tobytes() for s in range(game.n_players)),
        game.dice.rng.bit_generator.state,
    )


def check_engine(spec, game, space) -> None:
    legal = game.legal_actions()
    mask = spec.codec.mask(game)
    assert np.array_equal(np.flatnonzero(mask), sorted(legal))
    assert bool(legal) == (not game.is_over) == (game.current_player is not None)
    for seat in range(game.n_players):
        obs = spec.codec.observe(game, seat)
        assert space.contains(obs), (seat, obs)
    if spec.name == "421":
        check_tokens421(game)
    if game.is_over:
        assert sorted(game.returns()) == [-1.0] + [1.0] * (game.n_players - 1)
    else:
        assert game.returns() == [0.0] * game.n_players


@pytest.mark.parametrize("name", ["420", "421"])
@given(data=st.data())
def test_engines(name, data):
    """Game420 / Game421 from the registry: legal moves play, everything else raises
    IllegalAction and changes nothing; the same seed and moves replay the same game."""
    spec = games.get(name)
    n = data.draw(st.sampled_from(list(spec.players)), label="n_players")
    options = {"pot": data.draw(POTS, label="pot")} if name == "421" else {}
    seed = data.draw(SEEDS, label="seed")
    space = spec.observation_space(n, **options)
    game = spec.new_game(n, dice=RandomDice(seed), **options)
    rng = np.random.default_rng(seed)
    played = []
    for move in range(MAX_MOVES):
        check_engine(spec, game, space)
        if game.is_over:
            break
        legal = game.legal_actions()
        action = one_move(data, legal, spec.n_actions) if move < DRAWN_MOVES else rng_move(rng, spec.codec.mask(game))
        if as_action(action) in legal:
            game.apply(action)
            played.append(action)
        else:
            before = engine_snapshot(spec, game)
            with pytest.raises(IllegalAction):
                game.apply(action)
            assert engine_snapshot(spec, game) == before
    assert game.is_over
    after = data.draw(any_actions(spec.n_actions), label="after the end")
    with pytest.raises(IllegalAction):
        game.apply(after)
    replay = spec.new_game(n, dice=RandomDice(seed), **options)
    for action in played:
        replay.apply(action)
    assert replay.events == game.events


# --- Gymnasium envs --------------------------------------------------------------------


def env_snapshot(env, codec):
    game = env.game
    return (
        codec.observe(game, env.seat).tobytes(),
        env.action_masks().tobytes(),
        len(game.events),
        env._ended,
        repr(game),
        env.np_random.bit_generator.state,
    )


def run_gym_episode(env, codec, space, data, rng, seed, options):
    """One episode of a Dice4xxEnv; returns what the replay must reproduce and the actions."""
    n_actions = env.action_space.n
    obs, info = env.reset(seed=seed, options=options)
    trace, accepted = [obs.tobytes()], []
    for move in range(MAX_MOVES):
        mask = env.action_masks()
        assert space.contains(obs) and mask.any()
        assert np.array_equal(info["action_mask"], mask)
        if codec is codec421:
            check_tokens421(env.game)
        decided = info["decided"]
        if decided:
            assert np.array_equal(np.flatnonzero(mask), [0])
        else:
            assert np.array_equal(np.flatnonzero(mask), env.game.legal_actions()) and mask.sum() >= 2
        action = one_move(data, np.flatnonzero(mask), n_actions) if move < DRAWN_MOVES else rng_move(rng, mask)
        value = as_action(action)
        in_range = value is not None and 0 <= value < n_actions
        fine = value is not None and ((decided and in_range) or bool(in_range and mask[value]))
        if not fine and (value is None or env.illegal_action == "raise"):
            before = env_snapshot(env, codec)
            with pytest.raises(IllegalAction):
                env.step(action)
            assert env_snapshot(env, codec) == before
            continue
        obs, reward, terminated, truncated, info = env.step(action)
        accepted.append(action)
        trace.append((obs.tobytes(), reward, terminated))
        assert info.get("illegal_action", False) == (not fine)
        assert not truncated and terminated == info["decided"]
        assert -1.0 <= reward <= 1.0 and (terminated or reward == 0)
        if terminated and getattr(env, "reward_mode", "outcome") == "outcome":
            assert abs(reward) == 1
        if decided:
            assert terminated
        if terminated:
            assert space.contains(obs)
            with pytest.raises(RuntimeError):
                env.step(data.draw(any_actions(n_actions), label="after the end"))
            return trace, accepted
    raise AssertionError("the episode did not end")


def replay_gym_episode(env, seed, options, accepted):
    obs, _ = env.reset(seed=seed, options=options)
    trace = [obs.tobytes()]
    for action in accepted:
        obs, reward, terminated, _, _ = env.step(action)
        trace.append((obs.tobytes(), reward, terminated))
    return trace


@given(data=st.data())
def test_dice420_env(data):
    """Dice420Env for 2 to 8 players, both illegal-action modes, any opponents."""
    spec = games.get("420")
    n = data.draw(st.integers(2, g420.MAX_PLAYERS), label="n_players")
    names = data.draw(st.lists(st.sampled_from(spec.bots_for(n)), min_size=n - 1, max_size=n - 1), label="opponents")
    kwargs = dict(
        n_players=n,
        agent_seat=data.draw(st.sampled_from(["random", *range(n)]), label="agent_seat"),
        reward=data.draw(st.sampled_from(["outcome", "rank"]), label="reward"),
        illegal_action=data.draw(st.sampled_from(["raise", "reroll_all"]), label="illegal_action"),
    )
    seed = data.draw(SEEDS, label="seed")

    def make():
        return Dice420Env(opponent=[agents.make_agent("420", name, seed=i) for i, name in enumerate(names)], **kwargs)

    env = make()
    trace, accepted = run_gym_episode(
        env, codec420, env.observation_space, data, np.random.default_rng(seed), seed, None
    )
    assert replay_gym_episode(make(), seed, None, accepted) == trace


def _plays(agent, n_players: int, pot: int) -> bool:
    """Whether an agent plays this 421 table (an agent made for some tables only says so)."""
    from play import AgentLoadError, check_table

    try:
        check_table(agent, "", "", n_players, {"pot": pot})
    except AgentLoadError:
        return False
    return True


@given(data=st.data())
def test_dice421_env(data):
    """Dice421Env for 2 and 3 players, small and default pots, both illegal-action modes."""
    spec = games.get("421")
    n = data.draw(st.sampled_from([2, 3]), label="n_players")
    pot = data.draw(POTS, label="pot")
    fit = [b for b in spec.bots_for(n) if _plays(agents.make_agent("421", b), n, pot)]  # exact3: pot 15 only
    names = data.draw(st.lists(st.sampled_from(fit), min_size=n - 1, max_size=n - 1), label="opponents")
    kwargs = dict(
        n_players=n,
        pot=pot,
        agent_seat=data.draw(st.sampled_from(["random", *range(n)]), label="agent_seat"),
        illegal_action=data.draw(st.sampled_from(["raise", "reroll_all"]), label="illegal_action"),
    )
    seed = data.draw(SEEDS, label="seed")

    def make():
        return Dice421Env(opponent=[agents.make_agent("421", name, seed=i) for i, name in enumerate(names)], **kwargs)

    env = make()
    trace, accepted = run_gym_episode(
        env, codec421, env.observation_space, data, np.random.default_rng(seed), seed, None
    )
    assert replay_gym_episode(make(), seed, None, accepted) == trace


# --- batched envs ----------------------------------------------------------------------


def vec_snapshot(env):
    """Every array and number of a batched env's state (not the last actions), and its generator's state."""
    state = {
        k: v.copy() if isinstance(v, np.ndarray) else v
        for k, v in vars(env).items()
        if isinstance(v, (np.ndarray, int, float)) and k != "_actions"
    }
    return state, env.rng.bit_generator.state


def same_snapshot(a, b) -> bool:
    return a[1] == b[1] and a[0].keys() == b[0].keys() and all(np.array_equal(a[0][k], b[0][k]) for k in a[0])


def legal_batch(data, masks: np.ndarray):
    """A legal action per game, as an integer array or a list of ints."""
    picks = [data.draw(st.sampled_from(np.flatnonzero(m).tolist()), label="legal action") for m in masks]
    form = data.draw(st.sampled_from(["int64", "int32", "uint8", "list", "tuple"]), label="batch form")
    if form == "list":
        return picks
    if form == "tuple":
        return tuple(picks)
    return np.array(picks, dtype=form)


def bad_batches(n: int, n_actions: int, masks: np.ndarray, shapes: bool) -> st.SearchStrategy:
    """Whole batches that are wrong as a whole: non-integer dtypes (and, if ``shapes``,
    wrong shapes and things that are not sequences)."""
    legal = masks.argmax(axis=1)
    kinds = [
        st.just(legal.astype(np.float64)),
        st.just(legal + 0.5),
        st.just(np.full(n, np.nan)),
        st.just(legal.astype(bool)),
        st.just(legal.astype(str)),
        st.just(legal.astype(object) * 1.0),
        st.just(legal.astype(np.complex128)),
    ]
    if shapes:
        kinds += [
            st.just(legal[:, None]),
            st.just(legal[None, :]),
            st.just(np.append(legal, 0)),
            st.just(legal[:-1]),
            st.just(list(legal) + [0]),
            st.just(list(legal)[:-1]),
            st.just([list(legal)]),
            st.just([]),
            st.just(np.array(legal[0])),
            st.just(int(legal[0])),
            st.just(None),
            st.just("0" * n),
            st.just({i: int(a) for i, a in enumerate(legal)}),
            st.just(iter(legal.tolist())),
        ]
    return st.one_of(kinds)


def batch_of_moves(data, env, masks: np.ndarray, decided: np.ndarray, *, vec420: bool):
    """(actions, fine): a batch, and whether the env must accept it."""
    n, n_actions = env.num_envs, env.action_space.n
    kind = data.draw(st.sampled_from(["legal", "legal", "row", "batch"]), label="batch kind")
    if kind == "legal":
        return legal_batch(data, masks), True
    if kind == "batch":
        return data.draw(bad_batches(n, n_actions, masks, shapes=not vec420), label="bad batch"), False
    actions = [int(m) for m in legal_batch(data, masks)]
    row = data.draw(st.integers(0, n - 1), label="row")
    value = data.draw(scalar_actions(n_actions), label="row value")
    actions[row] = value
    v = as_action(value)
    fine = v is not None and 0 <= v < n_actions and (bool(decided[row]) or bool(masks[row, v]))
    return actions, fine


def run_vec(env, data, seed, *, vec420: bool = False, check=None):
    """Steps a batched env with ``DRAWN_MOVES`` drawn batches, then legal ones until as many
    episodes as games have ended; returns the trace the replay must reproduce and the
    batches played."""
    n_actions = env.action_space.n
    rng = np.random.default_rng(seed)
    obs = env.reset()
    trace, accepted = [obs.tobytes()], []
    games_ended = 0
    for move in range(MAX_MOVES):
        masks = env.action_masks()
        assert masks.shape == (env.num_envs, n_actions) and masks.any(axis=1).all()
        assert all(env.observation_space.contains(o) for o in obs)
        decided = masks.sum(axis=1) == 1  # documented: a decided game's mask allows only action 0
        assert np.array_equal(decided, masks[:, 0] & (masks.sum(axis=1) == 1))
        if check is not None:
            check(env, decided)
        if move >= DRAWN_MOVES and games_ended >= env.num_envs:
            return trace, accepted
        if move < DRAWN_MOVES:
            actions, fine = batch_of_moves(data, env, masks, decided, vec420=vec420)
        else:
            actions, fine = np.array([rng_move(rng, m) for m in masks]), True
        if not fine:
            before = vec_snapshot(env)
            with warnings.catch_warnings():
                warnings.simplefilter("ignore", RuntimeWarning)  # Vec420: casts of huge ints in lists
                with pytest.raises(IllegalAction) as info:
                    env.step(actions)
            assert "\n" not in str(info.value)
            assert same_snapshot(vec_snapshot(env), before)
            continue
        obs, rewards, dones, infos = env.step(actions)
        accepted.append(actions)
        trace.append((obs.tobytes(), rewards.tobytes(), dones.tobytes()))
        assert np.all(rewards[~dones] == 0) and np.all(np.abs(rewards) <= 1)
        if getattr(env, "reward", "outcome") == "outcome":
            assert np.all(np.abs(rewards[dones]) == 1)
        assert np.all(dones[decided])
        for i in np.flatnonzero(dones):
            assert env.observation_space.contains(infos[i]["terminal_observation"])
        games_ended += int(dones.sum())
    raise AssertionError("the games did not end")


def replay_vec(env, accepted):
    obs = env.reset()
    trace = [obs.tobytes()]
    for actions in accepted:
        obs, rewards, dones, _ = env.step(actions)
        trace.append((obs.tobytes(), rewards.tobytes(), dones.tobytes()))
    return trace


@given(data=st.data())
def test_vec420_env(data):
    """Vec420Env for 2 to 8 players (two-player tables of every bot, one-hand tables
    beyond), both rewards: batches legal, with one bad game, or bad as a whole."""
    n_players = data.draw(st.integers(2, g420.MAX_PLAYERS), label="n_players")
    if n_players == 2:
        table = agents.bot_table("420", data.draw(st.sampled_from(list(games.get("420").bots)), label="bot"))
    else:
        table = own_hand_table420(data.draw(st.sampled_from(["greedy", "foundation"]), label="bot"))
    kwargs = dict(
        n_players=n_players,
        seed=data.draw(SEEDS, label="seed"),
        agent_seat=data.draw(st.sampled_from(["random", *range(n_players)]), label="agent_seat"),
        reward=data.draw(st.sampled_from(["outcome", "rank"]), label="reward"),
    )
    num_envs = data.draw(st.integers(1, 4), label="num_envs")

    def check(env, decided):
        assert np.array_equal(decided, env.decided)

    trace, accepted = run_vec(Vec420Env(num_envs, table, **kwargs), data, kwargs["seed"], vec420=True, check=check)
    assert replay_vec(Vec420Env(num_envs, table, **kwargs), accepted) == trace


@given(data=st.data())
def test_vec421_env(data):
    """Vec421Env, small and default pots, one-hot and sampled opponent tables: batches
    legal, with one bad game, or bad as a whole (dtypes and shapes)."""
    pot = data.draw(POTS, label="pot")
    table = agents.bot_table("421", data.draw(st.sampled_from(games.get("421").bots_for(2)), label="bot"), pot=pot)
    kwargs = dict(
        pot=pot,
        seed=data.draw(SEEDS, label="seed"),
        agent_seat=data.draw(st.sampled_from(["random", 0, 1]), label="agent_seat"),
    )
    num_envs = data.draw(st.integers(1, 4), label="num_envs")

    def check(env, decided):
        assert np.array_equal(decided, env.pending != 0)
        assert np.all(env.tok.sum(axis=1) + env.pot_left == pot)

    trace, accepted = run_vec(Vec421Env(num_envs, table, **kwargs), data, kwargs["seed"], check=check)
    assert replay_vec(Vec421Env(num_envs, table, **kwargs), accepted) == trace


# --- PettingZoo AEC envs -----------------------------------------------------------------


def aec_snapshot(env):
    raw = env.unwrapped
    return (
        env.agent_selection,
        tuple(env.agents),
        repr(raw.game),
        len(raw.game.events),
        tuple(sorted(env.terminations.items())),
        tuple(sorted(env.rewards.items())),
        tuple(
            (a, raw.observe(a)["observation"].tobytes(), raw.observe(a)["action_mask"].tobytes()) for a in env.agents
        ),
    )


@pytest.mark.parametrize("name, module", [("420", dice420_v0), ("421", dice421_v0)], ids=["dice420_v0", "dice421_v0"])
@given(data=st.data())
def test_aec_envs(name, module, data):
    """The AEC envs, wrapped (``env()``: an illegal move in the space ends the game with -1
    for the mover, out-of-space actions raise IllegalAction) and raw (``raw_env()``: IllegalAction)."""
    spec = games.get(name)
    n = data.draw(st.sampled_from(list(spec.players)), label="n_players")
    options = {"pot": data.draw(POTS, label="pot")} if spec.name == "421" else {}
    wrapped = data.draw(st.booleans(), label="wrapped")
    seed = data.draw(SEEDS, label="seed")

    def make():
        return (module.env if wrapped else module.raw_env)(n_players=n, **options)

    env = make()
    env.reset(seed=seed)
    rng = np.random.default_rng(seed)
    trace, accepted = [], []
    for move in range(MAX_MOVES):
        if not env.agents:
            break
        agent = env.agent_selection
        obs, reward, terminated, truncated, info = env.last()
        assert env.observation_space(agent).contains(obs)
        raw = env.unwrapped
        if spec.name == "421":
            check_tokens421(raw.game)
        for other in env.agents:  # only the agent to move has a mask
            assert (other == agent and not terminated) == bool(env.observe(other)["action_mask"].any())
        if terminated or truncated:
            env.step(None)
            accepted.append(None)
            continue
        mask = obs["action_mask"]
        assert mask.any()
        legal = np.flatnonzero(mask).tolist()
        action = one_move(data, legal, spec.n_actions) if move < DRAWN_MOVES else rng_move(rng, mask)
        value = as_action(action)
        # wrapped: an integer of the action space (any integer form but a bool) is a move,
        # legal or not (the IntegerActions wrapper refuses the rest before the others)
        in_space = value is not None and 0 <= value < spec.n_actions if wrapped else True
        if in_space and value in legal:
            env.step(action)
        elif wrapped and in_space:  # TerminateIllegalWrapper: the mover loses, the game ends
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                env.step(action)
            assert env.rewards[agent] == -1 and all(env.terminations.values())
        else:
            before = aec_snapshot(env)
            with pytest.raises(IllegalAction):
                env.step(action)
            assert aec_snapshot(env) == before
            continue
        accepted.append(action)
        trace.append((agent, tuple(sorted(env.rewards.items())), tuple(sorted(env.terminations.items()))))
    assert not env.agents
    # The same seed and moves: the same game.
    again = make()
    again.reset(seed=seed)
    replayed = []
    for action in accepted:
        agent = again.agent_selection
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            again.step(action)
        if action is not None:
            replayed.append((agent, tuple(sorted(again.rewards.items())), tuple(sorted(again.terminations.items()))))
    assert replayed == trace and again.unwrapped.game.events == env.unwrapped.game.events


# --- the terminal prompts' parsers -------------------------------------------------------

WORDS = [
    "keep",
    "k",
    "reroll",
    "r",
    "stop",
    "s",
    "all",
    "a",
    "*",
    "?",
    "h",
    "help",
    "legal",
    "l",
    "moves",
    "q",
    "quit",
    "exit",
    "KEEP",
    "All",
    " ",
    "  ",
    "\t",
    ",",
    ";",
    "/",
    "+",
    "-",
    "0",
    "1",
    "2",
    "3",
    "4",
    "5",
    "6",
    "7",
    "9",
    "12",
    "66",
    "654",
    "²",
    "٣",
    "İ",
    "ǅ",
    "\n",
    "\x00",
    "keep1",
    "k 6 6",
]
COMMAND_TEXT = st.one_of(st.text(max_size=20), st.lists(st.sampled_from(WORDS), max_size=8).map("".join))


def check_command(command, legal) -> None:
    assert isinstance(command, Command) and command.kind in ("move", "help", "legal", "quit")
    assert (command.action is None) == (command.kind != "move")
    if command.kind == "move":
        assert type(command.action) is int and command.action in legal


@given(text=COMMAND_TEXT, dice=st.lists(st.integers(1, 6), min_size=4, max_size=4))
def test_view420_read_command(text, dice):
    """Any text against any hand: a Command (a move is a legal keep of the hand) or a
    ValueError (IllegalAction for a move the rules forbid), nothing else."""
    hand = g420.canonical(dice)
    try:
        command = read_command(text, lambda line: view420.read(line, hand))
    except ValueError:
        return
    check_command(command, g420.legal_keeps(hand))


@given(text=COMMAND_TEXT, dice=st.lists(st.integers(1, 6), min_size=3, max_size=3))
def test_view421_read_command(text, dice):
    """Any text against any hand (in any order): a Command (STOP, or a keep the hand holds)
    or a ValueError, nothing else."""
    hand = tuple(dice)
    try:
        command = read_command(text, lambda line: view421.read(line, hand))
    except ValueError:
        return
    check_command(command, np.flatnonzero(codec421.action_mask(hand, is_leader=True)).tolist())  # STOP and keeps


PARSER_SETTINGS = settings(max_examples=10 * settings.default.max_examples)  # cheap: ten times the examples
test_view420_read_command = PARSER_SETTINGS(test_view420_read_command)
test_view421_read_command = PARSER_SETTINGS(test_view421_read_command)


# --- Vec421Env's checks, case by case (issue: "Batched envs take bad actions") ------------------


def snapshot_after_refusal(env, actions, match: str | None = None):
    before = vec_snapshot(env)
    with pytest.raises(IllegalAction, match=match) as info:
        env.step(actions)
    assert "\n" not in str(info.value)
    assert same_snapshot(vec_snapshot(env), before)
    return str(info.value)


def test_vec421_refuses_bad_actions_in_one_line():
    env = Vec421Env(6, agents.bot_table("421", "optimal", pot=5), pot=5, seed=4)
    env.reset()
    masks = env.action_masks()
    decided = np.flatnonzero(env.pending != 0)
    live = np.flatnonzero(env.pending == 0)
    assert len(decided) and len(live)
    good = masks.argmax(axis=1)
    row = int(live[0])
    for value, why in [
        (-14, "not in 0..28"),
        (-1, "not in 0..28"),
        (29, "not in 0..28"),
        (2**70, "not in 0..28"),
        ("x", "integer"),
        (1.0, "integer"),
        (np.nan, "integer"),
        (True, "integer"),
        (np.True_, "integer"),
        (None, "integer"),
        (np.array(1), "integer"),
    ]:
        actions = good.tolist()
        actions[row] = value
        snapshot_after_refusal(env, actions, rf"^game {row}: action .*\(.*{why}.*legal actions: ")
    illegal = int(np.flatnonzero(~masks[row])[0])
    actions = good.copy()
    actions[row] = illegal
    snapshot_after_refusal(env, actions, rf"^game {row}: action {illegal} \(.*\) is not legal: the agent")
    actions = good.copy()
    actions[decided[0]] = -1  # out of range even where the game is decided
    snapshot_after_refusal(env, actions, rf"^game {decided[0]}: action -1 .*the game is decided")
    for batch in (good.astype(np.float64), good + 0.5, np.full(6, np.nan), good.astype(bool), good.astype(str)):
        snapshot_after_refusal(env, batch, r"^game 0: action .*integer")
    for batch in (good[:, None], good[None, :], good[:5], list(good) + [0], 3, None, "012345", [list(good)]):
        snapshot_after_refusal(env, batch, "one action per game")
    big = np.array(good, dtype=np.uint64)
    big[row] = 2**64 - 1
    snapshot_after_refusal(env, big, rf"^game {row}: action 18446744073709551615 \(not in 0..28\)")
    # anything in range goes for a decided game; a list of ints and every integer dtype is fine
    actions = good.copy()
    actions[decided] = 28
    env.step(actions.astype(np.uint8))
    env.step([int(a) for a in env.action_masks().argmax(axis=1)])


def bad_tables():
    """(what, change) pairs that spoil a Policy421 table in one decision state."""
    h = g421.hand_rank((6, 5, 4))

    def spoil_follower(value, action=0):
        def change(lead, foll):
            foll[2, 1, h, h, :] = 0.0
            foll[2, 1, h, h, g421.action_for_keep(())] = 1.0
            foll[2, 1, h, h, action] = value

        return change

    return [
        ("non-finite", lambda lead, foll: lead.__setitem__((1, 0, h, 1), np.nan)),
        ("non-finite", lambda lead, foll: lead.__setitem__((1, 0, h, 1), np.inf)),
        ("negative", spoil_follower(-0.5, g421.action_for_keep((6,)))),
        ("illegal action", spoil_follower(1.0)),  # a follower may not STOP
        ("illegal action", spoil_follower(0.5, g421.action_for_keep((1,)))),  # no 1 in 6-5-4
        ("sum to 1", lambda lead, foll: lead.__setitem__((1, 1, h), 0.0)),
        ("sum to 1", spoil_follower(0.5, g421.action_for_keep((6,)))),
    ]


@pytest.mark.parametrize("what, change", bad_tables())
def test_vec421_refuses_bad_opponent_tables(what, change):
    good = agents.bot_table("421", "optimal", pot=3)
    lead, foll = good.leader.copy(), good.follower.copy()
    change(lead, foll)
    bad = Policy421(3, lead, foll, "spoilt")
    with pytest.raises(ValueError, match=what) as info:
        Vec421Env(2, bad, pot=3)
    assert "\n" not in str(info.value) and "tokens" in str(info.value)
    env = Vec421Env(2, good, pot=3, seed=0)
    with pytest.raises(ValueError, match=what):
        env.set_opponent(bad)
    assert env.opponent_policy is good  # the old table stays


@pytest.mark.parametrize(
    "bad",
    [
        Policy421(True, np.zeros((2, 2, 56, 29)), np.zeros((2, 3, 56, 56, 29))),
        Policy421(1, np.zeros((2, 2, 56, 29)).tolist(), np.zeros((2, 3, 56, 56, 29))),
        Policy421(1, np.zeros((2, 2, 56, 29), dtype=str), np.zeros((2, 3, 56, 56, 29))),
        Policy421(1, np.zeros((2, 2, 56, 29)), np.zeros((2, 3, 56, 29))),
    ],
)
def test_policy421_check_refuses_malformed_tables(bad):
    with pytest.raises(ValueError):
        bad.check()


class _ZeroDraws:
    """A generator whose uniform draws are all exactly 0 (as ``Generator.random`` may return)."""

    def __init__(self, rng):
        self.rng = rng

    def random(self, size):
        return np.zeros(size)

    def __getattr__(self, name):
        return getattr(self.rng, name)


def test_vec421_sampled_opponent_never_plays_an_action_without_probability():
    """A draw of exactly 0 picks the first action with probability, not STOP (action 0)."""
    a, b = agents.bot_table("421", "optimal", pot=5), agents.bot_table("421", "random", pot=5)
    mixed = Policy421(5, 0.5 * a.leader + 0.5 * b.leader, 0.5 * a.follower + 0.5 * b.follower, "mixed")
    env = Vec421Env(len(g421.HANDS), mixed, pot=5, seed=0)
    env.reset()
    rows = np.arange(env.num_envs)
    env.rng = _ZeroDraws(env.rng)
    env.leader[:], env.cur[:], env.hand[:] = 0, 1, rows  # the opponent follows, holding every hand
    env.used[:], env.allowed[:], env.tok[:] = 1, 3, [2, 3]
    env.played[:, 0] = g421.hand_rank((4, 2, 1))
    actions = env._opponent_actions(rows)
    assert codec421.MASKS[0, rows, actions].all()


# --- known bugs in files this suite does not own -------------------------------------------------


@pytest.fixture
def vec420_pair():
    env = Vec420Env(2, agents.bot_table("420", "greedy"), seed=0)
    env.reset()
    return env, env.action_masks().argmax(axis=1)


def test_vec420_refuses_bools_mixed_with_ints(vec420_pair):
    env, legal = vec420_pair
    for batch in ([int(legal[0]), False], [np.False_, int(legal[1])]):
        snapshot_after_refusal(env, batch, "integer")


def test_vec420_refuses_huge_ints_with_illegal_action(vec420_pair):
    env, legal = vec420_pair
    snapshot_after_refusal(env, [int(legal[0]), 2**70], "0..13")


def test_vec420_refuses_wrong_shapes_like_vec421(vec420_pair):
    env, legal = vec420_pair
    for batch in (legal[:, None], legal[None, :], np.append(legal, 0), 3, None):
        snapshot_after_refusal(env, batch)


@pytest.mark.parametrize("module", [dice420_v0, dice421_v0], ids=["dice420_v0", "dice421_v0"])
def test_wrapped_aec_env_refuses_a_python_bool(module):
    env = module.env()
    env.reset(seed=0)
    before = aec_snapshot(env)
    with pytest.raises(IllegalAction):
        env.step(True)
    assert aec_snapshot(env) == before
