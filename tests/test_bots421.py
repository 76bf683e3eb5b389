"""The 421 bots: legal play, strength, and the behaviour each one promises."""

from __future__ import annotations

import numpy as np
import pytest

import agents
from agents import make_agent
from games.dice421 import bots as bots421
from games.dice421 import exactn as exact421n
from games.dice421 import solver as solver421
from agents.base import RandomAgent
from games.dice421.bots import CautiousAgent, Greedy421Agent, HeuristicAgent
from games.dice421 import codec as codec421
from games.dice421 import game as g
from core.dice import ScriptedDice
from games.dice421.env import Dice421Env
from games.dice421.policy import FOLLOWER_LEGAL, LEADER_LEGAL
from helpers import BOT_NAMES_421, played


def rolls(spec: str) -> list[int]:
    return [int(c) for c in spec if c.isdigit()]


def keep(*values) -> int:
    return g.action_for_keep(values)


def discharge_game(discharge: str, n_players: int = 2, leader: int = 0, tokens_each: int = 5) -> g.Game421:
    """A game whose charge gives every seat ``tokens_each`` tokens, one per round
    (the taker rolls 6-5-2, the others 6-5-3), the last to ``leader``; then the
    discharge dice (from the leader's first roll on)."""
    takers = [s for _ in range(tokens_each) for s in range(n_players) if s != leader] + [leader] * tokens_each
    charge = " ".join("652" if seat == t else "653" for t in takers for seat in range(n_players))
    dice = ScriptedDice(rolls(charge + " " + discharge))
    game = g.Game421(n_players, pot=len(takers), dice=dice, first_player=0)
    assert game.leader == leader and game.tokens == [tokens_each] * n_players
    return game


def decide(bot, game) -> int:
    seat = game.current_player
    return bot.act(codec421.observe(game, seat), codec421.legal_mask(game.legal_actions()))


# --- the registry ---------------------------------------------------------------


def test_make_agent_builds_every_named_421_bot():
    assert BOT_NAMES_421 == ("random", "heuristic", "greedy421", "cautious")
    for name in BOT_NAMES_421:
        bot = make_agent("421", name, seed=1)
        assert bot.name == name and callable(bot.act) and bot.__doc__
    assert isinstance(make_agent("421", "random"), RandomAgent)
    with pytest.raises(ValueError, match="unknown agent 'nobody'"):
        make_agent("421", "nobody")
    assert agents.agent_names("421") == (*BOT_NAMES_421, "optimal", "exact3", "ppo-421", "ppo-421-3p")
    assert isinstance(make_agent("421", "optimal"), solver421.OptimalAgent421)
    # names become agents only in agents.make_agent
    for gone in ("make_bot421", "play_game421", "BOT_NAMES_421", "AGENT_NAMES_421", "main"):
        assert not hasattr(bots421, gone), gone
    assert not hasattr(solver421, "bot_table")


# --- legal play -------------------------------------------------------------------


class Checked:
    """Wraps a bot and checks every action it plays is in its mask."""

    def __init__(self, bot):
        self.bot, self.decisions = bot, 0

    def act(self, obs, action_mask):
        action = self.bot.act(obs, action_mask)
        assert isinstance(action, int) and action_mask[action], (self.bot.name, codec421.decode(obs), action)
        self.decisions += 1
        return action


def test_every_bot_plays_only_legal_actions():
    rng = np.random.default_rng(0)
    checked = []
    for i in range(240):
        n = 2 + i % 2
        players = [Checked(make_agent("421", str(name), seed=i)) for name in rng.choice(BOT_NAMES_421, size=n)]
        game = played("421", players, seed=i, pot=15 if i % 3 else 6)
        assert game.is_over and game.tokens[game.loser] == game.initial_pot
        checked += players
    for name in BOT_NAMES_421:
        assert sum(c.decisions for c in checked if c.bot.name == name) > 200


# --- strength -----------------------------------------------------------------------


def loss_rate(bot, opponent, games, first_seed=0):
    """The share of heads-up games ``bot`` loses, alternating seats."""
    lost = 0
    for i in range(games):
        seat = i % 2
        players = [opponent, opponent]
        players[seat] = bot
        lost += played("421", players, seed=first_seed + i).loser == seat
    return lost / games


