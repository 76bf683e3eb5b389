"""Trained policies as agents, and their checkpoint format.

A playable checkpoint is two files side by side:

* ``NAME.pt``: the policy network's weights (a plain tensor dict, read with
  ``torch.load(weights_only=True)``, so loading runs no code from the file);
* ``NAME.json``: what the weights are (format, game, network shape, feature
  extractor by name from an allow-list) and how they were made (preset,
  timesteps, seed, library versions, measured strength).

Training also writes ``NAME.zip`` (SB3's own format, with the optimizer state)
for ``--resume``; playing never reads it.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.base import DeterministicAgent
import games

FORMAT = "dice-arena-policy"
FORMAT_VERSION = 1
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}


def game_spaces(game: str, env: dict[str, Any] | None = None) -> tuple[spaces.Space, spaces.Space]:
    """The observation and action spaces of a game's env (``env``: its options, e.g. the pot)."""
    try:
        spec = games.get(game)
        options = dict(env or {})
        n_players = int(options.pop("n_players", 2))
        return spec.observation_space(n_players, **options), spec.action_space()
    except (ValueError, TypeError) as e:
        raise CheckpointError(f"no trained-policy support for game {game!r} with {env}: {e}") from None


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or not a dice-arena policy for this game."""


def policy_class_from(spec: dict[str, Any]) -> type[MaskableActorCriticPolicy]:
    from agents.features import POLICY_CLASSES

    name = spec.get("class", "MlpPolicy")
    if name not in POLICY_CLASSES:
        raise CheckpointError(f"unknown policy class {name!r} in checkpoint metadata (known: {', '.join(POLICY_CLASSES)})")
    return POLICY_CLASSES[name]


def policy_kwargs_from(spec: dict[str, Any]) -> dict[str, Any]:
    """SB3 policy keyword arguments from the JSON ``policy`` spec (allow-listed names only)."""
    from agents.features import FEATURE_EXTRACTORS

    try:
        kwargs: dict[str, Any] = {"activation_fn": ACTIVATIONS[spec.get("activation", "tanh")]}
        if "net_arch" in spec:
            kwargs["net_arch"] = spec["net_arch"]
        if spec.get("features_extractor"):
            kwargs["features_extractor_class"] = FEATURE_EXTRACTORS[spec["features_extractor"]]
            kwargs["features_extractor_kwargs"] = {k: int(v) for k, v in spec.get("features_extractor_kwargs", {}).items()}
        kwargs.update({k: v if isinstance(v, bool) else int(v) for k, v in spec.get("kwargs", {}).items()})
    except (KeyError, TypeError, ValueError) as e:
        raise CheckpointError(f"unknown or malformed policy setting {e} in checkpoint metadata") from None
    return kwargs


def build_policy(game: str, spec: dict[str, Any], env: dict[str, Any] | None = None) -> MaskableActorCriticPolicy:
    obs_space, act_space = game_spaces(game, env)
    return policy_class_from(spec)(obs_space, act_space, lambda _: 0.0, **policy_kwargs_from(spec))


def save_policy(policy: MaskableActorCriticPolicy, path: Path, metadata: dict[str, Any]) -> None:
    """Write ``path`` (.pt weights) and its ``.json`` metadata."""
    path = Path(path).with_suffix(".pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    torch.save({k: v.detach().cpu() for k, v in policy.state_dict().items()}, path)
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, **metadata}
    path.with_suffix(".json").write_text(json.dumps(meta, indent=2) + "\n")


def load_metadata(path: Path) -> dict[str, Any]:
    meta_path = Path(path).with_suffix(".json")
    if not meta_path.exists():
        raise CheckpointError(f"{meta_path} is missing: a checkpoint needs its metadata file next to the weights")
    try:
        meta = json.loads(meta_path.read_text())
    except (json.JSONDecodeError, UnicodeDecodeError) as e:
        raise CheckpointError(f"{meta_path} is not valid JSON ({e}); the checkpoint is corrupt") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(f"{meta_path} is not a dice-arena policy checkpoint (format {meta.get('format') if isinstance(meta, dict) else None!r})")
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(f"{meta_path} has format version {meta.get('format_version')}, this program reads {FORMAT_VERSION}")
    return meta


class PPOAgent(DeterministicAgent):
    """A trained MaskablePPO policy, played deterministically (the most likely legal action)."""

    def __init__(self, policy: MaskableActorCriticPolicy, game: str, name: str = "ppo", metadata: dict | None = None):
        self.policy = policy.eval()
        self.game = game
        self.name = name
        self.metadata = metadata or {}

    @classmethod
    def load(cls, path: str | Path, expected_game: str | None = None) -> "PPOAgent":
        path = Path(path)
        if path.suffix in ("", ".json", ".zip"):
            path = path.with_suffix(".pt")
        if not path.exists():
            raise CheckpointError(f"no checkpoint at {path}")
        meta = load_metadata(path)
        game = str(meta.get("game"))
        if expected_game is not None and game != str(expected_game):
            raise CheckpointError(f"{path} is a checkpoint for game {game}, not {expected_game}")
        policy = build_policy(game, meta.get("policy", {}), meta.get("env"))
        try:
            state = torch.load(path, map_location="cpu", weights_only=True)
            policy.load_state_dict(state)
        except Exception as e:  # torch raises many kinds for a bad file
            raise CheckpointError(f"cannot read the weights in {path}: {type(e).__name__}: {str(e)[:200]}") from None
        return cls(policy, game, name=meta.get("name", path.stem), metadata=meta)

    @classmethod
    def from_model(cls, model, game: str, name: str = "ppo") -> "PPOAgent":
        return cls(model.policy, game, name)

    @torch.no_grad()
    def logits(self, obs: np.ndarray) -> np.ndarray:
        size = self.policy.observation_space.shape[0]
        if np.shape(obs)[-1] != size:
            players = self.metadata.get("env", {}).get("n_players", 2)
            raise ValueError(
                f"{self.name} was trained on {size}-number observations ({players} players); "
                f"this table shows {np.shape(obs)[-1]}: pick a bot made for this number of players"
            )
        obs_t = torch.from_numpy(np.array(obs, dtype=np.float32))
        features = self.policy.extract_features(obs_t, self.policy.pi_features_extractor)
        latent = self.policy.mlp_extractor.forward_actor(features)
        return self.policy.action_net(latent).numpy()

    def action_probs(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        logits = np.where(masks, self.logits(obs), -np.inf)
        probs = np.zeros(masks.shape)
        probs[np.arange(len(masks)), logits.argmax(axis=1)] = 1.0
        return probs

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.argmax(np.where(action_mask, self.logits(np.asarray(obs)[None])[0], -np.inf)))
