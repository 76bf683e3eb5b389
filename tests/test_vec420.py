"""The batched 420 env (``Vec420Env``) for 2 to 8 players against the engine.

Every game the env plays with scripted dice is replayed through ``Game420`` with
``ScriptedDice``, the agent's seat driven by the same fixed rule and the other
seats by the same table: observations, masks, rewards, dones and terminal
observations must agree at every step.  Two-player games must also stay bit for
bit what they were before the env learnt more players (checksums of a seeded
run recorded with the two-player env).
"""

import hashlib

import numpy as np
import pytest

from games.dice420 import codec as codec420
from games.dice420 import game as g
from core.dice import ScriptedDice
from games.dice420 import vec as vec420
from games.dice420.vec import Vec420Env, check_opponent_table, scripted_dice

N_HANDS = len(g.HANDS)
WIN = np.array([g.is_win(h) for h in g.HANDS])


def random_keep_table(seed, two_player=False):
    """A table of legal keep indices, drawn at random: (126,) or (126, 126)."""
    rng = np.random.default_rng(seed)
    shape = (N_HANDS, N_HANDS) if two_player else (N_HANDS,)
    scores = rng.random(shape + (g.N_ACTIONS,))
    legal = codec420.LEGAL_MASKS[:, None, :] if two_player else codec420.LEGAL_MASKS
    return np.where(legal, scores, -1.0).argmax(axis=-1)


def random_prob_table(seed, two_player=False):
    """A table of probabilities over the legal keeps, drawn at random."""
    rng = np.random.default_rng(seed)
    shape = (N_HANDS, N_HANDS) if two_player else (N_HANDS,)
    legal = codec420.LEGAL_MASKS[:, None, :] if two_player else codec420.LEGAL_MASKS
    weights = rng.random(shape + (g.N_ACTIONS,)) * legal
    return weights / weights.sum(axis=-1, keepdims=True)


def agent_rule(obs, mask):
    """The agent's fixed choice: a legal keep picked by the observation."""
    legal = np.flatnonzero(mask)
    return int(legal[(int(obs.sum()) * 7 + int(obs[0])) % len(legal)])


def snapshot_obs(events, seat, n_players, upto):
    """What ``seat`` saw of the table just after event ``upto`` (hands rebuilt from the events)."""
    hands = [None] * n_players
    for event in events[: upto + 1]:
        if event["type"] == "round":
            hands = [None] * n_players
        elif event["type"] == "roll":
            hands[event["seat"]] = event["hand"]
    return codec420.encode(*(hands[s] for s in codec420.seats_from(seat, n_players)))


def engine_episode(n_players, dice, first, seat, table, reward):
    """One episode of the agent through the engine.  Returns (decisions, final_obs, reward,
    dice used): ``decisions`` the (obs, mask, action) of every agent choice; ``final_obs``
    the table when the agent made 20 or was left last; the dice the env rolls for it."""
    game = g.Game420(n_players, ScriptedDice(dice, seats=[first] if n_players > 2 else []))
    decisions = []
    while game.outcome(seat) is None:
        mover = game.current_player
        if mover == seat:
            obs = codec420.observe(game, seat)
            mask = codec420.legal_mask(game.legal_actions())
            action = agent_rule(obs, mask)
            decisions.append((obs, mask, action))
        else:
            h = g.HAND_INDEX[game.hands[mover]]
            action = int(table[h] if table.ndim == 1 else table[h, g.HAND_INDEX[game.hands[1 - mover]]])
        game.apply(action)
    end = next(
        i
        for i, e in enumerate(game.events)
        if (e["type"] == "round_won" and e["seat"] == seat) or e["type"] == "game_end"
    )
    if game.outcome(seat) == -1:
        place = n_players
        assert np.array_equal(snapshot_obs(game.events, seat, n_players, end), codec420.observe(game, seat))
    else:
        place = game.finish_order.index(seat) + 1
    value = (1 - 2 * (place - 1) / (n_players - 1)) if reward == "rank" else (1.0 if place < n_players else -1.0)
    used = sum(len(e["rolled"]) for e in game.events[:end] if e["type"] == "roll")
    return decisions, snapshot_obs(game.events, seat, n_players, end), value, used


def run_env(env, steps):
    """Step ``env`` with ``agent_rule``; per game, the list of its episodes, each a list of
    (obs, mask, action, reward, done, terminal_obs) steps (only complete episodes)."""
    obs = env.reset()
    episodes = [[[]] for _ in range(env.num_envs)]
    for _ in range(steps):
        masks = env.action_masks()
        actions = np.array([agent_rule(o, m) for o, m in zip(obs, masks)])
        new_obs, rewards, dones, infos = env.step(actions)
        for i in range(env.num_envs):
            terminal = infos[i].get("terminal_observation")
            episodes[i][-1].append((obs[i], masks[i], actions[i], rewards[i], dones[i], terminal))
            if dones[i]:
                episodes[i].append([])
        obs = new_obs
    return [row[:-1] for row in episodes]