@pytest.mark.slow
def test_heuristic_beats_random_clearly():
    # Measured: heuristic loses about 16% of 2,000 heads-up games to random.
    assert loss_rate(HeuristicAgent(), RandomAgent(0), 2000) < 0.25


@pytest.mark.slow
def test_heuristic_beats_the_simpler_bots():
    # Measured over 2,000 games: about 44% against greedy421, 42% against cautious.
    heuristic = HeuristicAgent()
    assert loss_rate(heuristic, Greedy421Agent(), 800, first_seed=10_000) < 0.49
    assert loss_rate(heuristic, CautiousAgent(), 800, first_seed=20_000) < 0.49


@pytest.mark.slow
def test_heuristic_leads_three_player_tables_against_random():
    lost = [0, 0, 0]
    for i in range(300):
        players = [RandomAgent(i), RandomAgent(i + 1), RandomAgent(i + 2)]
        players[i % 3] = HeuristicAgent()
        game = played("421", players, seed=i)
        lost[(game.loser - i) % 3] += 1  # position 0 = the heuristic's seat
    assert lost[0] < 0.2 * 300  # chance alone would be a third


# --- behaviour in scripted situations -------------------------------------------------


@pytest.mark.parametrize("hand", ["421", "111", "666", "115"])
def test_leader_stops_on_a_strong_hand(hand):
    for name in ("heuristic", "cautious"):
        game = discharge_game(hand)
        assert decide(make_agent("421", name), game) == g.STOP
    parts = [v for v in (1, 4, 2) if v in rolls(hand)][:2]
    assert decide(Greedy421Agent(), discharge_game(hand)) == (g.STOP if hand == "421" else keep(*parts))


@pytest.mark.parametrize("hand", ["322", "552", "643"])
def test_heuristic_leader_rolls_on_with_a_weak_hand(hand):
    assert decide(HeuristicAgent(), discharge_game(hand)) != g.STOP


def test_cautious_stops_on_a_middling_hand_where_heuristic_rolls_on():
    assert decide(CautiousAgent(), discharge_game("653")) == g.STOP
    assert decide(HeuristicAgent(), discharge_game("653")) != g.STOP
    assert decide(CautiousAgent(), discharge_game("552")) != g.STOP


def test_heuristic_leader_plays_on_past_roll_one_with_a_pair_of_ones():
    game = discharge_game("211")  # 1-1-2 is worth 2; a 1 would make 1-1-1 (7)
    assert decide(HeuristicAgent(), game) == keep(1, 1)


def test_follower_keeps_what_surely_beats_the_leader():
    # The leader stops on 6-5-3 after two rolls; the follower rolls 6-6-4 and owes one more roll:
    # keeping 6-6 beats 6-5-3 whatever comes, keeping anything else may not.
    game = discharge_game("653 53 664")
    game.apply(keep(6))
    game.apply(g.STOP)
    assert (game.current_player, game.dice_in_hand, game.rolls_allowed) == (1, (6, 6, 4), 2)
    assert decide(HeuristicAgent(), game) == keep(6, 6)


def test_follower_facing_421_goes_for_421_itself():
    # A leader's 4-2-1 can only be tied (RAMPO, 1 token) rather than lose 10: keep 4-2.
    game = discharge_game("653 421 642")
    game.apply(keep())
    game.apply(g.STOP)
    assert (game.current_player, game.dice_in_hand) == (1, (6, 4, 2))
    assert decide(HeuristicAgent(), game) == keep(4, 2)
    assert decide(CautiousAgent(), game) == keep(4, 2)


def test_last_of_three_keeps_off_the_bottom():
    # Three players: the leader stops on 1-1-1 after two rolls; the next player makes 6-4-3;
    # the last holds 6-5-2 with one roll left.  6-5-x always beats 6-4-3 (not lowest).
    game = discharge_game("653 111  643 3  652", n_players=3)
    game.apply(keep())
    game.apply(g.STOP)
    game.apply(keep(6, 4))
    assert game.hands_played[1] == (1, (6, 4, 3), 2)
    assert (game.current_player, game.dice_in_hand) == (2, (6, 5, 2))
    assert decide(HeuristicAgent(), game) == keep(6, 5)


