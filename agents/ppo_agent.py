"""Trained policies as agents, and their checkpoint format.

A playable checkpoint is two files side by side:

* ``NAME.pt``: the policy network's weights (a plain tensor dict, read with
  ``torch.load(weights_only=True)``, so loading runs no code from the file);
* ``NAME.json``: what the weights are (format, game, network shape, feature
  extractor by name from an allow-list) and how they were made (preset,
  timesteps, seed, library versions, measured strength).  Checkpoints saved by
  training also record ``weights_sha256``, the SHA-256 of ``NAME.pt``: the
  loader refuses weights that are not the ones the metadata describes.

Training also writes ``NAME.state`` (optimizer state and counters, for
``--resume``; see ``train.checkpoint``); playing never reads it.

Nothing in a checkpoint is trusted: the metadata is read only from a regular
file of at most ``MAX_JSON_BYTES``, as JSON nested at most ``MAX_JSON_DEPTH`` deep; the
network it names is built only from
allow-listed classes and settings within ``MAX_LAYER_WIDTH`` /
``MAX_DEPTH`` / ``MAX_WEIGHTS``; the weights must have exactly the shapes of
that network and be finite.  Each refusal is one ``CheckpointError`` line
naming the file and the field.

Files are written atomically (:func:`write_atomic`: a temporary file in the same
folder, fsync, rename), so a crash leaves the old file or the new one, and a
symbolic link at the destination is replaced, never written through.
"""

from __future__ import annotations

import hashlib
import io
import json
import os
import warnings
from pathlib import Path
from typing import Any

import numpy as np
import torch
from gymnasium import spaces
from sb3_contrib.common.maskable.policies import MaskableActorCriticPolicy

from agents.base import BatchedAgent
from core import spec as registered
from core.files import FileRefused, parse_json, read_regular
from core.files import commit, write_atomic, write_temporary  # noqa: F401 (used by train.checkpoint)
from core.files import fsync_dir as _fsync_dir  # noqa: F401

FORMAT = "dice-arena-policy"
FORMAT_VERSION = 1
ACTIVATIONS = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU}
POLICY_KEYS = ("class", "net_arch", "activation", "features_extractor", "features_extractor_kwargs")
MAX_JSON_BYTES = 1 << 20  # a checkpoint's metadata: far more than any run writes
MAX_JSON_DEPTH = 32  # and how deeply its JSON may nest (a run's is 4 deep)
MAX_LAYER_WIDTH = 4096  # units in one hidden layer, or features_dim
MAX_DEPTH = 8  # hidden layers in the policy or the value network
MAX_WEIGHTS = 1 << 24  # weights in the hidden layers, all together (64 MB of float32)


class CheckpointError(ValueError):
    """A checkpoint that is missing, corrupt, or not a dice-arena policy for this game."""


def game_spaces(game: str, env: dict[str, Any] | None = None) -> tuple[spaces.Space, spaces.Space]:
    """The observation and action spaces of a registered game's env (``env``: its options, e.g.
    the pot)."""
    try:
        spec = registered.get(game)
        options = dict(env or {})
        n_players = int(options.pop("n_players", 2))
        return spec.observation_space(n_players, **options), spec.action_space()
    except (ValueError, TypeError, OverflowError) as e:
        raise CheckpointError(f"no trained-policy support for game {game!r} with {env}: {e}") from None


# --- reading and writing files safely -------------------------------------------------


def read_regular_file(path: Path, limit: int, what: str = "file") -> bytes:
    """The bytes of ``path`` if it is a regular file of at most ``limit`` bytes
    (:func:`core.files.read_regular`), else a :class:`CheckpointError` line."""
    try:
        return read_regular(path, limit, what)
    except FileRefused as e:
        raise CheckpointError(str(e)) from None


def sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def tensor_bytes(obj: Any) -> bytes:
    """``torch.save`` of ``obj`` (tensors and plain Python values only), as bytes."""
    buffer = io.BytesIO()
    torch.save(obj, buffer)
    return buffer.getvalue()


def json_bytes(obj: Any) -> bytes:
    return (json.dumps(obj, indent=2, allow_nan=False) + "\n").encode()