def crafted_openings(n_players, n_rows, rng):
    """Dice scripts, first players and agent seat; the first rows open with games decided
    before the agent's first choice (an immediate 20, or a loss while every turn is forced)."""
    twenty = [6, 6, 5, 3]
    scripts = [rng.integers(1, 7, size=4000).tolist() for _ in range(n_rows)]
    firsts = [rng.integers(n_players, size=400).tolist() for _ in range(n_rows)]
    seat = 1
    if n_players == 2:
        scripts[0][:4] = twenty  # Red (the opponent) wins on its first roll: the agent lost
        scripts[1][:8] = [1, 1, 1, 1] + twenty  # Blue (the agent) wins on its first roll
    else:
        firsts[0][0] = 0
        scripts[0][:8] = [2, 2, 2, 2] + twenty  # the agent, second to roll, wins at once
        firsts[1][0] = 2  # from seat 2 on, every other player makes 20 on its first roll:
        scripts[1][: 4 * (n_players - 1)] = twenty * (n_players - 1)  # the agent is left last
    return scripts, firsts, seat


# (players, reward, table): a two-player (126, 126) table or an own-hand (126,) one.
CASES = [(2, "outcome", 2), (2, "rank", 1), (3, "outcome", 1), (3, "rank", 1), (4, "rank", 1), (6, "outcome", 1)]


@pytest.mark.parametrize("n_players,reward,table_dims", CASES)
def test_scripted_games_match_the_engine(n_players, reward, table_dims):
    rng = np.random.default_rng(n_players * 10 + len(reward))
    n_rows = 48
    scripts, firsts, seat = crafted_openings(n_players, n_rows, rng)
    table = random_keep_table(n_players, two_player=table_dims == 2)
    env = Vec420Env(
        n_rows,
        table,
        agent_seat=seat,
        dice=scripted_dice(scripts),
        n_players=n_players,
        reward=reward,
        first_players=firsts if n_players > 2 else None,
    )
    assert env.observation_space.shape == (4 * n_players,)
    rows = run_env(env, 40 if n_players < 4 else 60)
    games = decided_early = 0
    values = set()
    for i, episodes in enumerate(rows):
        offset = 0
        for k, steps in enumerate(episodes):
            decisions, final_obs, value, used = engine_episode(
                n_players, scripts[i][offset:] + [1] * 200, firsts[i][k], seat, table, reward
            )
            offset += used
            games += 1
            values.add(value)
            where = (n_players, i, k)
            if not decisions:  # decided before the agent's first choice
                decided_early += 1
                assert len(steps) == 1, where
                assert np.array_equal(steps[0][0], final_obs), where
                assert np.array_equal(steps[0][1], np.arange(g.N_ACTIONS) == 0), where
            else:
                assert len(steps) == len(decisions), where
                for (obs, mask, action), step in zip(decisions, steps):
                    assert np.array_equal(step[0], obs) and np.array_equal(step[1], mask), where
                    assert step[2] == action, where
            for step in steps[:-1]:
                assert step[3] == 0 and not step[4] and step[5] is None, where
            assert steps[-1][4] and steps[-1][3] == np.float32(value), (where, steps[-1][3], value)
            assert np.array_equal(steps[-1][5], final_obs), where
            assert env.observation_space.contains(final_obs), where
    assert games >= 200 and decided_early >= 2, (games, decided_early)
    assert len(values) == (n_players if reward == "rank" else 2), values  # every place was seen


def test_rank_rewards():
    """Four players: the rewards are 1, 1/3, -1/3, -1 by place; with three, a decided game
    worth 0 (second place) still ends at the next step."""
    env = Vec420Env(256, random_keep_table(3), agent_seat=0, seed=4, n_players=4, reward="rank")
    env.reset()
    seen = []
    for _ in range(80):
        _, rewards, dones, _ = env.step(env.action_masks().argmax(axis=1))
        seen += rewards[dones].tolist()
    assert sorted(set(np.round(seen, 6))) == [-1.0, -0.333333, 0.333333, 1.0]
    assert set(np.round(np.array(seen)[np.array(seen) > 0], 6)) == {0.333333, 1.0}

    outcome = Vec420Env(256, random_keep_table(3), agent_seat=0, seed=4, n_players=4)
    outcome.reset()
    got = []
    for _ in range(80):
        _, rewards, dones, _ = outcome.step(outcome.action_masks().argmax(axis=1))
        got += rewards[dones].tolist()
    assert set(got) == {-1.0, 1.0}
    assert np.sign(got).tolist() == np.sign(np.where(np.array(seen) == -1, -1, 1)).tolist()  # same games

    # Three players, agent seat 1: seat 0 rolls 20, then the agent, first in the new round, rolls 20.
    script = [6, 6, 5, 3, 5, 5, 5, 5] + np.random.default_rng(0).integers(1, 7, size=2000).tolist()
    env = Vec420Env(
        1,
        random_keep_table(3),
        agent_seat=1,
        dice=scripted_dice([script]),
        n_players=3,
        reward="rank",
        first_players=[[0, 0]],
    )
    obs = env.reset()
    assert env.decided[0] and env.pending[0] == 0.0
    assert obs[0].tolist() == [5, 5, 5, 5, 0, 0, 0, 0, 0, 0, 0, 0]  # seat 0 is out, seat 2 has no hand
    assert env.action_masks()[0].tolist() == [True] + [False] * (g.N_ACTIONS - 1)
    _, rewards, dones, infos = env.step(np.array([0]))
    assert dones[0] and rewards[0] == 0.0
    assert infos[0]["terminal_observation"].tolist() == obs[0].tolist()