def test_greedy421_keeps_ones_fours_and_twos():
    game = discharge_game("641")
    assert decide(Greedy421Agent(), game) == keep(4, 1)
    game = discharge_game("653")
    assert decide(Greedy421Agent(), game) == keep()


def test_bots_play_inside_the_env():
    """Each bot plays three-player games in the env against copies of itself: it is asked
    only at its own turns, shown its own dice and the engine's legal moves; each action it
    picks is legal and is what the game plays for its seat (a STOP, or a reroll keeping
    those dice; never the env's fallback); no token is made or lost, and a game ends +1
    with the agent out of tokens among the winners, or -1 with it holding every token."""
    for name in BOT_NAMES_421:
        env = Dice421Env(opponent=make_agent("421", name, seed=1), n_players=3)
        bot = make_agent("421", name, seed=0)
        decisions = 0
        for seed in range(5):
            obs, info = env.reset(seed=seed)
            seat, term = info["seat"], False
            while not term:
                assert sum(info["tokens"]) + env.game.pot == env.pot
                decided = info["decided"]
                if decided:
                    action = g.STOP  # the only action the mask allows: the step returns the outcome
                else:
                    game, mask = env.game, info["action_mask"]
                    assert game.current_player == seat and codec421.decode(obs).hand == game.dice_in_hand
                    assert np.array_equal(mask, codec421.legal_mask(game.legal_actions()))
                    action = bot.act(obs, mask)
                    assert mask[action], (name, action)
                    seen, decisions = len(game.events), decisions + 1
                obs, reward, term, _, info = env.step(action)
                assert "illegal_action" not in info
                if not decided:
                    event = env.game.events[seen]  # the first thing the game did after the agent's choice
                    assert event["seat"] == seat
                    if action == g.STOP:
                        assert event["type"] == "stop"
                    else:
                        assert event["type"] == "reroll" and event["keep"] == g.keep_for_action(action)
            assert sum(info["tokens"]) + env.game.pot == env.pot
            if reward == 1.0:
                assert info["tokens"][seat] == 0 and seat in info["winners"]
            else:
                assert reward == -1.0 and info["tokens"][seat] == env.pot and info["loser"] == seat
        assert decisions >= 5, name


def test_keep_transitions_are_exact_distributions():
    t = bots421.KEEP_TRANSITIONS
    assert np.allclose(t.sum(1), 1.0)
    assert t[g.KEEPS.index(())][g.hand_rank((4, 2, 1))] == pytest.approx(6 / 216)
    assert t[g.KEEPS.index((1, 1))][g.hand_rank((1, 1, 1))] == pytest.approx(1 / 6)
    assert t[g.KEEPS.index((4,))][g.hand_rank((4, 2, 1))] == pytest.approx(2 / 36)


# --- batched decisions: action_probs answers exactly what act does -----------------------

BATCHED_BOTS = ("heuristic", "cautious", "greedy421")


def one_hot_of_act(bot, obs, masks) -> np.ndarray:
    """The per-row reference: one-hot of ``act`` at each decision."""
    probs = np.zeros((len(obs), g.N_ACTIONS))
    for i, (o, m) in enumerate(zip(obs, masks)):
        probs[i, bot.act(o.copy(), m.copy())] = 1.0
    return probs


class Recorder:
    """Plays like ``bot`` and records every (observation, mask) it is asked at."""

    def __init__(self, bot, log):
        self.bot, self.log, self.name = bot, log, bot.name

    def act(self, obs, action_mask):
        self.log.append((np.array(obs), np.array(action_mask)))
        return self.bot.act(obs, action_mask)


