"""agents.activations: ``fast_tanh`` is tanh to within 1.8e-7 at every input, with tanh's
own gradient of its output, and a checkpoint may name it."""

import pytest
import torch

from agents.activations import ACTIVATIONS, FastTanh

BOUND = 1.8e-7  # |fast_tanh(x) - tanh(x)|, all float32 x (agents/activations.py)


def _grid() -> torch.Tensor:
    """Every kind of input: a dense sweep of [-20, 20], tiny and huge magnitudes, both signs."""
    dense = torch.linspace(-20, 20, 400_001)
    powers = torch.logspace(-40, 38, 2_000, base=10.0)
    return torch.cat([dense, powers, -powers, torch.tensor([0.0, -0.0])])


def test_fast_tanh_is_torchs_tanh_to_within_its_bound_everywhere():
    x = _grid()
    y = FastTanh()(x)
    assert y.dtype == torch.float32 and y.shape == x.shape
    assert float((y - torch.tanh(x)).abs().max()) <= BOUND
    assert float(y.abs().max()) <= 1.0  # never outside tanh's range
    assert torch.equal(FastTanh()(torch.tensor([float("inf"), -float("inf")])), torch.tensor([1.0, -1.0]))
    assert torch.isnan(FastTanh()(torch.tensor([float("nan")]))).all()


def test_fast_tanh_has_tanh_gradient_of_its_output():
    x = _grid().requires_grad_(True)
    y = FastTanh()(x)
    upstream = torch.rand(x.shape, generator=torch.Generator().manual_seed(0))
    y.backward(upstream)
    assert torch.allclose(x.grad, upstream * (1 - y.detach() ** 2), rtol=0, atol=1e-7)
    t = x.detach().clone().requires_grad_(True)
    torch.tanh(t).backward(upstream)
    assert float((x.grad - t.grad).abs().max()) <= 4 * BOUND  # tanh's gradient, to the same bound


def test_fast_tanh_passes_gradcheck_in_double_precision():
    x = torch.linspace(-4, 4, 41, dtype=torch.float64).requires_grad_(True)
    assert torch.autograd.gradcheck(FastTanh(), (x,))
    assert torch.allclose(FastTanh()(x), torch.tanh(x), rtol=0, atol=1e-15)


@pytest.mark.parametrize("name", sorted(ACTIVATIONS))
def test_every_activation_a_checkpoint_may_name_is_a_layer_without_weights(name):
    layer = ACTIVATIONS[name]()
    assert isinstance(layer, torch.nn.Module) and not list(layer.parameters())
    x = torch.linspace(-3, 3, 13)
    assert layer(x).shape == x.shape