def test_probability_tables_play_like_keep_tables():
    """A one-hot probability table plays the same games as its keep-index table (scripted
    dice), and a random one only ever plays legal keeps with the right frequencies."""
    keeps = random_keep_table(8)
    one_hot = np.eye(g.N_ACTIONS)[keeps]
    rng = np.random.default_rng(2)
    scripts = [rng.integers(1, 7, size=3000).tolist() for _ in range(16)]
    firsts = [rng.integers(4, size=200).tolist() for _ in range(16)]
    runs = []
    for table in (keeps, one_hot):
        env = Vec420Env(
            16,
            table,
            agent_seat=2,
            dice=scripted_dice(scripts),
            n_players=4,
            first_players=[list(f) for f in firsts],
            seed=0,
        )
        runs.append(run_env(env, 30))
    for a, b in zip(*runs):
        assert len(a) == len(b)
        for x, y in zip(a, b):
            assert all(np.array_equal(s[0], t[0]) and s[3] == t[3] for s, t in zip(x, y))

    probs = random_prob_table(5)
    env = Vec420Env(512, probs, seed=1, n_players=3)
    env.reset()
    counts = np.zeros((N_HANDS + 1, g.N_ACTIONS))
    original = env._opponent_keeps

    def spy(rows):
        chosen = original(rows)
        np.add.at(counts, (env.hands[rows, env.cur[rows]], chosen), 1)
        return chosen

    env._opponent_keeps = spy
    for _ in range(60):
        env.step(env.action_masks().argmax(axis=1))
    counts = counts[:N_HANDS]
    assert counts.sum() > 20_000
    assert not (counts * ~codec420.LEGAL_MASKS).any()
    n = counts.sum(axis=1, keepdims=True)
    busy = n[:, 0] > 400
    freq, p = counts[busy] / n[busy], probs[busy]
    z = np.abs(freq - p) / np.sqrt(np.maximum(p * (1 - p), 1e-12) / n[busy])
    assert busy.sum() > 40 and z.max() < 5, z.max()  # each keep as often as its probability


def test_same_seed_same_games():
    for n_players in (2, 5):
        table = random_keep_table(1, two_player=False)
        a = Vec420Env(32, table, seed=9, n_players=n_players)
        b = Vec420Env(32, table, seed=9, n_players=n_players)
        c = Vec420Env(32, table, seed=10, n_players=n_players)
        oa, ob, oc = a.reset(), b.reset(), c.reset()
        start = oa
        differ = not np.array_equal(oa, oc)
        for _ in range(30):
            assert np.array_equal(oa, ob) and np.array_equal(a.seat, b.seat)
            actions = a.action_masks().argmax(axis=1)
            oa, ra, da, _ = a.step(actions)
            ob, rb, db, _ = b.step(actions)
            oc, *_ = c.step(c.action_masks().argmax(axis=1))
            differ |= not np.array_equal(oa, oc)
            assert np.array_equal(ra, rb) and np.array_equal(da, db)
        assert differ
        a.seed(9)  # reset() re-seeds: the same games again
        assert np.array_equal(a.reset(), start)


def run_digest(env, steps=60):
    """A checksum of everything a seeded run shows: observations, masks, rewards, dones, infos."""
    digest = hashlib.sha256()
    obs = env.reset()
    chooser = np.random.default_rng(1)
    for _ in range(steps):
        masks = env.action_masks()
        digest.update(obs.tobytes() + masks.tobytes())
        actions = np.where(masks, chooser.random(masks.shape), -1.0).argmax(axis=1)
        obs, rewards, dones, infos = env.step(actions)
        digest.update(rewards.tobytes() + dones.tobytes())
        for info in infos:
            if "terminal_observation" in info:
                digest.update(info["terminal_observation"].tobytes())
    return digest.hexdigest()[:16]


# Recorded with the two-player Vec420Env before it learnt more players.
TWO_PLAYER_DIGESTS = {
    ("keeps", "random"): "b40eee0512a96f67",
    ("keeps", "blue"): "963e3375d8d9029f",
    ("probs", "random"): "7719e6da8b9b34f9",
    ("probs", "red"): "6cb21fce3a685f7b",
}