@pytest.fixture(scope="module")
def real_decisions():
    """(obs, masks) met in real games: two players and three (the engine's game loop and Dice421Env)."""
    log = []
    rng = np.random.default_rng(7)
    for i in range(60):  # heads-up, bots drawn at random, pots 15 and 6
        names = rng.choice(BOT_NAMES_421, size=2)
        played("421", [Recorder(make_agent("421", str(n), seed=i), log) for n in names], seed=i, pot=15 if i % 2 else 6)
    n_two = len(log)
    for i in range(20):  # three players, whole games
        names = rng.choice(BOT_NAMES_421, size=3)
        played("421", [Recorder(make_agent("421", str(n), seed=i), log) for n in names], seed=i, pot=15 if i % 2 else 9)
    for i in range(20):  # three players inside the env: the agent's seat and both opponents
        names = [str(n) for n in rng.choice(BOT_NAMES_421, size=3)]
        env = Dice421Env(
            opponent=[Recorder(make_agent("421", n, seed=i), log) for n in names[1:]],
            n_players=3,
            pot=15 if i % 2 else 9,
        )
        me = Recorder(make_agent("421", names[0], seed=i), log)
        obs, info = env.reset(seed=100 + i)
        term = False
        while not term:
            action = g.STOP if info["decided"] else me.act(obs, info["action_mask"])
            obs, _, term, _, info = env.step(action)
    obs = np.stack([o for o, _ in log])
    masks = np.stack([m for _, m in log])
    assert n_two > 300 and len(log) - n_two > 300
    assert set(obs[:, codec421.N_PLAYERS]) == {2, 3}
    # Three-player rounds with a player gone (its slot out of the game) are in there too.
    three = obs[:, codec421.N_PLAYERS] == 3
    slots = codec421.OTHERS_START + codec421.OTHER_SLOT_SIZE * np.arange(2)
    out = np.any(obs[:, slots + codec421.O_IN_GAME] == 0, axis=1)
    assert np.any(three & out)
    return obs, masks


def solver_decisions(pot: int, sample: int | None = None, seed: int = 0):
    """(obs, masks) at the two-player discharge decisions of ``pot`` with the legal masks
    policy_table uses: all of them, or every leader decision and ``sample`` follower ones."""
    lead, foll = solver421.decision_observations(pot)
    lead_masks = np.broadcast_to(solver421.LEADER_LEGAL[None, None], lead.shape[:3] + (g.N_ACTIONS,))
    foll_masks = np.broadcast_to(solver421.FOLLOWER_LEGAL[None, None, None], foll.shape[:4] + (g.N_ACTIONS,))
    lead, foll = lead.reshape(-1, codec421.OBS_SIZE), foll.reshape(-1, codec421.OBS_SIZE)
    lead_masks, foll_masks = lead_masks.reshape(-1, g.N_ACTIONS), foll_masks.reshape(-1, g.N_ACTIONS)
    if sample is not None:
        pick = np.random.default_rng(seed).choice(len(foll), size=sample, replace=False)
        foll, foll_masks = foll[pick], foll_masks[pick]
    return np.concatenate([lead, foll]), np.concatenate([lead_masks, foll_masks])


def assert_batch_is_act(bot, obs, masks):
    got = bot.action_probs(obs.copy(), masks.copy())
    want = one_hot_of_act(bot, obs, masks)
    assert got.shape == want.shape == (len(obs), g.N_ACTIONS)
    bad = np.flatnonzero(np.any(got != want, axis=1))
    if len(bad):
        i = bad[0]
        pytest.fail(
            f"{bot.name}: {len(bad)} of {len(obs)} rows differ; first {codec421.decode(obs[i])}, "
            f"mask {np.flatnonzero(masks[i]).tolist()}: batch {got[i].argmax()}, act {want[i].argmax()}"
        )


def awkward_masks(bot, obs, masks, seed=0):
    """Masks that make the bots' mask handling matter: the usual legal mask without the
    action act picks, random subsets of the actions (STOP often missing), and all False."""
    rng = np.random.default_rng(seed)
    without_choice = masks.copy()
    without_choice[np.arange(len(obs)), one_hot_of_act(bot, obs, masks).argmax(1)] = False
    random = rng.random(masks.shape) < 0.25
    random[rng.random(len(obs)) < 0.02] = False
    return np.concatenate([without_choice, random])


