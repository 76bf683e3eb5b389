"""Feature extractors and policies for trained networks (torch), for any game.

``OneHotInts`` codes every component of an integer observation one-hot;
``FastMlpPolicy`` is MaskablePPO's policy with a faster evaluation of a batch;
``SplitMlpPolicy`` splits one extractor between the actor and the critic (for
extractors made of two halves, such as 420's ``Keep420Features``).  A game's
own extractors are in its folder and named by its spec (``GameSpec.features``).
"""

from __future__ import annotations

from contextlib import nullcontext
from functools import partial

import gymnasium as gym
import numpy as np
import torch
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy
from stable_baselines3.common.policies import BasePolicy
from stable_baselines3.common.torch_layers import BaseFeaturesExtractor, MlpExtractor

MASKED_LOGIT = -1e8  # what sb3-contrib's MaskableCategorical puts on illegal actions


class OneHotInts(BaseFeaturesExtractor):
    """One-hot code of every component of an integer ``Box`` observation (each
    component ``i`` takes ``high[i] - low[i] + 1`` values), concatenated.  Suits
    observations of small counts and dice, like 421's."""

    SETTINGS = ()  # what a checkpoint's features_extractor_kwargs may set

    def __init__(self, observation_space: gym.spaces.Box):
        low = torch.as_tensor(observation_space.low, dtype=torch.long).reshape(-1)
        sizes = torch.as_tensor(observation_space.high, dtype=torch.long).reshape(-1) - low + 1
        super().__init__(observation_space, features_dim=int(sizes.sum()))
        self.one_hot_dim = int(sizes.sum())
        self.register_buffer("low", low, persistent=False)
        self.register_buffer("top", sizes - 1, persistent=False)
        self.register_buffer("offsets", torch.cumsum(sizes, 0) - sizes, persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        idx = torch.minimum((obs.long() - self.low).clamp(min=0), self.top) + self.offsets
        out = torch.zeros(obs.shape[0], self.one_hot_dim, device=obs.device)
        return out.scatter_(1, idx, 1.0)


class ThermometerInts(BaseFeaturesExtractor):
    """Every component of an integer ``Box`` observation as a thermometer: bit ``k`` of
    component ``i`` is 1 when the value is at least ``low[i] + k + 1`` (``high[i] -
    low[i]`` bits; all 0 at ``low[i]``).  "Is this score or total at least t" is then
    one bit, and a threshold on a sum of them one weighted sum: what a policy over
    scores and totals (Pig's) is made of.  Each value's one-hot is the difference of
    two neighbouring bits, so nothing of ``OneHotInts`` is lost."""

    SETTINGS = ()  # what a checkpoint's features_extractor_kwargs may set

    def __init__(self, observation_space: gym.spaces.Box):
        low = torch.as_tensor(observation_space.low, dtype=torch.long).reshape(-1)
        sizes = torch.as_tensor(observation_space.high, dtype=torch.long).reshape(-1) - low
        super().__init__(observation_space, features_dim=int(sizes.sum()))
        component = torch.repeat_interleave(torch.arange(len(sizes)), sizes)
        step = torch.cat([torch.arange(1, int(n) + 1) for n in sizes]) if len(sizes) else torch.zeros(0)
        self.register_buffer("component", component, persistent=False)
        self.register_buffer("threshold", low[component] + step, persistent=False)

    def forward(self, obs: torch.Tensor) -> torch.Tensor:
        return (obs[:, self.component] >= self.threshold).float()


class FastMlpPolicy(MaskableActorCriticPolicy):
    """SB3's maskable actor-critic (same network, same weights, same losses),
    doing less work per batch:

    * the PPO update runs the network once per *distinct* observation of a
      minibatch.  Dice games have few states (420: 15,876 hand pairs), so a
      16,384-sample minibatch holds only a few thousand distinct observations;
      their outputs are gathered back to every sample and autograd sums the
      copies' gradients, so the loss and gradient are the plain policy's (up to
      float rounding).  The masked softmax and the entropy are computed once per
      distinct observation too (equal observations have equal masks in these
      games; a batch where they do not is done row by row);
    * choosing actions in a rollout masks the logits and samples with one
      ``log_softmax`` and ``multinomial``, instead of building a masked
      ``Categorical`` distribution object per step.

    Checkpoints load into either class.
    """

    def __init__(self, observation_space: gym.spaces.Space, action_space: gym.spaces.Space, *args, **kwargs):
        if not isinstance(action_space, gym.spaces.Discrete):
            raise ValueError(f"FastMlpPolicy handles a Discrete action space, got {action_space}; use MlpPolicy")
        super().__init__(observation_space, action_space, *args, **kwargs)
        # Integer Box observations whose value combinations fit in an int64 get one key per
        # row (a mixed-radix number); anything else is compared row by row.
        self.register_buffer("_low", None, persistent=False)
        self.register_buffer("_high", None, persistent=False)
        self.register_buffer("_radix", None, persistent=False)
        if isinstance(observation_space, gym.spaces.Box) and np.issubdtype(observation_space.dtype, np.integer):
            low = [int(v) for v in observation_space.low.reshape(-1)]
            high = [int(v) for v in observation_space.high.reshape(-1)]
            sizes = [h - l + 1 for l, h in zip(low, high)]  # Python ints: no overflow
            if int(np.prod([float(n) for n in sizes])) < 2**62:
                radix = np.concatenate([[1], np.cumprod(sizes)[:-1]]).astype(np.int64)
                self._low = torch.tensor(low, dtype=torch.long)
                self._high = torch.tensor(high, dtype=torch.long)
                self._radix = torch.as_tensor(radix)

    def distinct_rows(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor, torch.Tensor]:
        """(the distinct rows of ``obs``, the index of each row's copy among them, and
        the index in ``obs`` of one row equal to each distinct row)."""
        flat = obs.reshape(len(obs), -1)
        keys = None
        if self._radix is not None:
            ints = flat.long()
            # The key is exact only for integer values inside the Box.
            if bool(((ints == flat) & (ints >= self._low) & (ints <= self._high)).all()):
                keys = ((ints - self._low) * self._radix).sum(dim=1)
        if keys is not None:
            distinct, inverse = torch.unique(keys, return_inverse=True)
        else:
            distinct, inverse = torch.unique(flat, dim=0, return_inverse=True)
        rows = torch.arange(len(obs), device=obs.device)
        first = torch.empty(len(distinct), dtype=torch.long, device=obs.device).scatter_(0, inverse, rows)
        return obs[first], inverse, first

    # The dtype the hidden layers (``mlp_extractor``) compute in; None: float32.  Training
    # sets it for its rollouts and updates (``Preset.mixed_precision``); the weights, the
    # features and the two heads stay float32, and evaluations and play leave it None.
    hidden_dtype: torch.dtype | None = None

    def _hidden_precision(self, device: torch.device):
        """Autocast of the hidden layers to ``hidden_dtype``, or nothing."""
        if self.hidden_dtype is None:
            return nullcontext()
        return torch.autocast(device.type, dtype=self.hidden_dtype)

    def _latents(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        features = self.extract_features(obs)
        with self._hidden_precision(obs.device):
            if self.share_features_extractor:
                latent_pi, latent_vf = self.mlp_extractor(features)
            else:
                pi_features, vf_features = features
                latent_pi = self.mlp_extractor.forward_actor(pi_features)
                latent_vf = self.mlp_extractor.forward_critic(vf_features)
        return latent_pi.float(), latent_vf.float()  # the heads' input: float32

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        """SB3's value of each observation, its hidden layers in ``hidden_dtype``."""
        features = BasePolicy.extract_features(self, obs, self.vf_features_extractor)  # as SB3's
        with self._hidden_precision(obs.device):
            latent_vf = self.mlp_extractor.forward_critic(features)
        return self.value_net(latent_vf.float())

    def logits_and_values(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        """The action logits (before masking) and the value of each observation."""
        latent_pi, latent_vf = self._latents(obs)
        return self.action_net(latent_pi), self.value_net(latent_vf)

    @staticmethod
    def _masked_log_probs(logits: torch.Tensor, action_masks) -> tuple[torch.Tensor, torch.Tensor | None]:
        if action_masks is None:
            return torch.log_softmax(logits, dim=-1), None
        mask = torch.as_tensor(action_masks, dtype=torch.bool, device=logits.device).reshape(logits.shape)
        # along the long axis: torch's CPU log_softmax is several times slower along a
        # short last axis (a row of 14 or 29 actions) than down the columns
        return torch.log_softmax(torch.where(mask, logits, MASKED_LOGIT).T, dim=0).T, mask

    @staticmethod
    def _probs(log_probs: torch.Tensor, mask: torch.Tensor | None) -> torch.Tensor:
        """``exp(log_probs)``, without exponentiating the masked logits (exp of a huge
        negative number takes a slow path on the CPU; it is 0 either way).  A row with
        every action masked is uniform, as in SB3's masked distribution."""
        if mask is None:
            return log_probs.exp()
        mask = mask | ~mask.any(dim=-1, keepdim=True)
        return torch.where(mask, log_probs, 0.0).exp() * mask

    def forward(self, obs: torch.Tensor, deterministic: bool = False, action_masks=None):
        logits, values = self.logits_and_values(obs)
        log_probs, mask = self._masked_log_probs(logits, action_masks)
        if deterministic:
            actions = log_probs.argmax(dim=-1, keepdim=True)
        else:
            actions = torch.multinomial(self._probs(log_probs, mask), 1)
        return actions.squeeze(-1), values, log_probs.gather(-1, actions).squeeze(-1)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks=None):
        values, inverse, chosen, entropy = self._evaluated(obs, actions, action_masks)
        return values[inverse], chosen, entropy

    def _evaluated(self, obs: torch.Tensor, actions: torch.Tensor, action_masks=None):
        """(the critic's output at each distinct observation, each sample's row there, the
        log-probability of each sample's action, each sample's entropy)."""
        distinct, inverse, first = self.distinct_rows(obs)
        logits, values = self.logits_and_values(distinct)
        masks = row_masks = None
        rows = inverse  # the row of log_probs for each sample
        if action_masks is not None:
            masks = torch.as_tensor(action_masks, dtype=torch.bool, device=obs.device).reshape(len(obs), -1)
            row_masks = masks[first]
            if not torch.equal(row_masks[inverse], masks):
                # equal observations with different masks: every row on its own
                logits, row_masks, rows = logits[inverse], masks, torch.arange(len(obs), device=obs.device)
        log_probs, mask = self._masked_log_probs(logits, row_masks)
        p_log_p = self._probs(log_probs, mask) * log_probs
        if mask is not None:
            p_log_p = torch.where(mask, p_log_p, 0.0)
        chosen = log_probs[rows, actions.long().reshape(-1)]
        return values, inverse, chosen, -p_log_p.sum(dim=-1)[rows]


class QMlpPolicy(FastMlpPolicy):
    """``FastMlpPolicy`` whose critic gives an action value Q(s, a) for every action (its
    value head has one output per action) instead of one state value.

    * A state's value is the policy's mean of them, ``V(s) = sum_a pi(a|s) Q(s, a)``, over
      the legal actions (the masked policy): what GAE bootstraps with and subtracts.
    * In the PPO update the critic's prediction for a sample is ``Q(s_t, a_t)``, the value
      of the action taken, and its target is the same lambda-return as a state value's (the
      return after taking a_t): PPO's own value loss, unchanged.
    * Choosing actions in a rollout keeps the value of each action chosen (``chosen_q``),
      so ``train.fast.BatchedMaskablePPO`` can take part of each advantage from the critic,
      ``Q(s_t, a_t) - V(s_t)`` (``Preset.q_advantage``).  That part has none of the noise of
      the dice that follow; GAE's part keeps the outcomes' say.

    The actor (``action_net``, what an agent plays) is ``FastMlpPolicy``'s.  Without masks
    (``predict_values``) a state's value is the mean over the unmasked policy."""

    chosen_q: torch.Tensor | None = None

    def _build(self, lr_schedule) -> None:
        super()._build(lr_schedule)
        self.value_net = torch.nn.Linear(self.mlp_extractor.latent_dim_vf, int(self.action_space.n))
        if self.ortho_init:
            self.value_net.apply(partial(self.init_weights, gain=1))  # as SB3 sets its value head
        self.optimizer = self.optimizer_class(self.parameters(), lr=lr_schedule(1), **self.optimizer_kwargs)

    def forward(self, obs: torch.Tensor, deterministic: bool = False, action_masks=None):
        logits, q = self.logits_and_values(obs)
        log_probs, mask = self._masked_log_probs(logits, action_masks)
        probs = self._probs(log_probs, mask)
        if deterministic:
            actions = log_probs.argmax(dim=-1, keepdim=True)
        else:
            actions = torch.multinomial(probs, 1)
        self.chosen_q = q.gather(-1, actions).squeeze(-1)
        values = (probs * q).sum(-1, keepdim=True)
        return actions.squeeze(-1), values, log_probs.gather(-1, actions).squeeze(-1)

    def state_values(self, obs: torch.Tensor, action_masks=None) -> torch.Tensor:
        """V(s) of each observation, the masked policy's mean of its action values, (N, 1)."""
        logits, q = self.logits_and_values(obs)
        log_probs, mask = self._masked_log_probs(logits, action_masks)
        return (self._probs(log_probs, mask) * q).sum(-1, keepdim=True)

    def predict_values(self, obs: torch.Tensor) -> torch.Tensor:
        return self.state_values(obs)

    def evaluate_actions(self, obs: torch.Tensor, actions: torch.Tensor, action_masks=None):
        q, inverse, chosen, entropy = self._evaluated(obs, actions, action_masks)
        return q[inverse, actions.long().reshape(-1)].reshape(-1, 1), chosen, entropy


class SplitMlpExtractor(MlpExtractor):
    """SB3's ``MlpExtractor`` whose actor reads the first half of the features and
    whose critic reads the second half (``feature_dim`` is the width of a half)."""

    def __init__(self, feature_dim: int, **kwargs):
        super().__init__(feature_dim, **kwargs)
        self.half = feature_dim

    def forward(self, features: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        return self.forward_actor(features), self.forward_critic(features)

    def forward_actor(self, features: torch.Tensor) -> torch.Tensor:
        return self.policy_net(features[..., : self.half])

    def forward_critic(self, features: torch.Tensor) -> torch.Tensor:
        return self.value_net(features[..., self.half :])


class SplitMlpPolicy(FastMlpPolicy):
    """``FastMlpPolicy`` over a features extractor made of an actor half and a critic
    half (``halves(obs)`` and ``actor_table()``, as 420's ``Keep420Features``): the
    policy network reads one, the value network the other.  Same losses and same PPO
    update.  The actor's half takes few values (126 in 420: one per other hand), so
    the actor runs once on each and every row looks its logits up."""

    def __init__(self, *args, **kwargs):
        extractor = kwargs.get("features_extractor_class")
        if not (isinstance(extractor, type) and hasattr(extractor, "halves") and hasattr(extractor, "actor_table")):
            name = getattr(extractor, "__name__", extractor)
            raise ValueError(
                f"SplitMlpPolicy needs a features extractor made of two halves "
                f"(with halves() and actor_table()), not {name}"
            )
        if not kwargs.get("share_features_extractor", True):
            raise ValueError(
                "SplitMlpPolicy splits one features extractor between the actor and the critic: "
                "share_features_extractor must be True"
            )
        super().__init__(*args, **kwargs)

    def _build_mlp_extractor(self) -> None:
        self.mlp_extractor = SplitMlpExtractor(
            self.features_dim // 2, net_arch=self.net_arch, activation_fn=self.activation_fn, device=self.device
        )

    def logits_and_values(self, obs: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
        # The actor's input takes one of a few values: run the actor once on each and look
        # the rows up (the same logits as through ``forward``, for a fraction of the work).
        index, critic = self.features_extractor.halves(obs)
        with self._hidden_precision(obs.device):
            latent_pi = self.mlp_extractor.policy_net(self.features_extractor.actor_table())
            latent_vf = self.mlp_extractor.value_net(critic)
        return self.action_net(latent_pi.float())[index], self.value_net(latent_vf.float())


# Names a checkpoint may use for its network parts, with those each game declares
# (agents.ppo_agent.feature_extractors): loading looks them up there and nowhere
# else, so a checkpoint cannot name arbitrary code.
FEATURE_EXTRACTORS = {"OneHotInts": OneHotInts, "ThermometerInts": ThermometerInts}
POLICY_CLASSES = {
    "MlpPolicy": MaskableActorCriticPolicy,
    "FastMlpPolicy": FastMlpPolicy,
    "QMlpPolicy": QMlpPolicy,
    "SplitMlpPolicy": SplitMlpPolicy,
}
