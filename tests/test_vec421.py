"""Vec421Env, the batched two-player 421, against the engine (Dice421Env) and the exact solver."""

from __future__ import annotations

import numpy as np
import pytest
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.utils import get_action_masks

import agents
from agents import make_agent
from games.dice421 import solver as solver421
from games.dice421 import codec as codec421
from games.dice421 import game as g
from core.dice import ScriptedDice
from games.dice421.env import Dice421Env
from games.dice421 import policy as policy421
from games.dice421.policy import FOLLOWER_DECISION_INDEX
from games.dice421 import vec as vec421
from games.dice421.vec import Vec421Env, scripted_dice

RANK_ARRAY = np.zeros((7, 7, 7), dtype=np.int64)  # [dice high to low] -> rank (0 for no hand)
for _rank, _hand in enumerate(g.HANDS):
    RANK_ARRAY[_hand] = _rank
OTHER_HAND = slice(codec421.OTHERS_START + 1, codec421.OTHERS_START + 4)
OTHER_IS_LEADER = codec421.OTHERS_START + codec421.O_IS_LEADER


def table(name: str, pot: int = 15) -> solver421.Policy421:
    """A named bot's exact table, the form Vec421Env plays its opponent in."""
    return agents.bot_table("421", name, pot=pot)


def pick_legal(rng: np.random.Generator, masks: np.ndarray) -> np.ndarray:
    """A uniformly random legal action per row."""
    return (rng.random(masks.shape) * masks).argmax(axis=1)


# --- the same games as the engine ---------------------------------------------------


@pytest.mark.parametrize("pot, n_games, n_steps", [(15, 100, 45), (3, 100, 30)])
def test_plays_the_same_scripted_games_as_the_engine_env(pot, n_games, n_steps):
    """Row i of the batched env and a Dice421Env fed ``ScriptedDice(dice[i], seats[i])`` play the
    same successive games: observations, masks, rewards, dones and terminal observations."""
    rng = np.random.default_rng(pot)
    dice = [rng.integers(1, 7, size=6000).tolist() for _ in range(n_games)]
    seats = [rng.integers(2, size=200).tolist() for _ in range(n_games)]
    venv = Vec421Env(
        n_games, table("optimal", pot), pot=pot, agent_seat="random", seed=7, dice=scripted_dice(dice, seats)
    )
    engine_dice = [ScriptedDice(dice[i], seats[i]) for i in range(n_games)]
    envs = [Dice421Env(opponent=make_agent("421", "optimal"), pot=pot) for _ in range(n_games)]

    def engine_reset(i):
        obs, info = envs[i].reset(seed=i, options={"dice": engine_dice[i], "agent_seat": int(venv.seat[i])})
        return obs, info

    obs = venv.reset()
    infos_e = []
    for i in range(n_games):
        obs_e, info = engine_reset(i)
        assert np.array_equal(obs[i], obs_e), i
        infos_e.append(info)
    chooser = np.random.default_rng(1)
    games = decided_games = charge_decided = 0
    for _ in range(n_steps):
        masks = venv.action_masks()
        for i in range(n_games):
            assert np.array_equal(masks[i], envs[i].action_masks()), i
            assert (venv.pending[i] != 0) == infos_e[i]["decided"], i
        actions = pick_legal(chooser, masks)
        decided = venv.pending != 0
        obs, rewards, dones, infos = venv.step(actions)
        assert obs.dtype == np.int64 and rewards.dtype == np.float32
        for i in range(n_games):
            obs_e, reward_e, terminated, truncated, infos_e[i] = envs[i].step(int(actions[i]))
            assert (rewards[i], dones[i], truncated) == (reward_e, terminated, False), i
            if terminated:
                assert np.array_equal(infos[i]["terminal_observation"], obs_e), i
                games += 1
                decided_games += int(decided[i])
                charge_decided += int(obs_e[codec421.IS_LEADER] == 0 and obs_e[OTHER_IS_LEADER] == 0)
                obs_e, infos_e[i] = engine_reset(i)
            else:
                assert "terminal_observation" not in infos[i]
            assert np.array_equal(obs[i], obs_e), i
    assert games >= 200
    # Both kinds of game happen: decided before the agent's first choice, and played.
    assert 0 < decided_games < games and charge_decided > 0


