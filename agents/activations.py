"""The hidden layers' activations a policy may name (``policy.activation``).

``tanh`` is torch's own.  ``fast_tanh`` is the same function computed as
``2 * sigmoid(2x) - 1``: on an AVX2 CPU torch's sigmoid kernel is several times faster
than its tanh kernel, and in a network of 256-wide tanh layers the tanh calls take about
a tenth of a training run (``python -m train.bench --only activation`` sets the two
against each other).  Its values are within 1.8e-7 of torch's tanh at every input (an
absolute bound: near 0, where tanh(x) is about x, it is not a relative one); its
gradient is tanh's own, ``1 - y**2`` of the output.  A network trained with one plays
the same with the other only to that precision, so the name is part of the checkpoint,
like the layer sizes.
"""

from __future__ import annotations

import torch


class _FastTanhFunction(torch.autograd.Function):
    @staticmethod
    def forward(ctx, x: torch.Tensor) -> torch.Tensor:
        y = torch.sigmoid(x * 2).mul_(2).sub_(1)
        ctx.save_for_backward(y)
        return y

    @staticmethod
    def backward(ctx, grad: torch.Tensor) -> torch.Tensor:
        (y,) = ctx.saved_tensors
        return torch.ops.aten.tanh_backward(grad, y)  # grad * (1 - y**2), tanh's own kernel


class FastTanh(torch.nn.Module):
    """tanh as ``2 * sigmoid(2x) - 1`` (the module docstring says why and how close)."""

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        return _FastTanhFunction.apply(x)


# name in a checkpoint's ``policy.activation`` -> the layer
ACTIVATIONS: dict[str, type[torch.nn.Module]] = {"tanh": torch.nn.Tanh, "relu": torch.nn.ReLU, "fast_tanh": FastTanh}