# --- the network a checkpoint describes -------------------------------------------------


def _where(where: str, field: str) -> str:
    return f"{where}: {field}"


def _bounded_int(value: Any, where: str, field: str, low: int, high: int) -> int:
    if isinstance(value, bool) or not isinstance(value, int) or not low <= value <= high:
        raise CheckpointError(f"{_where(where, field)} is {value!r}; it must be a whole number from {low} to {high}")
    return value


def _layers(value: Any, where: str, field: str) -> list[int]:
    if not isinstance(value, list):
        raise CheckpointError(f"{_where(where, field)} is {value!r}; it must be a list of layer widths")
    if len(value) > MAX_DEPTH:
        raise CheckpointError(f"{_where(where, field)} has {len(value)} layers; at most {MAX_DEPTH} are allowed")
    return [_bounded_int(w, where, f"{field}[{i}]", 1, MAX_LAYER_WIDTH) for i, w in enumerate(value)]


def feature_extractors() -> dict[str, type]:
    """The feature extractors a checkpoint may name: the generic ones and those each game
    declares (``GameSpec.features``); each says what its checkpoint may set (``SETTINGS``)."""
    from agents.features import FEATURE_EXTRACTORS

    found = dict(FEATURE_EXTRACTORS)
    for name in registered.names():
        found.update({key: registered.load(target) for key, target in registered.get(name).features.items()})
    return found


def check_policy_spec(spec: Any, where: str = "checkpoint metadata") -> dict[str, Any]:
    """``spec`` (the JSON ``policy`` entry) if it names only known settings within bounds."""
    from agents.features import POLICY_CLASSES

    FEATURE_EXTRACTORS = feature_extractors()

    if not isinstance(spec, dict):
        raise CheckpointError(f"{_where(where, 'policy')} is {type(spec).__name__}, not an object")
    unknown = [k for k in spec if k not in POLICY_KEYS]
    if unknown:
        raise CheckpointError(
            f"{_where(where, 'policy.' + str(unknown[0]))} is not a policy setting (known: {', '.join(POLICY_KEYS)})"
        )
    name = spec.get("class", "MlpPolicy")
    if not isinstance(name, str) or name not in POLICY_CLASSES:
        raise CheckpointError(
            f"unknown policy class {name!r} in {_where(where, 'policy.class')} (known: {', '.join(POLICY_CLASSES)})"
        )
    activation = spec.get("activation", "tanh")
    if not isinstance(activation, str) or activation not in ACTIVATIONS:
        raise CheckpointError(
            f"{_where(where, 'policy.activation')} is {activation!r} (known: {', '.join(ACTIVATIONS)})"
        )
    chains: list[list[int]] = []
    if "net_arch" in spec:
        arch = spec["net_arch"]
        if isinstance(arch, dict):
            extra = [k for k in arch if k not in ("pi", "vf")]
            if extra:
                raise CheckpointError(
                    f"{_where(where, 'policy.net_arch.' + str(extra[0]))} is not a network part (known: pi, vf)"
                )
            chains = [_layers(arch[k], where, f"policy.net_arch.{k}") for k in ("pi", "vf") if k in arch]
        else:
            chains = [_layers(arch, where, "policy.net_arch")] * 2
    features_dim = 0
    extractor = spec.get("features_extractor")
    if extractor is not None:
        if not isinstance(extractor, str) or extractor not in FEATURE_EXTRACTORS:
            # a game's own extractors are known once the registry (games) is imported
            unregistered = "" if registered.names() else f"; {registered.NONE_REGISTERED}"
            raise CheckpointError(
                f"{_where(where, 'policy.features_extractor')} is {extractor!r} (known: "
                f"{', '.join(FEATURE_EXTRACTORS)}){unregistered}"
            )
        kwargs = spec.get("features_extractor_kwargs", {})
        if not isinstance(kwargs, dict):
            raise CheckpointError(f"{_where(where, 'policy.features_extractor_kwargs')} is {kwargs!r}, not an object")
        for key, value in kwargs.items():
            settings = FEATURE_EXTRACTORS[extractor].SETTINGS
            if key not in settings:
                raise CheckpointError(
                    f"{_where(where, 'policy.features_extractor_kwargs.' + key)} is not a setting of {extractor} "
                    f"(known: {', '.join(settings) or 'none'})"
                )
            features_dim = _bounded_int(value, where, f"policy.features_extractor_kwargs.{key}", 1, MAX_LAYER_WIDTH)
    elif "features_extractor_kwargs" in spec:
        raise CheckpointError(
            f"{_where(where, 'policy.features_extractor_kwargs')} is given without a features_extractor"
        )
    weights = sum(a * b for chain in chains for a, b in zip([features_dim, *chain], chain))
    if weights > MAX_WEIGHTS:
        raise CheckpointError(
            f"{_where(where, 'policy.net_arch')} has {weights:,} hidden-layer weights; at most {MAX_WEIGHTS:,} are "
            "allowed"
        )
    return spec