def test_worked_example_of_the_rules_replays():
    """The rules' worked example (pot 5): the agent is P1 (seat 0, plays first) and makes the
    example's keeps (5-4-1 -> keep 4-1 -> 6-4-1 -> keep 4-1 -> 4-4-1); the optimal bot is P2."""
    rolls = [int(c) for c in "211 551  643 541  621 621  642 632  642 113  541 6 4  111 4 4" if c.isdigit()]
    venv = Vec421Env(
        1, table("optimal", 5), pot=5, agent_seat=0, dice=scripted_dice([rolls + [6, 5, 4, 3, 2, 1] * 20], [[0, 0]])
    )
    env = Dice421Env(opponent=make_agent("421", "optimal"), pot=5)
    obs = venv.reset()
    obs_e, _ = env.reset(options={"dice": ScriptedDice(rolls + [6, 5, 4, 3, 2, 1] * 20, [0, 0]), "agent_seat": 0})
    assert np.array_equal(obs[0], obs_e)
    o = codec421.decode(obs[0])
    # Charge: P2 takes 2 and 1, P1 takes the RAMPO token and the last one; P1 leads the discharge.
    assert (o.tokens, o.others[0].tokens, o.is_leader, o.hand, o.rolls_used) == (2, 3, True, (5, 4, 1), 1)
    keep41 = g.action_for_keep((4, 1))
    obs, rewards, dones, _ = venv.step(np.array([keep41]))
    obs_e, *_ = env.step(keep41)
    assert np.array_equal(obs[0], obs_e) and codec421.decode(obs[0]).hand == (6, 4, 1)
    obs, rewards, dones, infos = venv.step(np.array([keep41]))
    obs_e, reward_e, *_ = env.step(keep41)
    # P2 holds 1-1-1, keeps 1-1 twice (4, 4): its 1-1-4 beats 4-4-1 and it gives all 3 tokens.
    end = codec421.decode(infos[0]["terminal_observation"])
    assert np.array_equal(infos[0]["terminal_observation"], obs_e)
    assert (rewards[0], dones[0], reward_e) == (-1.0, True, -1.0)
    assert (end.tokens, end.others[0].tokens, end.others[0].hand, end.phase) == (5, 0, (4, 1, 1), g.OVER)
    assert not end.others[0].in_game and end.is_leader and end.others[0].played


# --- against the exact solver -------------------------------------------------------


def table_actions(lead_actions: np.ndarray, follow_actions: np.ndarray, obs: np.ndarray) -> np.ndarray:
    """The actions of a one-hot policy (``Policy421`` tables, argmax taken) at observed two-player
    decisions (0 where the game is over)."""
    t, r, n = obs[:, codec421.TOKENS], obs[:, codec421.ROLLS_USED], obs[:, codec421.ROLLS_ALLOWED]
    h = RANK_ARRAY[obs[:, 0], obs[:, 1], obs[:, 2]]
    L = RANK_ARRAY[obs[:, OTHER_HAND.start], obs[:, OTHER_HAND.start + 1], obs[:, OTHER_HAND.start + 2]]
    d = np.where(n == 2, 0, np.where(r == 1, 1, 2))  # FOLLOWER_DECISIONS: (2, 1), (3, 1), (3, 2)
    assert solver421.FOLLOWER_DECISIONS == ((2, 1), (3, 1), (3, 2))
    lead = lead_actions[t, np.maximum(r - 1, 0), h]
    follow = follow_actions[t, d, L, h]
    deciding = obs[:, codec421.PHASE] == codec421.PHASE_CODE[g.DISCHARGE]
    return np.where(deciding, np.where(obs[:, codec421.IS_LEADER] == 1, lead, follow), 0)


def mixture(name: str, a: solver421.Policy421, b: solver421.Policy421, w: float) -> solver421.Policy421:
    """Plays ``a`` with probability ``w`` and ``b`` otherwise, at each decision."""
    return solver421.Policy421(a.pot, w * a.leader + (1 - w) * b.leader, w * a.follower + (1 - w) * b.follower, name)


