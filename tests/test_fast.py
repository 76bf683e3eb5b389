"""The training speed-ups change the work, not the algorithm: FastMlpPolicy computes
what SB3's maskable policy computes, BatchedMaskablePPO collects the rollouts
MaskablePPO collects, and the per-update optimality check agrees with exact
evaluation."""

import numpy as np
import pytest
import torch
from gymnasium import spaces
from sb3_contrib import MaskablePPO
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.vec_env import VecMonitor

import agents
from games.dice420 import solver as solver420
from agents.features import FastMlpPolicy, OneHotInts
from agents.ppo_agent import game_spaces, policy_kwargs_from
from games.dice420 import codec as codec420
from games.dice420.vec import Vec420Env
from train.fast import BatchedMaskablePPO, EpisodeMonitor
from train.presets import PRESETS


def twin_policies(game: str, spec: dict, seed: int = 0):
    """A FastMlpPolicy and a plain MaskableActorCriticPolicy with the same random weights."""
    obs_space, act_space = game_spaces(game)
    fast = FastMlpPolicy(obs_space, act_space, lambda _: 1e-3, **policy_kwargs_from(spec))
    torch.manual_seed(seed)
    for p in fast.parameters():
        p.data.normal_(0.0, 0.3)
    plain = MaskableActorCriticPolicy(obs_space, act_space, lambda _: 1e-3, **policy_kwargs_from(spec))
    plain.load_state_dict(fast.state_dict())
    return fast, plain


def rollout_batch_420(n: int = 512, seed: int = 0):
    """Observations and masks from real 420 games, with duplicate rows (as in a minibatch)."""
    env = Vec420Env(n, agents.bot_table("420", "optimal"), seed=seed)
    obs = env.reset()
    rng = np.random.default_rng(seed)
    all_obs, all_masks = [], []
    for _ in range(4):
        masks = env.action_masks()
        all_obs.append(obs)
        all_masks.append(masks)
        obs, _, _, _ = env.step(np.array([rng.choice(np.flatnonzero(m)) for m in masks]))
    obs, masks = np.concatenate(all_obs), np.concatenate(all_masks)
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return torch.as_tensor(obs, dtype=torch.float32), masks, torch.as_tensor(actions, dtype=torch.float32)


def rollout_batch_421(n: int = 300, seed: int = 0):
    from games.dice421.env import Dice421Env

    env = Dice421Env(opponent=agents.make_agent("421", "heuristic"))
    rng = np.random.default_rng(seed)
    obs, info = env.reset(seed=seed)
    all_obs, all_masks = [], []
    while len(all_obs) < n:
        mask = env.action_masks()
        all_obs.append(obs)
        all_masks.append(mask)
        obs, _, done, _, info = env.step(int(rng.choice(np.flatnonzero(mask))))
        if done:
            obs, info = env.reset()
    obs = np.stack(all_obs + all_obs[:50])
    masks = np.stack(all_masks + all_masks[:50])
    actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
    return torch.as_tensor(obs, dtype=torch.float32), masks, torch.as_tensor(actions, dtype=torch.float32)


@pytest.mark.parametrize("game", ["420", "421"])
def test_fast_policy_update_matches_the_plain_policy(game):
    spec = PRESETS[f"ppo-{game}"].policy
    fast, plain = twin_policies(game, spec)
    obs, masks, actions = rollout_batch_420() if game == "420" else rollout_batch_421()
    distinct = len(torch.unique(obs, dim=0))
    assert distinct < len(obs)  # the batch has copies, so the distinct-row path is exercised

    results = []
    for policy in (fast, plain):
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
        loss = (
            (values.squeeze(-1) * torch.linspace(-1, 1, len(obs))).sum()
            - (log_prob * torch.cos(actions)).sum()
            - entropy.sum()
        )
        policy.optimizer.zero_grad()
        loss.backward()
        grads = torch.cat([p.grad.flatten() for p in policy.parameters()])
        results.append((values.detach(), log_prob.detach(), entropy.detach(), grads))
    for got, want in zip(results[0], results[1]):  # equal up to float32 summation order
        assert (got - want).norm() <= 1e-5 * want.norm() + 1e-6, (got - want).abs().max()
    assert results[0][3].abs().max() > 0