def policy_class_from(spec: dict[str, Any], where: str = "checkpoint metadata") -> type[MaskableActorCriticPolicy]:
    from agents.features import POLICY_CLASSES

    return POLICY_CLASSES[check_policy_spec(spec, where).get("class", "MlpPolicy")]


def policy_kwargs_from(spec: dict[str, Any], where: str = "checkpoint metadata") -> dict[str, Any]:
    """SB3 policy keyword arguments from the JSON ``policy`` spec (allow-listed names and bounded sizes only)."""
    spec = check_policy_spec(spec, where)
    kwargs: dict[str, Any] = {"activation_fn": ACTIVATIONS[spec.get("activation", "tanh")]}
    if "net_arch" in spec:
        arch = spec["net_arch"]
        kwargs["net_arch"] = {k: list(v) for k, v in arch.items()} if isinstance(arch, dict) else list(arch)
    if spec.get("features_extractor"):
        kwargs["features_extractor_class"] = feature_extractors()[spec["features_extractor"]]
        kwargs["features_extractor_kwargs"] = dict(spec.get("features_extractor_kwargs", {}))
    return kwargs


def build_policy(
    game: str, spec: dict[str, Any], env: dict[str, Any] | None = None, where: str = "checkpoint metadata"
) -> MaskableActorCriticPolicy:
    obs_space, act_space = game_spaces(game, env)
    policy_class, kwargs = policy_class_from(spec, where), policy_kwargs_from(spec, where)
    try:
        return policy_class(obs_space, act_space, lambda _: 0.0, **kwargs)
    except ValueError as e:  # a setting the network refuses, e.g. a part made for the other game
        raise CheckpointError(f"{_where(where, 'policy')}: {e}") from None


# --- weights ----------------------------------------------------------------------------


def policy_state(policy: MaskableActorCriticPolicy) -> dict[str, torch.Tensor]:
    return {k: v.detach().cpu() for k, v in policy.state_dict().items()}


def weights_limit(policy: torch.nn.Module) -> int:
    """The most bytes a weights file of ``policy`` may take: its tensors twice over, plus 1 MB."""
    return 2 * sum(v.numel() * v.element_size() for v in policy.state_dict().values()) + (1 << 20)


def check_weights(state: Any, policy: torch.nn.Module, path: Path | str) -> dict[str, torch.Tensor]:
    """``state`` if it is a tensor dict with exactly ``policy``'s names and shapes, all finite."""
    expected = policy.state_dict()
    if not isinstance(state, dict):
        raise CheckpointError(f"{path}: the weights are a {type(state).__name__}, not a dict of tensors")
    missing = [k for k in expected if k not in state]
    unknown = [k for k in state if k not in expected]
    if missing or unknown:
        field, why = (
            (missing[0], "is missing") if missing else (unknown[0], "is not part of the network in the metadata")
        )
        raise CheckpointError(f"{path}: tensor {field!r} {why}")
    for key, want in expected.items():
        got = state[key]
        if isinstance(got, torch.Tensor) and got.layout != torch.strided:
            raise CheckpointError(f"{path}: tensor {key!r} is {got.layout}, not a dense tensor")
        if not isinstance(got, torch.Tensor) or not got.is_floating_point():
            raise CheckpointError(
                f"{path}: {key!r} is {type(got).__name__ if not isinstance(got, torch.Tensor) else got.dtype}, not a "
                "float tensor"
            )
        if tuple(got.shape) != tuple(want.shape):
            raise CheckpointError(
                f"{path}: tensor {key!r} has shape {tuple(got.shape)}; the network in the metadata needs "
                f"{tuple(want.shape)}"
            )
        if not bool(torch.isfinite(got).all()):
            raise CheckpointError(f"{path}: tensor {key!r} holds NaN or infinite values")
    return state