@pytest.mark.parametrize("name", BATCHED_BOTS)
def test_action_probs_is_act_at_solver_decisions_of_pot_15(name):
    bot = make_agent("421", name)
    obs, masks = solver_decisions(15, sample=2000, seed=1)  # every leader decision, a sample of the others
    assert_batch_is_act(bot, obs, masks)
    assert_batch_is_act(bot, np.concatenate([obs, obs]), awkward_masks(bot, obs, masks))


@pytest.mark.parametrize("name", BATCHED_BOTS)
def test_action_probs_is_act_at_decisions_of_real_games(name, real_decisions):
    bot = make_agent("421", name)
    obs, masks = real_decisions
    assert_batch_is_act(bot, obs, masks)
    assert_batch_is_act(bot, np.concatenate([obs, obs]), awkward_masks(bot, obs, masks, seed=2))
    # decode reads any integers: the same decisions as floats, the masks as 0/1 integers.
    assert_batch_is_act(bot, obs.astype(np.float32), masks.astype(np.int8))


class ActOnly:
    """A bot seen through ``act`` alone, so policy_table asks it one decision at a time."""

    def __init__(self, bot):
        self.bot, self.name = bot, bot.name

    def act(self, obs, action_mask):
        return self.bot.act(obs, action_mask)


@pytest.mark.parametrize("name", BATCHED_BOTS)
def test_bot_table_is_the_table_of_act(name):
    # Pot 4: all 28,560 two-player discharge decisions, asked one at a time through act.
    table = agents.bot_table("421", name, pot=4)
    assert agents.bot_table("421", name, pot=4) is table  # cached
    reference = solver421.policy_table(ActOnly(make_agent("421", name)), 4)
    assert table.name == reference.name == name
    assert np.array_equal(table.leader, reference.leader)
    assert np.array_equal(table.follower, reference.follower)


@pytest.mark.parametrize("name", BATCHED_BOTS)
def test_policy_table_never_asks_act_at_two_player_decisions(name, monkeypatch):
    # The whole pot-15 table (131,712 follower and 1,568 leader decisions) is vectorised.
    bot = make_agent("421", name)

    def no_act(obs, action_mask):
        raise AssertionError(f"act called at {codec421.decode(obs)}")

    monkeypatch.setattr(bot, "act", no_act)
    if isinstance(bot, CautiousAgent):
        monkeypatch.setattr(bot.follower, "act", no_act)
    table = solver421.policy_table(bot, 15)
    table.check()


def test_action_probs_hands_other_rows_to_act():
    # Rows it does not vectorise go through act, one by one: here a three-player leader's
    # observation with no roll made yet (not a decision the engine asks, but act answers it).
    calls = []
    bot = HeuristicAgent()
    act = bot.act
    bot.act = lambda obs, mask: calls.append(int(obs[codec421.ROLLS_USED])) or act(obs, mask)
    two, masks2 = solver_decisions(6, sample=10)
    game = discharge_game("653 111", n_players=3)
    three, mask3 = codec421.observe(game, game.current_player), codec421.legal_mask(game.legal_actions())
    odd = three.copy()
    odd[codec421.ROLLS_USED] = 0
    obs, masks = np.vstack([two, three[None], odd[None]]), np.vstack([masks2, mask3[None], mask3[None]])
    probs = bot.action_probs(obs, masks)
    assert calls == [0]  # the odd row only: the three-player decision is vectorised
    assert np.array_equal(probs, one_hot_of_act(HeuristicAgent(), obs, masks))


def test_final_hand_values_of_the_follower_of_two_is_round_utility_per_hand():
    # final_hand_values reads a two-player follower's values from one table per tokens held
    # (every leader's hand at once); each row is, to the bit, the one-hand computation.
    mine = np.arange(bots421.N_HANDS)
    for tokens in [(1, 1), (3, 11), (11, 2), (7, 7), (0, 5)]:
        for bonus in (bots421.LEAVE_BONUS, 0.5):
            for hand in range(bots421.N_HANDS):
                expected = bots421.round_utility([hand, mine], tokens, 1, bonus)
                assert np.array_equal(bots421.final_hand_values((hand,), tokens, 3, bonus), expected)