@pytest.mark.parametrize("kind,seat", list(TWO_PLAYER_DIGESTS))
def test_two_player_runs_are_unchanged(kind, seat):
    table = random_keep_table(11, two_player=True) if kind == "keeps" else random_prob_table(11, two_player=True)
    env = Vec420Env(64, table, agent_seat=seat, seed=0)
    assert env.observation_space.low.min() == 1 and env.observation_space.shape == (8,)
    assert run_digest(env) == TWO_PLAYER_DIGESTS[kind, seat]


def live_env(n_players=3):
    env = Vec420Env(8, random_keep_table(0), agent_seat=0, seed=3, n_players=n_players)
    env.reset()
    masks = env.action_masks()
    row = int(np.flatnonzero(~env.decided)[0])
    return env, masks, row


@pytest.mark.parametrize("bad", [-1, g.N_ACTIONS, 99])
def test_out_of_range_actions_raise(bad):
    env, masks, row = live_env()
    actions = masks.argmax(axis=1)
    actions[row] = bad
    with pytest.raises(g.IllegalAction, match=rf"game {row}: illegal action {bad}.*0\.\.13.*legal keeps: 0 ") as info:
        env.step(actions)
    assert "\n" not in str(info.value)


def test_non_integer_and_illegal_actions_raise():
    env, masks, row = live_env(2)
    good = masks.argmax(axis=1)
    with pytest.raises(g.IllegalAction, match="integer"):
        env.step(good.astype(np.float64) + 0.5)
    with pytest.raises(g.IllegalAction, match="integer"):
        env.step(good.astype(np.float64))
    with pytest.raises(g.IllegalAction, match="integer"):
        env.step(np.zeros(8, dtype=bool))
    with pytest.raises(g.IllegalAction, match="game 3: illegal action 'x'"):
        env.step([0, 0, 0, "x", 0, 0, 0, 0])
    illegal = good.copy()
    illegal[row] = int(np.flatnonzero(~masks[row])[0])
    hand = g.format_hand(g.HANDS[env.own[row]])
    pattern = rf"game {row}: illegal action {illegal[row]}.*{hand}.*legal keeps"
    with pytest.raises(g.IllegalAction, match=pattern) as info:
        env.step(illegal)
    assert "\n" not in str(info.value)
    obs, *_ = env.step(list(good))  # a list of ints is fine, and nothing was played before
    assert obs.shape == (8, 8)


def test_bad_tables_are_refused():
    keeps = random_keep_table(0)
    probs = random_prob_table(0)
    for shape in [(N_HANDS, N_HANDS), (N_HANDS, N_HANDS, g.N_ACTIONS)]:
        with pytest.raises(ValueError, match="own hand only"):
            Vec420Env(4, np.zeros(shape), n_players=3)
    for table in (np.zeros(125, dtype=int), np.zeros((N_HANDS, 13)), np.zeros((2, N_HANDS, N_HANDS))):
        with pytest.raises(ValueError, match="shape"):
            Vec420Env(4, table)
    busy = next(h for h in range(N_HANDS) if codec420.LEGAL_MASKS[h].sum() < g.N_ACTIONS and not WIN[h])
    for value in (int(np.flatnonzero(~codec420.LEGAL_MASKS[busy])[0]), -1, g.N_ACTIONS):
        bad = keeps.copy()
        bad[busy] = value
        with pytest.raises(ValueError, match=f"not legal for hand {g.format_hand(g.HANDS[busy])}"):
            Vec420Env(4, bad, n_players=4)
    with pytest.raises(ValueError, match="integers"):
        Vec420Env(4, keeps + 0.5, n_players=4)
    win = int(np.flatnonzero(WIN)[0])
    ok = keeps.copy()
    ok[win] = 13  # a hand of 20 never moves: anything goes there
    check_opponent_table(ok, 4)
    bad2 = random_keep_table(0, two_player=True)
    bad2[busy, 0] = int(np.flatnonzero(~codec420.LEGAL_MASKS[busy])[0])
    with pytest.raises(ValueError, match="against 1-1-1-1"):
        Vec420Env(4, bad2)
    illegal = ~codec420.LEGAL_MASKS[busy]
    for why, change in [
        ("negative", lambda p: p.__setitem__((busy, 0), -0.1)),
        ("sum to 1", lambda p: p.__setitem__(busy, p[busy] * 0.9)),
        ("illegal keep", lambda p: p.__setitem__(busy, illegal / illegal.sum())),
        ("non-finite", lambda p: p.__setitem__((busy, 0), np.nan)),
    ]:
        bad = probs.copy()
        change(bad)
        with pytest.raises(ValueError, match=why):
            Vec420Env(4, bad, n_players=5)
    env = Vec420Env(4, probs, n_players=5)
    with pytest.raises(ValueError, match="sum to 1"):
        env.set_opponent(probs * 2)
    env.set_opponent(keeps)  # a good table replaces the old one
    with pytest.raises(ValueError, match="n_players"):
        Vec420Env(4, keeps, n_players=9)
    with pytest.raises(ValueError, match="agent_seat"):
        Vec420Env(4, keeps, n_players=3, agent_seat="red")
    with pytest.raises(ValueError, match="agent_seat"):
        Vec420Env(4, keeps, n_players=3, agent_seat=3)
    with pytest.raises(ValueError, match="reward"):
        Vec420Env(4, keeps, reward="score")