def load_tensors(data: bytes, what: str) -> Any:
    """``torch.load`` of tensors and plain values only (``weights_only``: no code runs),
    every failure as one ``CheckpointError`` line: "cannot read WHAT: ..."."""
    try:
        with warnings.catch_warnings():  # torch warns about a foreign pickle protocol before it refuses
            warnings.simplefilter("ignore")
            return torch.load(io.BytesIO(data), map_location="cpu", weights_only=True)
    except Exception as e:  # torch raises many kinds for a bad file
        raise CheckpointError(f"cannot read {what}: {type(e).__name__}: {str(e)[:200]}") from None


def pending_path(path: Path) -> Path:
    """Where a save puts the new ``path`` (``.NAME.pending.EXT``) until its metadata is
    committed; see ``train.checkpoint.save``."""
    path = Path(path)
    return path.with_name(f".{path.stem}.pending{path.suffix}")


def read_committed(path: Path, limit: int, what: str, expected_sha256: str | None) -> bytes:
    """The bytes of ``path``, or of its pending file when a save was cut off after its
    metadata was committed but before the file was renamed into place (then the
    metadata describes the pending file, not ``path``)."""
    pending = pending_path(path)
    try:
        data = read_regular_file(path, limit, what)
    except CheckpointError:
        if expected_sha256 is None or not os.path.lexists(pending):
            raise
        data = b""  # the first save of a run, cut off before its files were renamed
    if expected_sha256 is None or sha256(data) == expected_sha256 or not os.path.lexists(pending):
        return data
    newer = read_regular_file(pending, limit, what)
    return newer if sha256(newer) == expected_sha256 else data


def read_weights(
    path: Path, policy: torch.nn.Module, expected_sha256: str | None = None, meta_path: Path | None = None
) -> dict[str, torch.Tensor]:
    """The checked weights in ``path`` for ``policy`` (not yet loaded into it)."""
    data = read_committed(path, weights_limit(policy), "weights file", expected_sha256)
    if expected_sha256 is not None and sha256(data) != expected_sha256:
        raise CheckpointError(
            f"cannot read the weights in {path}: they are not the ones {meta_path or 'the metadata'} "
            "describes (weights_sha256 differs: the files come from different saves, or were changed)"
        )
    return check_weights(load_tensors(data, f"the weights in {path}"), policy, path)


def save_policy(policy: MaskableActorCriticPolicy, path: Path, metadata: dict[str, Any]) -> None:
    """Write ``path`` (.pt weights) and its ``.json`` metadata (with the weights' SHA-256),
    each atomically, the metadata last."""
    path = Path(path)
    if path.suffix != ".pt":
        path = path.with_name(path.name + ".pt")
    path.parent.mkdir(parents=True, exist_ok=True)
    weights = tensor_bytes(policy_state(policy))
    meta = {"format": FORMAT, "format_version": FORMAT_VERSION, **metadata, "weights_sha256": sha256(weights)}
    write_atomic(path, weights)
    write_atomic(path.with_suffix(".json"), json_bytes(meta))


# --- metadata ---------------------------------------------------------------------------