def mutated_decisions(obs, masks, seed=0, second_slot=False):
    """Real decisions with one to three fields changed at random (who leads, who has played,
    who is still in, rolls, tokens, the number of players, dice order or no dice; of the
    second other slot too with ``second_slot``): the odd corners of what act accepts, to
    check the batch sends each row the way act does."""
    rng = np.random.default_rng(seed)
    s = codec421.OTHERS_START
    fields = [  # (columns, values)
        ([codec421.IS_LEADER], (0, 1)),
        ([s + codec421.O_IS_LEADER], (0, 1)),
        ([s + codec421.O_PLAYED], (0, 1)),
        ([s + codec421.O_IN_GAME], (0, 1)),
        ([codec421.ROLLS_USED], range(4)),
        ([codec421.ROLLS_ALLOWED], range(4)),
        ([codec421.TOKENS], range(16)),
        ([s + codec421.O_TOKENS], range(16)),
        ([codec421.N_PLAYERS], (2, 3)),
        ([0, 1, 2], None),
        ([s + 1, s + 2, s + 3], None),
    ]
    if second_slot:
        s += codec421.OTHER_SLOT_SIZE
        fields += [
            ([s + codec421.O_IS_LEADER], (0, 1)),
            ([s + codec421.O_PLAYED], (0, 1)),
            ([s + codec421.O_IN_GAME], (0, 1)),
            ([s + codec421.O_TOKENS], range(16)),
            ([s + 1, s + 2, s + 3], None),
        ]
    out = obs.copy()
    for row in out:
        for f in rng.choice(len(fields), size=rng.integers(1, 4), replace=False):
            cols, values = fields[f]
            if values is not None:
                row[cols] = rng.choice(values)
            elif rng.random() < 0.2:
                row[cols] = 0
            else:
                row[cols] = rng.permutation(row[cols]) if row[cols[0]] else rng.integers(1, 7, size=3)
    return out, masks.copy()


@pytest.mark.parametrize("name", BATCHED_BOTS)
def test_action_probs_is_act_at_odd_observations(name, real_decisions):
    bot = make_agent("421", name)
    two = real_decisions[0][:, codec421.N_PLAYERS] == 2
    solver_obs, solver_masks = solver_decisions(15, sample=1000, seed=3)
    obs, masks = mutated_decisions(
        np.concatenate([real_decisions[0][two], solver_obs]), np.concatenate([real_decisions[1][two], solver_masks])
    )
    accepted = []
    for i, (o, m) in enumerate(zip(obs, masks)):
        try:
            bot.act(o.copy(), m.copy())
        except Exception as error:  # the batch must raise on this row just as act does
            with pytest.raises(type(error)):
                bot.action_probs(o[None], m[None])
        else:
            accepted.append(i)
    assert len(accepted) > 0.5 * len(obs)
    assert_batch_is_act(bot, obs[accepted], masks[accepted])


# --- batched decisions in three-player rounds: action_probs plans them too -------------------


def round_place(obs) -> tuple[int, int]:
    """(players in the round, the observer's place in its order) of a decision observation."""
    order = codec421.decode(obs).round_order()
    return len(order), order.index(0)


def assert_batch_never_asks_act(bot, obs, masks, monkeypatch):
    """Every row takes the batch's vectorised path: ``_batch_actions`` leaves none to act
    (for cautious, its follower rows are ``_heuristic_actions``'), and act is never called."""
    o, ok = bots421._as_int_rows(obs)
    assert np.all(bot._batch_actions(o, masks.astype(bool), ok) >= 0)
    want = one_hot_of_act(bot, obs, masks)

    def no_act(obs, action_mask):
        raise AssertionError(f"act called at {codec421.decode(obs)}")

    with monkeypatch.context() as patch:
        patch.setattr(bot, "act", no_act)
        if isinstance(bot, CautiousAgent):
            patch.setattr(bot.follower, "act", no_act)
        assert np.array_equal(bot.action_probs(obs.copy(), masks.copy()), want)