# --- the building blocks, one by one (what the scripted games above exercise only in bulk) ---


def test_keep_and_roll_tables_give_the_engine_hands():
    """Every keep with every roll of four dice: ``play_keeps`` (which builds the lookup
    table) and ``roll_hands`` (the lookup) give the hand the engine makes of the kept
    dice and the first ``4 - len(keep)`` rolled ones; the unused dice do not matter."""
    rolls = np.array(list(np.ndindex(6, 6, 6, 6)), dtype=np.int64) + 1  # (1296, 4)
    keeps = np.repeat(np.arange(g.N_ACTIONS), len(rolls))
    rolled = np.tile(rolls, (g.N_ACTIONS, 1))
    expected = np.array(
        [
            g.HAND_INDEX[g.canonical(g.KEEPS[k] + tuple(int(v) for v in r[: 4 - len(g.KEEPS[k])]))]
            for k, r in zip(keeps, rolled)
        ]
    )
    np.testing.assert_array_equal(vec420.play_keeps(None, keeps, rolled), expected)
    np.testing.assert_array_equal(vec420.roll_hands(keeps, rolled), expected)
    used = np.arange(4)[None, :] < (4 - np.array([len(g.KEEPS[k]) for k in keeps]))[:, None]
    np.testing.assert_array_equal(vec420.roll_hands(keeps, np.where(used, rolled, 0)), expected)


def test_scripted_dice_take_each_games_script_in_order_until_it_runs_out():
    roll = scripted_dice([[6, 5, 4, 3, 2], [1, 2, 3]])
    np.testing.assert_array_equal(roll(np.array([0, 1]), np.array([4, 3]))[:, :3], [[6, 5, 4], [1, 2, 3]])
    np.testing.assert_array_equal(roll(np.array([0]), np.array([1]))[:, :1], [[2]])  # the last die
    with pytest.raises(RuntimeError, match="^dice script of game 1 exhausted$"):
        roll(np.array([1]), np.array([1]))


def test_illegal_action_messages_say_why_what_is_held_and_what_is_legal():
    """The exact line, built from the engine's wording: a keep the hand does not hold,
    and an out-of-range action in a decided game."""
    env, masks, row = live_env(2)
    hand = g.HANDS[env.own[row]]
    bad = next(k for k in range(g.N_ACTIONS) if not g.is_submultiset(g.KEEPS[k], hand))
    actions = masks.argmax(axis=1)
    actions[row] = bad
    legal = ", ".join(f"{k} ({g.describe_action(k, hand)})" for k in g.legal_keeps(hand))
    with pytest.raises(g.IllegalAction) as info:
        env.step(actions)
    assert str(info.value) == (
        f"game {row}: illegal action {bad}: the hand does not hold "
        f"{g.format_hand(g.KEEPS[bad])}; the agent holds {g.format_hand(hand)}; "
        f"legal keeps: {legal}"
    )

    # Red (the opponent) makes 20 on its first roll: game 0 is decided before the agent plays.
    env = Vec420Env(
        1, random_keep_table(0, two_player=True), agent_seat="blue", dice=scripted_dice([[6, 6, 5, 3] + [1] * 40])
    )
    env.reset()
    assert env.decided[0]
    with pytest.raises(g.IllegalAction) as info:
        env.step(np.array([g.N_ACTIONS]))
    assert str(info.value) == (
        f"game 0: illegal action {g.N_ACTIONS}: not in 0..{g.N_ACTIONS - 1}; the game is "
        "decided (this step returns its reward and ignores the keep); legal keeps: 0"
    )


def test_a_dice_function_giving_values_outside_1_to_6_is_refused_in_one_line():
    """A die value outside 1..6 that would be used (first column, or last used one) gets
    the env's one-line ValueError, never an IndexError from the lookup table; unused dice
    may read 0 (the ``DiceFn`` contract)."""

    def dice_with(value, column):
        def dice(rows, n):
            out = np.ones((len(rows), 4), dtype=np.int64)
            out[np.arange(len(rows)), np.minimum(column, np.asarray(n) - 1)] = value
            return out

        return dice

    table = random_keep_table(0)
    for value in (-10, -1, 0, 7, 8, 20):
        for column in (0, 3):
            env = Vec420Env(2, table, dice=dice_with(value, column), n_players=3)
            with pytest.raises(ValueError, match=r"^the dice function gave values outside 1\.\.6: \[\["):
                env.reset()

    rng = np.random.default_rng(0)

    def zeros_when_unused(rows, n):
        rolled = rng.integers(1, 7, size=(len(rows), 4))
        return np.where(np.arange(4)[None, :] < np.asarray(n)[:, None], rolled, 0)

    env = Vec420Env(4, table, dice=zeros_when_unused, n_players=3, seed=0)
    env.reset()
    for _ in range(20):
        env.step(env.action_masks().argmax(axis=1))
    assert (env.hands <= vec420.NO_HAND).all() and (env.hands >= 0).all()