def load_metadata(path: Path) -> dict[str, Any]:
    meta_path = Path(path).with_suffix(".json")
    if not os.path.lexists(meta_path):
        raise CheckpointError(f"{meta_path} is missing: a checkpoint needs its metadata file next to the weights")
    data = read_regular_file(meta_path, MAX_JSON_BYTES, "checkpoint metadata file")
    try:
        meta = parse_json(data, str(meta_path), MAX_JSON_DEPTH)
    except FileRefused as e:
        raise CheckpointError(f"{e}; the checkpoint is corrupt") from None
    if not isinstance(meta, dict) or meta.get("format") != FORMAT:
        raise CheckpointError(
            f"{meta_path} is not a dice-arena policy checkpoint (format "
            f"{meta.get('format') if isinstance(meta, dict) else None!r})"
        )
    if meta.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{meta_path} has format version {meta.get('format_version')!r}, this program reads {FORMAT_VERSION}"
        )
    if not isinstance(meta.get("game"), str):
        raise CheckpointError(f"{meta_path}: game is {meta.get('game')!r}, not a game name")
    try:  # before its policy, whose parts a game may name
        registered.get(meta["game"])
    except ValueError:
        known = ", ".join(registered.names()) or registered.NONE_REGISTERED
        raise CheckpointError(
            f"{meta_path}: game {meta['game'][:80]!r} is not a game this program has (known: {known})"
        ) from None
    if "env" in meta and not isinstance(meta["env"], dict):
        raise CheckpointError(f"{meta_path}: env is {meta['env']!r}, not an object of game options")
    digest = meta.get("weights_sha256")
    if digest is not None and not (
        isinstance(digest, str) and len(digest) == 64 and all(c in "0123456789abcdef" for c in digest)
    ):
        raise CheckpointError(f"{meta_path}: weights_sha256 is {str(digest)[:80]!r}, not a SHA-256 in hex")
    check_policy_spec(meta.get("policy", {}), str(meta_path))
    return meta


def checkpoint_weights_path(path: str | Path) -> Path:
    """The ``.pt`` file a checkpoint path names (``NAME``, ``NAME.pt`` or ``NAME.json``)."""
    path = Path(path)
    if path.suffix in (".json", ".zip", ".state"):
        return path.with_suffix(".pt")
    if path.suffix != ".pt":
        return path.with_name(path.name + ".pt")
    return path


# Rows per forward pass of a large batch: the layers' outputs stay in the CPU's cache, which
# makes a 256 x 256 network about twice as fast here as one pass over 500k rows.
EVAL_CHUNK = 4096


class PPOAgent(BatchedAgent):
    """A trained MaskablePPO policy, played deterministically (the most likely legal action)."""

    def __init__(self, policy: MaskableActorCriticPolicy, game: str, name: str = "ppo", metadata: dict | None = None):
        self.policy = policy.eval()
        self.game = game
        self.name = name
        self.metadata = metadata or {}

    @classmethod
    def load(cls, path: str | Path, expected_game: str | None = None) -> PPOAgent:
        path = checkpoint_weights_path(path)
        if not os.path.lexists(path) and not os.path.lexists(pending_path(path)):
            raise CheckpointError(f"no checkpoint at {path}")
        meta = load_metadata(path)
        meta_path = path.with_suffix(".json")
        game = meta["game"]
        if expected_game is not None and game != str(expected_game):
            raise CheckpointError(f"{path} is a checkpoint for game {game}, not {expected_game}")
        policy = build_policy(game, meta.get("policy", {}), meta.get("env"), where=str(meta_path))
        policy.load_state_dict(read_weights(path, policy, meta.get("weights_sha256"), meta_path))
        return cls(policy, game, name=str(meta.get("name", path.stem)), metadata=meta)

    @classmethod
    def from_model(cls, model, game: str, name: str = "ppo") -> PPOAgent:
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

    def actions(self, obs: np.ndarray, masks: np.ndarray) -> np.ndarray:
        """The most likely legal action at each row of a batch, ``EVAL_CHUNK`` rows per
        forward pass (exact evaluation asks millions at once)."""
        out = np.zeros(len(masks), dtype=np.int64)
        for i in range(0, len(masks), EVAL_CHUNK):
            rows = slice(i, i + EVAL_CHUNK)
            out[rows] = np.where(masks[rows], self.logits(obs[rows]), -np.inf).argmax(axis=1)
        return out

    def act(self, obs: np.ndarray, action_mask: np.ndarray) -> int:
        return int(np.argmax(np.where(action_mask, self.logits(np.asarray(obs)[None])[0], -np.inf)))