def test_fast_policy_update_keeps_apart_equal_observations_with_different_masks():
    """The update softmaxes each distinct observation once, which is right only when equal
    observations have equal masks (true of every env here); when they do not, it
    falls back to every row on its own and still matches the plain policy."""
    fast, plain = twin_policies("420", PRESETS["ppo-420"].policy, seed=2)
    obs, masks, _ = rollout_batch_420(256, seed=2)
    obs, masks = torch.cat([obs, obs]), np.concatenate([masks, masks])
    masks[len(masks) // 2 :] = True  # the same observations, every action allowed
    actions = torch.as_tensor([np.flatnonzero(m)[-1] for m in masks], dtype=torch.float32)
    results = []
    for policy in (fast, plain):
        values, log_prob, entropy = policy.evaluate_actions(obs, actions, action_masks=masks)
        (values.sum() + log_prob.sum() + entropy.sum()).backward()
        grads = torch.cat([p.grad.flatten() for p in policy.parameters()])
        results.append((values.detach().reshape(-1), log_prob.detach(), entropy.detach(), grads))
    for a, b in zip(*results):
        assert (a - b).norm() <= 1e-5 * b.norm() + 1e-6, (a - b).abs().max()
    half = len(obs) // 2
    entropy = results[0][2]
    assert not torch.allclose(entropy[:half], entropy[half:])  # the masks did change the entropy


def test_a_row_with_every_action_masked_samples_uniformly_as_sb3_does():
    fast, plain = twin_policies("420", PRESETS["ppo-420"].policy, seed=4)
    obs, masks, _ = rollout_batch_420(64, seed=4)
    masks[:8] = False
    with torch.no_grad():
        torch.manual_seed(1)
        a1, _, lp1 = fast(obs, action_masks=masks)
        torch.manual_seed(1)
        a2, _, lp2 = plain(obs, action_masks=masks)
    assert torch.equal(a1, a2) and torch.allclose(lp1[8:], lp2[8:], atol=1e-5)
    # uniform: log 1/14 (SB3's float32 sum of -1e8 logits rounds this one to 0)
    assert torch.allclose(lp1[:8], torch.full((8,), -np.log(masks.shape[1]), dtype=lp1.dtype), atol=1e-5)


def test_fast_policy_samples_the_same_actions_as_the_plain_policy():
    fast, plain = twin_policies("420", PRESETS["ppo-420"].policy, seed=3)
    obs, masks, _ = rollout_batch_420(256, seed=3)
    with torch.no_grad():
        torch.manual_seed(7)
        a1, v1, lp1 = fast(obs, action_masks=masks)
        torch.manual_seed(7)
        a2, v2, lp2 = plain(obs, action_masks=masks)
        d1, _, _ = fast(obs, deterministic=True, action_masks=masks)
        d2, _, _ = plain(obs, deterministic=True, action_masks=masks)
    assert torch.equal(a1, a2) and torch.equal(d1, d2)
    assert masks[np.arange(len(masks)), a1.numpy()].all()
    assert torch.allclose(v1, v2) and torch.allclose(lp1, lp2, atol=1e-5)


@pytest.mark.parametrize("policy_class", [MaskableActorCriticPolicy, FastMlpPolicy])
def test_batched_ppo_collects_the_same_rollout_as_maskable_ppo(policy_class):
    spec = PRESETS["ppo-420"].policy
    buffers, episodes = [], []
    for algo, monitor in ((MaskablePPO, VecMonitor), (BatchedMaskablePPO, EpisodeMonitor)):
        env = monitor(Vec420Env(64, agents.bot_table("420", "optimal"), seed=5))
        model = algo(
            policy_class,
            env,
            policy_kwargs=policy_kwargs_from(spec),
            n_steps=32,
            batch_size=512,
            n_epochs=1,
            seed=5,
            device="cpu",
        )
        model.learn(64 * 32 * 2)  # two rollouts and one update in between
        buffers.append(model.rollout_buffer)
        episodes.append([(e["r"], e["l"]) for e in model.ep_info_buffer])
    a, b = buffers
    for field in (
        "observations",
        "actions",
        "rewards",
        "episode_starts",
        "values",
        "log_probs",
        "action_masks",
        "advantages",
        "returns",
    ):
        np.testing.assert_allclose(getattr(a, field), getattr(b, field), rtol=1e-5, atol=1e-6, err_msg=field)
    assert episodes[0] == episodes[1] and len(episodes[0]) > 0


def test_episode_monitor_matches_vec_monitor_infos():
    plain = VecMonitor(Vec420Env(32, agents.bot_table("420", "greedy"), seed=2))
    fast = EpisodeMonitor(Vec420Env(32, agents.bot_table("420", "greedy"), seed=2))
    plain.reset(), fast.reset()
    rng = np.random.default_rng(0)
    ended = 0
    for _ in range(40):
        masks = plain.venv.action_masks()
        actions = np.array([rng.choice(np.flatnonzero(m)) for m in masks])
        _, r1, d1, i1 = plain.step(actions)
        _, r2, d2, i2 = fast.step(actions)
        assert np.array_equal(d1, d2) and np.array_equal(r1, r2)
        for x, y in zip(i1, i2):
            assert ("episode" in x) == ("episode" in y)
            if "episode" in x:
                assert (x["episode"]["r"], x["episode"]["l"]) == (y["episode"]["r"], y["episode"]["l"])
                ended += 1
    assert ended > 0 and plain.episode_count == fast.episode_count


def test_suboptimal_choices_counts_exactly_the_costly_choices():
    best = solver420.solve()
    assert solver420.suboptimal_choices(best.policy) == 0
    # Change the choice in one state where it matters: one suboptimal choice, and a real loss.
    states, _, masks = solver420.decision_batch()
    i = next(i for i in range(len(states)) if masks[i].sum() > 2)
    h, o = states[i]
    worse = next(
        k for k in np.flatnonzero(codec420.LEGAL_MASKS[h]) if best.q[k, o] < best.q[best.policy[h, o], o] - 1e-9
    )
    keeps = best.policy.copy()
    keeps[h, o] = worse
    assert solver420.suboptimal_choices(keeps) == 1
    red, blue = solver420.win_probabilities(solver420.one_hot(keeps), best.policy_table())
    assert red + blue < best.red_win + (1 - best.red_win) - 1e-12
    # A real bot: suboptimal somewhere, and it loses to the optimum in exact evaluation.
    greedy = agents.bot_table("420", "greedy").argmax(axis=2)
    assert solver420.suboptimal_choices(greedy) > 0
    assert sum(solver420.win_probabilities(solver420.one_hot(greedy), best.policy_table())) < 1.0 - 1e-6


def test_distinct_rows_keeps_observations_apart():
    # 421's 25 small integers fit one int64 key; a wide Box falls back to torch.unique over rows.
    fast, _ = twin_policies("421", PRESETS["ppo-421"].policy)
    assert fast._radix is not None and isinstance(fast.features_extractor, OneHotInts)
    wide = FastMlpPolicy(spaces.Box(0, 10**6, shape=(8,), dtype=np.int64), spaces.Discrete(3), lambda _: 1e-3)
    assert wide._radix is None
    rng = np.random.default_rng(0)
    for policy, obs in (
        (fast, rollout_batch_421(120)[0]),
        (wide, torch.as_tensor(rng.integers(0, 3, size=(300, 8)) * 10**5, dtype=torch.float32)),
    ):
        distinct, inverse, first = policy.distinct_rows(obs)
        assert torch.equal(obs[first], distinct)
        assert torch.equal(distinct[inverse], obs)
        assert len(distinct) == len(torch.unique(obs, dim=0)) < len(obs)


@pytest.mark.parametrize(
    "space, rows",
    [
        # a value above the Box would carry into the next digit of the key: [4, 0] and [0, 1]
        (spaces.Box(0, 3, shape=(2,), dtype=np.int64), [[4, 0], [0, 1], [0, 1], [1.5, 0], [1, 0]]),
        # bounds so wide that the number of combinations overflows an int64
        (
            spaces.Box(np.iinfo(np.int64).min, np.iinfo(np.int64).max, shape=(3,), dtype=np.int64),
            [[1, 2, 3], [1, 5, 7], [1, 9, 9], [1, 2, 3]],
        ),
    ],
)
def test_distinct_rows_never_merges_different_observations(space, rows):
    policy = FastMlpPolicy(space, spaces.Discrete(3), lambda _: 1e-3)
    obs = torch.tensor(rows, dtype=torch.float32)
    distinct, inverse, first = policy.distinct_rows(obs)
    assert torch.equal(distinct[inverse], obs) and torch.equal(obs[first], distinct)
    assert len(distinct) == len(torch.unique(obs, dim=0))


def test_fast_policy_refuses_action_spaces_it_does_not_handle():
    with pytest.raises(ValueError, match="Discrete"):
        FastMlpPolicy(spaces.Box(0, 3, shape=(2,), dtype=np.int64), spaces.MultiDiscrete([2, 3]), lambda _: 1e-3)