def test_bad_arguments_get_one_exact_line():
    keeps = random_keep_table(0)
    cases = [
        (dict(n_players=9), "n_players: 420 is played by 2 to 8 players, got 9"),
        (dict(n_players=1), "n_players: 420 is played by 2 to 8 players, got 1"),
        (dict(n_players=True), "n_players: 420 is played by 2 to 8 players, got True"),
        (dict(n_players=3.0), "n_players: 420 is played by 2 to 8 players, got 3.0"),
        (dict(agent_seat="green"), "agent_seat must be 'red', 'blue', 0, 1 or 'random', got 'green'"),
        (dict(agent_seat=2), "agent_seat must be 'red', 'blue', 0, 1 or 'random', got 2"),
        (dict(agent_seat="red", n_players=3), "agent_seat must be a seat 0..2 or 'random', got 'red'"),
        (dict(agent_seat=-1, n_players=3), "agent_seat must be a seat 0..2 or 'random', got -1"),
        (dict(agent_seat=True, n_players=3), "agent_seat must be a seat 0..2 or 'random', got True"),
        (dict(agent_seat=1.0, n_players=3), "agent_seat must be a seat 0..2 or 'random', got 1.0"),
        (dict(reward="score"), "reward must be 'outcome' or 'rank', got 'score'"),
        (dict(first_players=[[0]]), "first_players needs one sequence per game (2), got 1"),
    ]
    for kwargs, message in cases:
        with pytest.raises(ValueError) as info:
            Vec420Env(2, keeps, **kwargs)
        assert str(info.value) == message, kwargs
    for n_players in (2, 8):  # the bounds are allowed, with every seat
        env = Vec420Env(2, keeps, n_players=n_players, agent_seat=n_players - 1, seed=0)
        env.reset()
        assert (env.seat == n_players - 1).all()
    env = Vec420Env(2, keeps, n_players=np.int64(3), agent_seat=np.int64(2), seed=0, reward="rank")
    env.reset()
    assert env.n_players == 3 and type(env.n_players) is int and (env.seat == 2).all()
    assert env.get_attr("reward") == ["rank", "rank"]  # what SB3 reads of the configuration


def test_bad_opponent_tables_get_one_exact_line():
    """What is wrong, where (the first bad state and how many there are) and what is legal."""

    def message(table, n_players=2):
        with pytest.raises(ValueError) as info:
            check_opponent_table(table, n_players)
        return str(info.value)

    two = "(126,) or (126, 126) or (126, 14) or (126, 126, 14)"
    assert (
        message(np.zeros(125, dtype=int))
        == f"the opponent must be a policy table of shape {two} for 2 players, got shape (125,)"
    )
    assert message(np.zeros((N_HANDS, N_HANDS), dtype=int), 3) == (
        "the opponent must be a policy table of shape (126,) or (126, 14) for 3 players, got shape "
        "(126, 126); with more than two players the opponents look at their own hand only"
    )
    assert (
        message(np.zeros((N_HANDS, 5), dtype=int), 3)
        == "the opponent must be a policy table of shape (126,) or (126, 14) for 3 players, got shape (126, 5)"
    )
    for table in (np.zeros(N_HANDS, dtype=bool), np.full(N_HANDS, 0.5)):
        assert message(table) == f"a (126, ...) opponent table holds keep indices (integers), got dtype {table.dtype}"

    def legal(h):
        return ", ".join(f"{k} ({g.describe_action(k, g.HANDS[h])})" for k in g.legal_keeps(g.HANDS[h]))

    def illegal_keep(h):
        return next(k for k in range(g.N_ACTIONS) if k not in g.legal_keeps(g.HANDS[h]))

    # Hands needing a choice: 6-5-4-3 (keeps 6, 6-5, 6-5-4 ...) and 4-4-3-1 (only rerolls).
    h1, h2 = g.HAND_INDEX[(6, 5, 4, 3)], g.HAND_INDEX[(4, 4, 3, 1)]
    keeps = np.zeros(N_HANDS, dtype=np.int64)
    k1, k2 = illegal_keep(h1), illegal_keep(h2)
    keeps[h1], keeps[h2] = k1, k2
    first = min(h1, h2)
    k = keeps[first]
    assert message(keeps, 4) == (
        f"opponent table: keep {k} ({g.describe_action(k, g.HANDS[first])}) is not legal for hand "
        f"{g.format_hand(g.HANDS[first])} (2 such states); legal keeps: {legal(first)}"
    )
    for value in (-1, g.N_ACTIONS):
        keeps = np.zeros(N_HANDS, dtype=np.int64)
        keeps[h2] = value
        assert message(keeps.astype(np.float64), 3) == (
            f"opponent table: {value} is not legal for hand 4-4-3-1 (1 such states); legal keeps: {legal(h2)}"
        )
    pairs = np.zeros((N_HANDS, N_HANDS), dtype=np.int64)
    pairs[h2, h1] = k2
    assert message(pairs) == (
        f"opponent table: keep {k2} ({g.describe_action(k2, g.HANDS[h2])}) is not legal "
        f"for hand 4-4-3-1 against 6-5-4-3 (1 such states); legal keeps: {legal(h2)}"
    )

    probs = np.eye(g.N_ACTIONS)[np.zeros(N_HANDS, dtype=np.int64)]
    bad = probs.copy()
    bad[h1, :2] = [1.5, -0.5]
    assert message(bad, 5) == (
        f"opponent table: the row for hand 6-5-4-3 has a negative or non-finite "
        f"probability (1 such states): {bad[h1].tolist()}; legal keeps: {legal(h1)}"
    )
    bad = probs.copy()
    bad[h1, 0], bad[h2, 0] = 0.5, 0.25  # 4-4-3-1 comes first in the hands' order
    assert h2 < h1 and message(bad, 5) == (
        f"opponent table: the row for hand 4-4-3-1 does not sum to 1 "
        f"(2 such states): {bad[h2].tolist()}; legal keeps: {legal(h2)}"
    )
    bad = probs.copy()
    bad[h2] = np.eye(g.N_ACTIONS)[k2] / 3 + 2 / 3 * np.eye(g.N_ACTIONS)[0]
    assert message(bad, 5) == (
        f"opponent table: the row for hand 4-4-3-1 puts probability on an illegal keep "
        f"(1 such states): {np.round(bad[h2], 6).tolist()}; legal keeps: {legal(h2)}"
    )
    pairs = np.broadcast_to(probs[:, None, :], (N_HANDS, N_HANDS, g.N_ACTIONS)).copy()
    pairs[h2, h1, 0] = np.inf
    assert message(pairs) == (
        f"opponent table: the row for hand 4-4-3-1 against 6-5-4-3 has a negative or "
        f"non-finite probability (1 such states): {pairs[h2, h1].tolist()}; "
        f"legal keeps: {legal(h2)}"
    )