@pytest.fixture(scope="module")
def three_player_decisions():
    """(obs, masks) at every decision of three-player games (the engine, pots 5, 15 and 40):
    random legal moves, the heuristic itself and mixed tables.  Players leave the game as
    they run out of tokens, so many rounds are played by two with the third out."""
    log = []
    tables = [
        ("random",) * 3,
        ("heuristic",) * 3,
        ("heuristic", "random", "random"),
        ("random", "cautious", "heuristic"),
    ]
    for i in range(48):
        names = tables[i % len(tables)]
        played(
            "421",
            [Recorder(make_agent("421", name, seed=i * 3 + s), log) for s, name in enumerate(names)],
            seed=500 + i,
            pot=(5, 15, 40)[i % 3],
        )
    obs = np.stack([o for o, _ in log])
    masks = np.stack([m for _, m in log])
    assert set(obs[:, codec421.N_PLAYERS]) == {3}
    places = [round_place(o) for o in obs]
    for place in [(3, 0), (3, 1), (3, 2), (2, 0), (2, 1)]:  # leaders, first and last followers, rounds of two
        assert places.count(place) > 30, (place, places.count(place))
    return obs, masks


@pytest.mark.parametrize("name", ["heuristic", "cautious"])
@pytest.mark.slow
def test_action_probs_plans_three_player_decisions_of_real_games(name, three_player_decisions, monkeypatch):
    bot = make_agent("421", name)
    obs, masks = three_player_decisions
    assert_batch_never_asks_act(bot, obs, masks, monkeypatch)
    assert_batch_never_asks_act(bot, np.concatenate([obs, obs]), awkward_masks(bot, obs, masks, seed=4), monkeypatch)
    assert_batch_is_act(bot, obs.astype(np.float64), masks.astype(np.int8))
    # One row at a time, and the rows of one game in a batch of other games' rows, answer the same.
    for i in range(0, len(obs), 97):
        assert_batch_is_act(bot, obs[i : i + 1], masks[i : i + 1])


SITUATIONS_3 = [  # seen from seat 0: tokens from it clockwise, the leader's place; above TOKEN_CAP too
    exact421n.Situation(3, (4, 5, 6), 0),  # the leader of three
    exact421n.Situation(3, (2, 1, 12), 2),  # the first follower of three
    exact421n.Situation(3, (5, 6, 4), 1),  # the last follower of three
    exact421n.Situation(3, (6, 0, 9), 0),  # the leader of two: the next seat has left
    exact421n.Situation(3, (3, 0, 12), 2),  # the follower of two, the leader two seats on
]


@pytest.mark.parametrize("name", ["heuristic", "cautious"])
def test_action_probs_plans_every_decision_of_three_player_situations(name, monkeypatch):
    # Situation.decision_observations (what exact421n asks at each decision), a sample of each.
    bot = make_agent("421", name)
    rng = np.random.default_rng(5)
    for situation in SITUATIONS_3:
        obs = situation.decision_observations()
        legal = LEADER_LEGAL if situation.position == 0 else FOLLOWER_LEGAL
        masks = np.broadcast_to(legal, obs.shape[:-1] + (g.N_ACTIONS,)).reshape(-1, g.N_ACTIONS)
        obs = obs.reshape(-1, codec421.OBS_SIZE)
        pick = rng.choice(len(obs), size=min(len(obs), 1500), replace=False)
        assert {round_place(o) for o in obs[pick]} == {(len(situation.order), situation.position)}
        assert_batch_never_asks_act(bot, obs[pick], masks[pick], monkeypatch)


@pytest.mark.parametrize("name", ["heuristic", "cautious"])
@pytest.mark.slow
def test_action_probs_is_act_at_odd_three_player_observations(name, three_player_decisions):
    # The odd corners again, both other slots changed: who leads, who is in, who has played.
    bot = make_agent("421", name)
    obs, masks = three_player_decisions
    obs, masks = mutated_decisions(obs, masks, seed=6, second_slot=True)
    accepted = []
    for i, (o, m) in enumerate(zip(obs, masks)):
        try:
            bot.act(o.copy(), m.copy())
        except Exception as error:  # the batch must raise on this row just as act does
            with pytest.raises(type(error)):
                bot.action_probs(o[None], m[None])
        else:
            accepted.append(i)
    assert len(accepted) > 0.5 * len(obs)
    assert_batch_is_act(bot, obs[accepted], masks[accepted])