@pytest.mark.parametrize(
    "agent, opponent, pot, n_games",
    [
        ("greedy421", "optimal", 5, 30_000),  # a deterministic opponent, played by table lookups
        ("optimal", "mixed", 15, 20_000),  # a stochastic opponent, sampled by the env
    ],
)
def test_outcome_frequencies_match_the_exact_solver(agent, opponent, pot, n_games):
    """The agent plays a bot's table from what it observes; its win rate and the rate of
    games decided in the charge match the exact figures within 4 standard errors."""
    agent_table = table(agent, pot)
    if opponent == "mixed":  # optimal 70%, uniformly random 30%
        opponent = mixture("mixed", table("optimal", pot), table("random", pot), 0.7)
    else:
        opponent = table(opponent, pot)
    exact = solver421.evaluate(agent_table, solver421.as_policy(opponent, pot))
    lead_actions, follow_actions = agent_table.leader.argmax(-1), agent_table.follower.argmax(-1)
    charge = solver421.charge_outcomes(pot)[:, pot].sum()  # P(the charge decides the game)
    n_envs = 2048
    venv = Vec421Env(n_envs, opponent, pot=pot, seed=3)
    obs = venv.reset()
    # Count the first games_per_row games of every row: counting games until a total is reached
    # would favour short games (those still running at the end are longer than average).
    games_per_row = -(-n_games // n_envs)
    counted = np.zeros(n_envs, dtype=np.int64)
    wins = charge_decided = 0
    while counted.min() < games_per_row:
        obs, rewards, dones, infos = venv.step(table_actions(lead_actions, follow_actions, obs))
        for i in np.flatnonzero(dones & (counted < games_per_row)):
            end = infos[i]["terminal_observation"]
            charge_decided += int(end[codec421.IS_LEADER] == 0 and end[OTHER_IS_LEADER] == 0)
            wins += int(rewards[i] > 0)
            counted[i] += 1
    games = int(counted.sum())
    for observed, p in ((wins / games, exact), (charge_decided / games, charge)):
        assert abs(observed - p) < 4 * (p * (1 - p) / games) ** 0.5 + 1e-9, (observed, p, games)


# --- API --------------------------------------------------------------------------


def test_same_seed_same_games():
    a, b = Vec421Env(32, table("optimal"), seed=3), Vec421Env(32, table("optimal"), seed=3)
    oa, ob = a.reset(), b.reset()
    c = Vec421Env(32, table("optimal"), seed=4)
    assert not np.array_equal(oa, c.reset())
    chooser = np.random.default_rng(0)
    for _ in range(40):
        assert np.array_equal(oa, ob)
        masks = a.action_masks()
        assert np.array_equal(masks, b.action_masks())
        actions = pick_legal(chooser, masks)
        oa, ra, da, _ = a.step(actions)
        ob, rb, db, _ = b.step(actions)
        assert np.array_equal(ra, rb) and np.array_equal(da, db)
    # seed() then reset() restarts the same games.
    a.seed(3)
    assert np.array_equal(a.reset(), Vec421Env(32, table("optimal"), seed=3).reset())


def test_masks_observations_and_decided_games():
    venv = Vec421Env(256, table("optimal", 3), pot=3, seed=0)
    obs = venv.reset()
    low, high = codec421.observation_bounds(3)
    assert venv.observation_space.contains(obs[0]) and np.all(obs >= low) and np.all(obs <= high)
    masks = venv.action_masks()
    assert masks.shape == (256, g.N_ACTIONS) and masks.dtype == bool
    decided = venv.pending != 0
    assert decided.any() and (~decided).any()
    assert np.all(masks[decided] == codec421.legal_mask([g.STOP]))
    assert np.all(obs[decided, codec421.PHASE] == codec421.PHASE_CODE[g.OVER])
    for i in np.flatnonzero(~decided):
        o = codec421.decode(obs[i])
        assert np.array_equal(masks[i], codec421.action_mask(o.hand, o.is_leader))
        assert np.array_equal(masks[i], codec421.mask_of(obs[i]))
    # MaskablePPO reads the masks through env_method("action_masks").
    assert np.array_equal(get_action_masks(venv), masks)
    assert np.array_equal(np.stack(venv.env_method("action_masks", indices=[3, 5])), masks[[3, 5]])
    # Decided games end at the next step with their reward; their final observation is the terminal one.
    pending = venv.pending.copy()
    assert set(np.unique(pending[decided])) <= {-1.0, 1.0}
    _, rewards, dones, infos = venv.step(pick_legal(np.random.default_rng(0), masks))
    assert np.all(dones[decided]) and np.array_equal(rewards[decided], pending[decided])
    assert np.all(np.abs(rewards[dones]) == 1) and np.all(rewards[~dones] == 0)
    for i in np.flatnonzero(dones):
        assert np.array_equal(infos[i]["terminal_observation"], obs[i]) == bool(decided[i])
        assert infos[i]["terminal_observation"][codec421.PHASE] == codec421.PHASE_CODE[g.OVER]


def test_illegal_actions_raise():
    venv = Vec421Env(8, table("optimal"), seed=1)
    venv.reset()
    masks = venv.action_masks()
    live = np.flatnonzero(venv.pending == 0)
    actions = masks.argmax(axis=1)
    actions[live[0]] = int(np.flatnonzero(~masks[live[0]])[0])
    with pytest.raises(g.IllegalAction, match=f"game {live[0]}: action"):
        venv.step(actions)
    actions[live[0]] = g.N_ACTIONS
    with pytest.raises(g.IllegalAction, match="legal actions"):
        venv.step(actions)


def test_arguments_and_opponents():
    with pytest.raises(ValueError):
        Vec421Env(2, table("optimal"), agent_seat=2)
    with pytest.raises(ValueError):
        Vec421Env(2, table("optimal"), pot=0)
    with pytest.raises(TypeError):
        Vec421Env(2)  # the opponent is required
    # the env takes a ready table only: no names, no agents
    for opponent in ("optimal", make_agent("421", "optimal"), None):
        with pytest.raises(TypeError, match="Policy421"):
            Vec421Env(2, opponent)
    for seat in (0, 1):
        venv = Vec421Env(64, table("random") if seat else table("optimal"), agent_seat=seat, seed=2)
        venv.reset()
        assert np.all(venv.seat == seat)
    venv = Vec421Env(512, table("random"), seed=2)
    venv.reset()
    assert venv.opponent_policy.name == "random"
    assert 0.4 < venv.seat.mean() < 0.6 and 0.4 < (venv.first == 0).mean() < 0.6
    fixed = Vec421Env(512, table("random"), agent_seat=0, seed=2)  # the first player: drawn per game
    fixed.reset()
    assert 0.4 < (fixed.first == 0).mean() < 0.6
    venv.set_opponent(table("optimal"))
    assert venv.opponent_policy.name == "optimal"
    with pytest.raises(TypeError, match="Policy421"):
        venv.set_opponent("optimal")
    with pytest.raises(ValueError):
        venv.set_opponent(table("optimal", 5))


@pytest.fixture
def one_torch_thread():
    """Tiny networks train fastest on one thread (and do not fight a busy machine for cores)."""
    import torch

    threads = torch.get_num_threads()
    torch.set_num_threads(1)
    yield
    torch.set_num_threads(threads)


def test_maskable_ppo_trains_on_it(one_torch_thread):
    venv = Vec421Env(8, table("optimal"), seed=0)
    model = MaskablePPO("MlpPolicy", venv, n_steps=16, batch_size=64, seed=0, device="cpu")
    model.learn(256)
    assert model.num_timesteps >= 256


# --- what a caller is told ----------------------------------------------------------


def test_illegal_actions_get_one_exact_line():
    """Why, what the agent holds (as leader or as follower), what is legal; and in a
    decided game, that any in-range action is fine there."""
    venv = Vec421Env(8, table("optimal"), seed=1)
    venv.reset()
    masks = venv.action_masks()
    live = np.flatnonzero(venv.pending == 0)
    leader = next(i for i in live if venv.leader[i] == 0)
    follower = next(i for i in live if venv.leader[i] == 1)
    for row, role in ((leader, "leader"), (follower, f"follower owing {venv.allowed[follower]} rolls")):
        hand = g.HANDS[venv.hand[row]]
        np.testing.assert_array_equal(masks[row], codec421.action_mask(hand, row == leader))
        bad = int(np.flatnonzero(~masks[row])[0])
        actions = masks.argmax(axis=1)
        actions[row] = bad
        options = ", ".join(f"{x}={g.describe_action(x)}" for x in np.flatnonzero(masks[row]))
        with pytest.raises(g.IllegalAction) as info:
            venv.step(actions)
        assert str(info.value) == (
            f"game {row}: action {bad} ({g.describe_action(bad)}) is not legal: the agent "
            f"({role}) holds {g.hand_str(hand)} after roll {venv.used[row]}; "
            f"legal actions: {options}"
        ), role

    # Game 0 is decided in the charge (seat 0 plays first; every roll 4-2-1, worth 10: the
    # first player takes the whole pot of 5 at once and loses).
    venv = Vec421Env(1, table("optimal", 5), pot=5, agent_seat=0, dice=scripted_dice([[4, 2, 1, 1, 2, 3] * 4], [[0]]))
    venv.reset()
    assert venv.pending[0] != 0
    with pytest.raises(g.IllegalAction) as info:
        venv.step(np.array([g.N_ACTIONS]))
    assert str(info.value) == (
        f"game 0: action {g.N_ACTIONS} (not in 0..{g.N_ACTIONS - 1}) is not legal: the game "
        f"is decided (this step returns its reward, whatever action in 0..{g.N_ACTIONS - 1} "
        f"is given); legal actions: 0=STOP"
    )


def test_bad_arguments_get_one_exact_line():
    optimal = table("optimal")
    cases = [
        (dict(agent_seat=2), ValueError, "agent_seat must be 0, 1 or 'random', got 2"),
        (dict(agent_seat=True), ValueError, "agent_seat must be 0, 1 or 'random', got True"),
        (dict(agent_seat="red"), ValueError, "agent_seat must be 0, 1 or 'random', got 'red'"),
        (dict(agent_seat=1.0), ValueError, "agent_seat must be 0, 1 or 'random', got 1.0"),
        (dict(pot=0), ValueError, "pot must be a whole number in 1..100, got 0"),
        (dict(pot=2.5), ValueError, "pot must be a whole number in 1..100, got 2.5"),
        # the one check of the option (GameSpec), as the engine and the other envs have it
        (dict(pot=True), ValueError, "pot must be a whole number in 1..100, got True"),
        (dict(pot=101), ValueError, "pot must be a whole number in 1..100, got 101"),
        (dict(pot=5), ValueError, "the opponent's table is for pot 15, this env's pot is 5"),
        (dict(exploring_starts=-0.1), ValueError, "exploring_starts is a share of the games in 0..1, got -0.1"),
        (dict(exploring_starts=1.5), ValueError, "exploring_starts is a share of the games in 0..1, got 1.5"),
        (dict(exploring_starts=np.nan), ValueError, "exploring_starts is a share of the games in 0..1, got nan"),
        (dict(exploring_starts=True), ValueError, "exploring_starts is a share of the games in 0..1, got True"),
        (dict(exploring_starts="half"), ValueError, "exploring_starts is a share of the games in 0..1, got 'half'"),
        (
            dict(exploring_starts=0.5, dice=scripted_dice([[1, 2, 3]] * 2, [0, 0])),
            ValueError,
            "exploring_starts needs the env's own dice: scripted dice roll the charge die by die",
        ),
    ]
    for kwargs, kind, message in cases:
        with pytest.raises(kind) as info:
            Vec421Env(2, optimal, **kwargs)
        assert str(info.value) == message, kwargs
    with pytest.raises(TypeError) as info:
        Vec421Env(2, "optimal")
    assert str(info.value) == (
        "the opponent is a Policy421 table, got str: build one with "
        "agents.bot_table('421', name, pot=...) or games.dice421.solver.as_policy(agent, pot)"
    )
    venv = Vec421Env(2, optimal, agent_seat=np.int64(1), seed=0)
    venv.reset()
    assert (venv.seat == 1).all()
    with pytest.raises(RuntimeError, match=r"^step_wait\(\) without step_async\(actions\): call step\(actions\)$"):
        Vec421Env(2, optimal, seed=0).step_wait()


def test_scripted_dice_feed_each_game_in_order_until_they_run_out():
    dice = scripted_dice([[6, 5, 4, 3], [1, 2, 3]], [[0, 1], 1])
    first = dice.roll(np.array([0, 1]), np.array([2, 3]), 3)
    np.testing.assert_array_equal(first[0, :2], [6, 5])
    np.testing.assert_array_equal(first[1], [1, 2, 3])
    np.testing.assert_array_equal(dice.roll(np.array([0]), 2, 2), [[4, 3]])  # exactly what was left
    with pytest.raises(RuntimeError, match="^dice script of game 1 exhausted$"):
        dice.roll(np.array([1]), 1, 3)
    np.testing.assert_array_equal(dice.draw_seats(np.array([0, 1])), [0, 1])
    np.testing.assert_array_equal(dice.draw_seats(np.array([0])), [1])
    with pytest.raises(RuntimeError, match="^seat script of game 1 exhausted$"):
        dice.draw_seats(np.array([1]))
    with pytest.raises(ValueError, match="^give one seat script per dice script, got 1 and 2$"):
        scripted_dice([[1], [2]], [[0]])


def test_a_pot_of_one_token_is_decided_in_the_charge():
    """One token: the first charge round hands it to the lower hand, who then holds every
    token and loses; no discharge, every game is decided before the agent's first choice."""
    venv = Vec421Env(64, table("optimal", 1), pot=1, seed=0)
    obs = venv.reset()
    assert (obs[:, codec421.PHASE] == codec421.PHASE_CODE[g.OVER]).all()
    assert set(venv.pending.tolist()) == {-1.0, 1.0}
    np.testing.assert_array_equal(venv.pending == 1.0, venv.tok[:, 0] == 0)
    np.testing.assert_array_equal(venv.tok.sum(axis=1), 1)


def test_a_stochastic_opponent_samples_each_decision_from_its_row():
    """A table that is not one-hot is sampled: at every opponent decision, from the row of
    its state (``Policy421``: leader[t, r - 1, h], follower[t, d, L, h]), independently
    per game: only actions with probability on, at the row's frequencies."""
    pot = 5
    # Half optimal, a fifth uniformly random, the rest on each hand's last legal action (the
    # last action, keep 6-6, then gets a good share where it is legal).
    last = np.eye(g.N_ACTIONS)[g.N_ACTIONS - 1 - np.flip(policy421.FOLLOWER_LEGAL, axis=1).argmax(axis=1)]
    lasts = solver421.Policy421(
        pot,
        np.broadcast_to(last, (pot + 1, 2) + last.shape).copy(),
        np.broadcast_to(last, (pot + 1, 3, len(g.HANDS)) + last.shape).copy(),
        "last",
    )
    policy = mixture("mixed", mixture("optimal+random", table("optimal", pot), table("random", pot), 5 / 7), lasts, 0.7)
    venv = Vec421Env(512, policy, pot=pot, seed=5)
    seen = {}  # row of the table -> (probabilities, action counts)
    shared_rows = differ = 0
    totals = np.zeros((3, g.N_ACTIONS))  # per action: times drawn, expected times, variance
    original = venv._opponent_actions

    def spy(rows):
        nonlocal shared_rows, differ
        actions = original(rows)
        by_row = {}
        for r, a in zip(rows, actions):
            t, h, used = venv.tok[r, 1], venv.hand[r], venv.used[r]
            if venv.leader[r] == 1:
                key = ("lead", t, used - 1, h)
                p = policy.leader[t, used - 1, h]
            else:
                d = FOLLOWER_DECISION_INDEX[(int(venv.allowed[r]), int(used))]
                key = ("follow", t, d, venv.played[r, 0], h)
                p = policy.follower[t, d, venv.played[r, 0], h]
            assert p[a] > 0, (key, a)
            totals[0][a] += 1
            totals[1:] += p, p * (1 - p)
            entry = seen.setdefault(key, (p, np.zeros(g.N_ACTIONS)))
            entry[1][a] += 1
            by_row.setdefault(key, []).append(a)
        for key, acts in by_row.items():
            if len(acts) > 1 and (seen[key][0] < 1).all():
                shared_rows += 1
                differ += len(set(acts)) > 1
        return actions

    venv._opponent_actions = spy
    venv.reset()
    chooser = np.random.default_rng(0)
    for _ in range(40):
        venv.step(pick_legal(chooser, venv.action_masks()))
    assert shared_rows > 100 and differ > shared_rows // 5  # games sharing a state draw apart (one draw: 0)
    # Pearson's statistic over the states seen 50 times or more: its mean is its degrees
    # of freedom when every action is drawn at its row's probability.
    chi2 = dof = 0.0
    for p, counts in seen.values():
        n = counts.sum()
        if n >= 50:
            on = p > 0
            chi2 += float(((counts[on] - n * p[on]) ** 2 / (n * p[on])).sum())
            dof += on.sum() - 1
    assert dof > 200 and (chi2 - dof) / np.sqrt(2 * dof) < 5, (chi2, dof)
    drawn, expected, variance = totals
    assert (variance > 0).all() and (np.abs(drawn - expected) / np.sqrt(variance)).max() < 5  # every action


def test_a_one_hot_opponent_is_looked_up_and_draws_nothing():
    """With scripted dice and a fixed seat, the env's generator serves only the sampling of
    a stochastic opponent: a one-hot table (played by lookup) leaves it untouched."""
    pot = 5
    rng = np.random.default_rng(pot)
    dice = [rng.integers(1, 7, size=3000).tolist() for _ in range(32)]
    seats = [rng.integers(2, size=100).tolist() for _ in range(32)]
    optimal, mixed = table("optimal", pot), mixture("mixed", table("optimal", pot), table("random", pot), 0.5)
    junk = solver421.Policy421(pot, optimal.leader.copy(), optimal.follower.copy(), "junk")
    junk.leader[[0, pot]] = junk.follower[[0, pot]] = 1 / g.N_ACTIONS  # rows never asked: ignored
    at_one = solver421.Policy421(pot, optimal.leader.copy(), optimal.follower.copy(), "stochastic at t = 1")
    at_one.leader[1], at_one.follower[1] = mixed.leader[1], mixed.follower[1]
    for name, policy, drawn in (
        ("optimal", optimal, False),
        ("greedy", table("greedy421", pot), False),
        ("junk", junk, False),
        ("mixed", mixed, True),
        ("at one", at_one, True),
    ):
        venv = Vec421Env(32, policy, pot=pot, agent_seat=1, seed=0, dice=scripted_dice(dice, seats))
        before = venv.rng.bit_generator.state
        venv.reset()
        chooser = np.random.default_rng(0)
        for _ in range(20):
            venv.step(pick_legal(chooser, venv.action_masks()))
        assert (venv.rng.bit_generator.state != before) == drawn, name


def test_a_batch_needing_more_rolls_than_the_buffer_holds():
    """Random rolls come from a buffer of ``ROLL_BUFFER`` codes of three dice; a call
    needing more (a RAMPO pair for every game of a large batch) draws a buffer that
    size, and the codes are three fair dice."""
    n = vec421.ROLL_BUFFER // 2 + 1
    venv = Vec421Env(n, table("optimal", 1), pot=1, seed=0)
    first, second = venv._roll_pair(np.arange(n))
    assert len(venv._buffer) == 2 * n and venv._buffer_pos == 2 * n
    dice = np.array(list(np.ndindex(6, 6, 6))) + 1  # codes are 36 d1 + 6 d2 + d3, dice 1..6
    assert np.isin(venv._buffer, dice @ vec421.DIE_WEIGHTS).all()
    assert np.array_equal(first, vec421.ROLL_RANK[venv._buffer[0::2]])
    assert np.array_equal(second, vec421.ROLL_RANK[venv._buffer[1::2]])
    # every hand turns up as often as three fair dice make it (4 standard errors)
    freq = np.bincount(np.concatenate([first, second]), minlength=len(g.HANDS)) / (2 * n)
    exact = codec421.KEEP_TRANSITIONS[g.KEEPS.index(())]
    assert np.all(np.abs(freq - exact) <= 4 * np.sqrt(exact * (1 - exact) / (2 * n)))


@pytest.mark.parametrize("pot", [3, 15])
def test_random_charges_end_as_the_exact_distribution_says(pot):
    """With random dice the end of the charge is drawn from ``charge_outcomes``; with
    scripted dice it is rolled die by die (the scripted tests above).  The drawn ends
    (the first player's tokens, and whether the first player took last and leads)
    match the exact distribution cell by cell within 4 standard errors."""
    n = 200_000
    venv = Vec421Env(n, agents.bot_table("421", "optimal", pot=pot), pot=pot, seed=11)
    rows = np.arange(n)
    venv.first[rows] = venv.rng.integers(2, size=n)
    venv.phase[rows] = vec421.CHARGE
    venv._play_charge(rows)
    first = venv.first
    tokens = venv.tok[rows, first]
    leads = venv.leader == first  # the last taker leads (-1 where the charge decided the game)
    over = venv.phase == vec421.OVER
    assert np.array_equal(over, (tokens == 0) | (tokens == pot))
    c = solver421.charge_outcomes(pot)  # [who took last, what it holds]
    held = np.arange(pot + 1)
    for who, by_first in ((0, True), (1, False)):
        for x in held:
            p = c[who, x]
            first_tokens = x if by_first else pot - x
            if first_tokens in (0, pot):  # decided: no leader, only the tokens are seen
                p = c[0, x] + c[1, pot - x] if by_first else 0.0
                seen = np.mean(over & (tokens == first_tokens)) if by_first else 0.0
            else:
                seen = np.mean(~over & (leads == by_first) & (tokens == first_tokens))
            assert abs(seen - p) <= 4 * np.sqrt(p * (1 - p) / n) + 1e-12, (who, x, seen, p)
    assert 0 < over.mean() < 1


@pytest.mark.parametrize("share", [0.5, 1.0])
def test_exploring_starts_draw_that_share_of_the_discharge_starts_evenly(share):
    """With ``exploring_starts`` the charge's end is drawn from ``share`` x an even spread
    over the splits a discharge can start from (the first player's tokens 1..pot-1, the
    first or the second player took last and leads) plus ``1 - share`` x its exact
    distribution: cell by cell within 4 standard errors. At 1 no game is decided in the
    charge."""
    pot, n = 15, 200_000
    venv = Vec421Env(n, table("optimal"), pot=pot, seed=12, exploring_starts=share)
    first = venv.rng.integers(2, size=n)
    tokens, taker = venv._sample_charge(n, first)
    seen = np.bincount(tokens * 2 + (taker == first), minlength=2 * (pot + 1)).reshape(pot + 1, 2) / n
    c = solver421.charge_outcomes(pot)  # [who took last, what it holds]
    exact = np.zeros((pot + 1, 2))  # [the first player's tokens, the first player took last]
    exact[:, 1] += c[0]
    exact[::-1, 0] += c[1]  # the second took last holding x: the first holds pot - x
    even = np.zeros((pot + 1, 2))
    even[1:pot] = 1 / (2 * (pot - 1))
    expected = (1 - share) * exact + share * even
    assert np.all(np.abs(seen - expected) <= 4 * np.sqrt(expected * (1 - expected) / n) + 1e-12)
    assert (seen[[0, pot]].sum() == 0) == (share == 1)
    rare = seen[1].sum() / exact[1].sum()  # the first player starts the discharge holding one token
    assert rare > 1 + share


def test_exploring_starts_of_zero_play_the_same_games():
    """A share of 0 is the game as dealt: the same seed gives the same games as without it."""
    runs = []
    for extra in ({}, {"exploring_starts": 0.0}):
        venv = Vec421Env(64, table("heuristic"), seed=21, **extra)
        rng = np.random.default_rng(0)
        seen = [venv.reset()]
        for _ in range(60):
            masks = venv.action_masks()
            actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
            obs, rewards, dones, _ = venv.step(actions)
            seen += [obs, rewards, dones]
        runs.append(seen)
    assert all(np.array_equal(a, b) for a, b in zip(*runs))
    assert np.concatenate(runs[0][3::3]).any()  # games ended and new ones were dealt


class RandomBatchDice(vec421.BatchDice):
    """Random dice through the scripted-dice path: the charge is then rolled die by die."""

    def __init__(self, seed: int):
        self.rng = np.random.default_rng(seed)

    def roll(self, rows, count, width):
        return self.rng.integers(1, 7, size=(len(rows), width))

    def draw_seats(self, rows):
        return self.rng.integers(2, size=len(rows))


def test_drawn_charges_end_as_rolled_charges_do():
    """The fast path (the charge's end drawn from its distribution) against the die-by-die
    path that the scripted tests tie to the engine: the same distribution of the first
    player's tokens and of who leads the discharge (two samples, 4 standard errors)."""
    pot, n = 15, 100_000
    ends = []
    for dice in (None, RandomBatchDice(5)):
        venv = Vec421Env(n, agents.bot_table("421", "optimal", pot=pot), pot=pot, seed=6, dice=dice)
        rows = np.arange(n)
        first = venv.rng.integers(2, size=n)
        tokens, taker = venv._sample_charge(n, first) if dice is None else venv._roll_charge(rows, first)
        ends.append(np.bincount(tokens * 2 + (taker == first), minlength=2 * (pot + 1)) / n)
    drawn, rolled = ends
    se = np.sqrt((drawn * (1 - drawn) + rolled * (1 - rolled)) / n)
    assert np.all(np.abs(drawn - rolled) <= 4 * se + 1e-12), np.abs(drawn - rolled) / np.maximum(se, 1e-12)
    assert (rolled > 0).sum() > pot  # many cells are in play


# --- a pool of opponents (self-play) ------------------------------------------------


def test_a_pool_of_opponents_is_drawn_per_game_and_played_as_drawn():
    """Each game draws its opponent from the pool, uniformly; the agent's win rate is
    then the mean of its exact win probabilities against each member (4 standard
    errors), and each game's draw matches the opponent it met."""
    pot, n_envs, games_per_row = 5, 2048, 12
    pool = [table("optimal", pot), table("random", pot), table("cautious", pot)]
    agent_table = table("greedy421", pot)
    exact = [solver421.evaluate(agent_table, solver421.as_policy(p, pot)) for p in pool]
    lead_actions, follow_actions = agent_table.leader.argmax(-1), agent_table.follower.argmax(-1)
    venv = Vec421Env(n_envs, pool, pot=pot, seed=7)
    assert venv.opponent_policy == tuple(pool)
    obs = venv.reset()
    counted = np.zeros(n_envs, dtype=np.int64)
    wins = np.zeros(len(pool))
    played = np.zeros(len(pool))
    while counted.min() < games_per_row:
        drawn = venv.opp_index.copy()  # the draw of the game each row is playing
        obs, rewards, dones, infos = venv.step(table_actions(lead_actions, follow_actions, obs))
        for i in np.flatnonzero(dones & (counted < games_per_row)):
            played[drawn[i]] += 1
            wins[drawn[i]] += rewards[i] > 0
            counted[i] += 1
    games = played.sum()
    assert np.all(np.abs(played / games - 1 / 3) < 4 * np.sqrt(2 / 9 / games))  # uniform draws
    for k, p in enumerate(exact):  # each member is played as its own table
        assert abs(wins[k] / played[k] - p) < 4 * np.sqrt(p * (1 - p) / played[k]), (k, wins[k] / played[k], p)
    assert exact[1] > exact[0] + 0.1  # the members differ enough for a mix-up to show


def test_a_pool_of_one_plays_the_same_games_as_the_table_and_a_bad_member_changes_nothing():
    a, b = Vec421Env(64, [table("optimal")], seed=2), Vec421Env(64, table("optimal"), seed=2)
    oa, ob = a.reset(), b.reset()
    chooser = np.random.default_rng(1)
    for _ in range(30):
        assert np.array_equal(oa, ob)
        actions = pick_legal(chooser, a.action_masks())
        oa, ra, _, _ = a.step(actions)
        ob, rb, _, _ = b.step(actions)
        assert np.array_equal(ra, rb)
    pool = [table("optimal"), table("random")]
    a.set_opponent(pool)
    with pytest.raises(ValueError, match="pool entry 1: the opponent's table is for pot 5"):
        a.set_opponent([table("optimal"), table("random", 5)])
    with pytest.raises(TypeError, match="pool entry 0: the opponent is a Policy421 table, got str"):
        a.set_opponent(["optimal"])
    with pytest.raises(ValueError, match="the opponent pool is empty"):
        a.set_opponent([])
    assert a.opponent_policy == tuple(pool) and len(a._pool) == 2


def test_pool_weights_set_each_member_s_share_of_the_games():
    pool = [table("optimal"), table("random"), table("cautious")]
    venv = Vec421Env(60_000, pool, seed=5)
    venv.set_opponent(pool, weights=[0.5, 0.0, 1.5])
    venv.reset()
    share = np.bincount(venv.opp_index, minlength=3) / venv.num_envs
    assert share[1] == 0.0 and abs(share[0] - 0.25) < 4 * np.sqrt(0.25 * 0.75 / venv.num_envs)
    for bad in ([1, 2], [1, -1, 1], [0, 0, 0], [1, float("nan"), 1], [[1, 2, 3]]):
        with pytest.raises(ValueError, match="pool weights must be 3 finite non-negative numbers"):
            venv.set_opponent(pool, weights=bad)
    assert venv._pool_cdf[0] == 0.25  # the last good weights stay