def test_first_players_scripted_or_drawn_per_game():
    """Scripted Player 1 seats must be seats and last as long as the games; drawn ones
    are drawn for each game (two players: always Red)."""
    table = random_keep_table(0)
    for seats, message in (
        ([3], "first_players must be seats 0..2, got [3]"),
        ([-1], "first_players must be seats 0..2, got [-1]"),
        ([], "first_players script of game 0 exhausted"),
    ):
        env = Vec420Env(1, table, n_players=3, first_players=[seats], seed=0)
        with pytest.raises((ValueError, RuntimeError)) as info:
            env.reset()
        assert str(info.value) == message
    env = Vec420Env(64, table, n_players=4, seed=0)
    env.reset()
    assert sorted(set(env.first_player.tolist())) == [0, 1, 2, 3]
    env = Vec420Env(64, random_keep_table(0, two_player=True), seed=0)
    env.reset()
    assert (env.first_player == g.RED).all()


def test_only_decision_states_of_a_table_are_checked():
    """A state where the mover or (two players) the other holds 20 never occurs: anything
    goes there.  Two-player tables are the default; a wrong (126, 126, k) shape is only
    a wrong shape with two players."""
    h = next(i for i in range(N_HANDS) if codec420.LEGAL_MASKS[i].sum() < g.N_ACTIONS and not WIN[i])
    illegal = int(np.flatnonzero(~codec420.LEGAL_MASKS[h])[0])
    win = int(np.flatnonzero(WIN)[0])
    keeps = random_keep_table(0, two_player=True)
    keeps[h, win] = keeps[win, h] = illegal
    padded, cdf = check_opponent_table(keeps)
    assert cdf is None and padded.shape == (N_HANDS + 1, N_HANDS + 1)
    np.testing.assert_array_equal(padded[:N_HANDS, :N_HANDS], keeps)
    with pytest.raises(ValueError) as info:
        check_opponent_table(np.zeros((N_HANDS, N_HANDS, 5)))
    assert str(info.value) == (
        "the opponent must be a policy table of shape (126,) or (126, 126) or (126, 14) "
        "or (126, 126, 14) for 2 players, got shape (126, 126, 5)"
    )


def test_probability_tables_become_cumulative_rows_ending_in_inf():
    """``check_opponent_table``'s ``cdf``: the running sums, then ``inf`` from the last keep
    with probability on (a draw past a row that sums to a little under 1 still picks a
    keep with probability); the ``NO_HAND`` row is all ``inf`` (its only move is keep 0)."""
    for two_player in (False, True):
        probs = random_prob_table(3, two_player=two_player)
        keeps, cdf = check_opponent_table(probs)
        assert keeps is None
        rows = probs.reshape(-1, g.N_ACTIONS)
        got = (cdf[:N_HANDS, :N_HANDS] if two_player else cdf[:N_HANDS]).reshape(-1, g.N_ACTIONS)
        for p, c in zip(rows, got):
            last = int(np.flatnonzero(p)[-1])
            np.testing.assert_array_equal(c[:last], np.cumsum(p)[:last])
            assert np.isinf(c[last:]).all()
        assert np.isinf(cdf[vec420.NO_HAND]).all()


def test_next_seat_table():
    """``next_in_table(n)[mask, seat]``: of the seats in ``mask``, the one fewest steps
    clockwise after ``seat`` (``seat`` itself if alone; -1 for no seat), every n."""
    for n in range(2, g.MAX_PLAYERS + 1):
        table = vec420.next_in_table(n)
        assert table.shape == (1 << n, n) and (table[0] == -1).all()
        for mask in range(1, 1 << n):
            seats = [s for s in range(n) if mask >> s & 1]
            for seat in range(n):
                assert table[mask, seat] == min(seats, key=lambda s: (s - seat - 1) % n), (n, mask, seat)


def test_step_wait_without_step_async_says_what_to_do():
    env = Vec420Env(2, random_keep_table(2), seed=0)
    env.reset()
    with pytest.raises(RuntimeError, match=r"^step_wait\(\) without step_async\(actions\): call step\(actions\)$"):
        env.step_wait()


# --- live opponents and pools ----------------------------------------------------------


def own_hand_of(obs: np.ndarray) -> np.ndarray:
    """The hand index of the viewer's own dice (the first four numbers; no hand: NO_HAND)."""
    dice = obs[:, :4]
    codes = (np.maximum(dice, 1) - 1) @ vec420.POWERS
    return np.where(dice[:, 0] > 0, vec420.CODE_TO_HAND[codes], vec420.NO_HAND)


@pytest.mark.parametrize("n_players", [3, 4])
def test_a_batch_policy_plays_the_same_games_as_its_table(n_players):
    """An own-hand keep table asked live, from the observation of the mover's own seat, plays
    exactly the games the table plays (deterministic: no draw from the generator)."""
    table = random_keep_table(n_players, two_player=False)
    asked = []

    def live(obs, masks, rng):
        h = own_hand_of(obs)
        assert np.array_equal(masks, vec420.LEGAL[h]) and not vec420.FORCED[h].any()  # asked at choices only
        asked.append(len(obs))
        return table[h]

    a = Vec420Env(64, table, seed=4, n_players=n_players)
    b = Vec420Env(64, live, seed=4, n_players=n_players)
    a.seed(4), b.seed(4)
    oa, ob = a.reset(), b.reset()
    rng = np.random.default_rng(0)
    for _ in range(60):
        assert np.array_equal(oa, ob)
        actions = (rng.random((64, g.N_ACTIONS)) * a.action_masks()).argmax(axis=1)
        oa, ra, da, _ = a.step(actions)
        ob, rb, db, _ = b.step(actions)
        assert np.array_equal(ra, rb) and np.array_equal(da, db)
    assert sum(asked) > 1000


def test_the_movers_observation_is_its_own_seat_first_then_clockwise():
    env = Vec420Env(32, random_keep_table(4, two_player=False), seed=1, n_players=4)
    env.reset()
    rows = np.arange(32)
    for viewer in range(4):
        obs = env._obs(rows, np.full(32, viewer)).reshape(32, 4, 4)
        for k in range(4):
            seat_hands = env.hands[rows, (viewer + k) % 4]
            assert np.array_equal(obs[:, k], env._obs_dice[seat_hands])


def test_a_pool_draws_per_seat_and_bad_members_are_named():
    table = random_keep_table(3, two_player=False)
    calls = []

    def live(obs, masks, rng):
        calls.append(len(obs))
        return table[own_hand_of(obs)]

    env = Vec420Env(512, (table, live), seed=2, n_players=3, weights=[0.25, 0.75])  # a tuple is a pool too
    env.reset()
    others = env.opp_index[np.arange(512)[:, None], (env.seat[:, None] + np.array([1, 2])) % 3]
    assert 0.65 < (others == 1).mean() < 0.85
    env.step((np.random.default_rng(0).random((512, g.N_ACTIONS)) * env.action_masks()).argmax(axis=1))
    assert calls
    with pytest.raises(ValueError, match="pool entry 1: the opponent must be a policy table"):
        env.set_opponent([table, np.zeros(3)])
    with pytest.raises(ValueError, match="pool weights must be 2"):
        env.set_opponent([table, live], weights=[1.0, -1.0])
    six_six_six = g.KEEPS.index((6, 6, 6))  # legal only with three sixes
    env.set_opponent([table, lambda obs, masks, rng: np.full(len(obs), six_six_six)])
    with pytest.raises(ValueError, match=f"pool entry 1 played keep {six_six_six}, which is not legal for"):
        for _ in range(20):
            env.step((np.random.default_rng(0).random((512, g.N_ACTIONS)) * env.action_masks()).argmax(axis=1))
