"""zero.cuda.make_graphed_callables: a graphed module or function trains as the eager one does.

On a machine without a GPU "cuda" is played by the CPU backend (``second_device``) and the
graphs are tapes of kernel calls; with ZERO_TEST_DEVICE=cuda on a GPU they are CUDA graphs.
The graphed callables run the same kernels on the same values as eager ones, so N training
steps through them must equal N eager steps bit for bit. PyTorch's own make_graphed_callables
needs a GPU, so it cannot be the oracle here: eager Zero is, and PyTorch's eager autograd for
the values of a graphed function, and PyTorch's rules (in its docs) for the errors.
"""
from __future__ import annotations

import numpy as np
import pytest

import zero
from zero.errors import AutogradError
from zero.models.gpt import GPT, GPTConfig
from zero.nn import functional as F

from graph_batches import CLASSES, FEATURES, ROWS, make_batches

HIDDEN = 16
STEPS = 4


def _mlp(device, seed: int = 0):
    zero.manual_seed(seed)
    return zero.nn.Sequential(zero.nn.Linear(FEATURES, HIDDEN), zero.nn.GELU(), zero.nn.LayerNorm(HIDDEN),
                              zero.nn.Linear(HIDDEN, CLASSES)).to(device)


def _train(model, device, batches, forward=None):
    """SGD steps (the loss and the optimizer eager); the losses and the parameters after."""
    forward = forward or model
    optimizer = zero.optim.SGD(model.parameters(), lr=0.1, momentum=0.9)
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = F.cross_entropy(forward(zero.tensor(x, device=device)), zero.tensor(y, device=device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def _assert_same_training(got, expected):
    assert got[0] == expected[0]
    for a, b in zip(got[1], expected[1]):
        np.testing.assert_array_equal(a, b)


def test_a_graphed_module_trains_as_the_eager_one_bit_for_bit(cuda):
    batches = make_batches(STEPS)
    expected = _train(_mlp(cuda), cuda, batches)
    model = _mlp(cuda)
    graphed = zero.cuda.make_graphed_callables(model, (zero.randn(ROWS, FEATURES, device=cuda),))
    assert graphed is model   # a module keeps its identity; its forward is replaced
    before = [p.detach().cpu().numpy().copy() for p in model.parameters()]
    assert all(p.grad is None for p in model.parameters()), "warm-up and capture touch no .grad"
    _assert_same_training(_train(model, cuda, []), ([], before))
    got = _train(model, cuda, batches)
    _assert_same_training(got, expected)
    out = model(zero.tensor(batches[0][0], device=cuda))
    assert out.grad_fn.name == "GraphedOutputBackward"


def _train_gpt(device, batches, graph: bool, dropout: float = 0.0):
    """AdamW steps of a small GPT whose whole loss, from ids and targets, is one graphed module."""
    zero.manual_seed(0)
    model = GPT(GPTConfig(vocab_size=11, block_size=6, n_layer=2, n_head=2, n_embd=8, dropout=dropout)).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=1e-2)
    if graph:
        ids = zero.zeros(3, 6, dtype=zero.long, device=device)
        zero.cuda.make_graphed_callables(model, (ids, ids.clone()))
    zero.manual_seed(1)   # warm-up drew dropout's seeds: both runs start the steps from one state
    losses = []
    for x, y in batches:
        optimizer.zero_grad()
        loss = model(zero.tensor(x, device=device), zero.tensor(y, device=device))
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    return losses, [p.detach().cpu().numpy() for p in model.parameters()]


def _tokenbatches(count: int):
    rng = np.random.default_rng(4)
    return [(rng.integers(0, 11, (3, 6)), rng.integers(0, 11, (3, 6))) for _ in range(count)]


def test_a_graphed_gpt_loss_trains_as_the_eager_one_bit_for_bit(cuda):
    """Integer inputs, a tied weight (the embedding's gradient summed inside the backward
    graph), fused attention, FFN and linear+cross-entropy."""
    batches = _tokenbatches(STEPS)
    _assert_same_training(_train_gpt(cuda, batches, graph=True), _train_gpt(cuda, batches, graph=False))


def test_dropout_in_a_graphed_module_draws_a_new_mask_per_call(cuda):
    batches = _tokenbatches(STEPS)
    _assert_same_training(_train_gpt(cuda, batches, graph=True, dropout=0.3),
                          _train_gpt(cuda, batches, graph=False, dropout=0.3))


def test_autocast_without_its_cache_is_captured_as_eager_runs_it(cuda):
    """PyTorch's rule: autocast only with cache_enabled=False; the graphs hold its bfloat16 kernels."""
    batches = make_batches(3, seed=5)
    results = []
    for graph in (False, True):
        model = _mlp(cuda)
        with zero.autocast("cuda", dtype=zero.bfloat16, cache_enabled=False):
            if graph:
                zero.cuda.make_graphed_callables(model, (zero.zeros(ROWS, FEATURES, device=cuda),))
                assert model(zero.zeros(ROWS, FEATURES, device=cuda)).dtype is zero.bfloat16
            results.append(_train(model, cuda, batches))
    _assert_same_training(results[1], results[0])


def test_gradients_accumulate_into_grad_as_in_eager(cuda):
    """Two backward passes without zeroing: .grad is the sum, never the graph's own memory."""
    x1, x2 = (zero.tensor(x, device=cuda) for x, _ in make_batches(2, seed=3))
    eager, model = _mlp(cuda), _mlp(cuda)
    graphed = zero.cuda.make_graphed_callables(model, (zero.zeros(ROWS, FEATURES, device=cuda),))
    for net in (eager, graphed):
        (net(x1) ** 2).sum().backward()
        (net(x2) * 3).sum().backward()
    for p, q in zip(model.parameters(), eager.parameters()):
        np.testing.assert_array_equal(p.grad.cpu().numpy(), q.grad.cpu().numpy())
    weight = model[0].weight
    before = weight.grad.cpu().numpy().copy()
    (graphed(x1) * 0).sum().backward()   # a replay writes the graph's gradients; .grad is apart from them
    np.testing.assert_array_equal(weight.grad.cpu().numpy(), before)


def _two_outputs(a, b):
    h = (a * b).tanh()
    return h.sum(dim=1), a.exp() * 0.5 + h


def test_a_graphed_function_of_two_inputs_gives_eager_values_and_gradients(cuda):
    torch = pytest.importorskip("torch")
    rng = np.random.default_rng(1)
    samples = [rng.standard_normal((3, 4)).astype(np.float32) for _ in range(4)]
    sample_a = zero.zeros(3, 4, device=cuda, requires_grad=True)
    sample_b = zero.zeros(3, 4, device=cuda)
    graphed = zero.cuda.make_graphed_callables(_two_outputs, (sample_a, sample_b))
    assert not isinstance(graphed, zero.nn.Module) and callable(graphed)
    for uses_second in (True, False):   # an output no gradient reaches: its gradient is zero
        a_np, b_np = samples[:2] if uses_second else samples[2:]
        results = {}
        for name, function in (("graphed", graphed), ("eager", _two_outputs)):
            a = zero.tensor(a_np, device=cuda, requires_grad=True)
            b = zero.tensor(b_np, device=cuda)
            first, second = function(a, b)
            loss = (first * first).sum() + ((second * 2).sum() if uses_second else 0)
            loss.backward()
            assert b.grad is None
            results[name] = (first.detach().cpu().numpy(), second.detach().cpu().numpy(), a.grad.cpu().numpy())
        for got, expected in zip(results["graphed"], results["eager"]):
            np.testing.assert_array_equal(got, expected)
        ta, tb = torch.tensor(a_np, requires_grad=True), torch.tensor(b_np)
        t_first, t_second = _two_outputs(ta, tb)
        ((t_first * t_first).sum() + ((t_second * 2).sum() if uses_second else 0)).backward()
        for got, expected in zip(results["graphed"], (t_first, t_second, ta.grad)):
            np.testing.assert_allclose(got, expected.detach().numpy(), rtol=1e-5, atol=1e-6)


def test_outputs_are_the_graph_s_memory_overwritten_by_the_next_call(cuda):
    """As PyTorch's: a call returns the static outputs (detached), which the next call rewrites;
    a call passing the sample tensor itself needs no copy."""
    sample = zero.ones(2, 3, device=cuda, requires_grad=True)
    graphed = zero.cuda.make_graphed_callables(lambda x: x * 2, (sample,))
    first = graphed(sample)
    assert first.tolist() == [[2.0] * 3] * 2
    second = graphed(zero.full((2, 3), 5.0, device=cuda))
    assert first.data_ptr() == second.data_ptr()
    assert first.tolist() == [[10.0] * 3] * 2
    sample.data.fill_(-1.0)
    assert graphed(sample).tolist() == [[-2.0] * 3] * 2


def test_a_backward_after_a_later_call_is_refused(cuda):
    """The graph holds one call's activations: the backward of an earlier call would be wrong
    (PyTorch's gives wrong gradients silently); the latest call's backward is right."""
    graphed = zero.cuda.make_graphed_callables(lambda x: (x * x).sum(),
                                               (zero.zeros(3, device=cuda, requires_grad=True),))
    a, b = zero.ones(3, device=cuda, requires_grad=True), zero.full((3,), 2.0, device=cuda, requires_grad=True)
    first = graphed(a) * 1
    second = graphed(b) * 1
    for stale in (first, first + second):
        with pytest.raises(AutogradError, match="<lambda>: called again before the backward of an earlier call"):
            stale.backward(retain_graph=True)
    b.grad = None   # (the pass through first + second may have reached b before it was refused)
    second.backward()
    assert b.grad.tolist() == [4.0] * 3 and a.grad is None


def test_the_gradient_of_a_computed_input_flows_on_upstream(cuda):
    """An argument made by another op: the graphed call's gradient reaches its leaves."""
    w = zero.tensor(np.arange(6, dtype=np.float32).reshape(2, 3), device=cuda, requires_grad=True)
    graphed = zero.cuda.make_graphed_callables(lambda x: (x * x).sum(dim=0),
                                               (zero.zeros(2, 3, device=cuda, requires_grad=True),))
    (graphed(w * 3) * zero.tensor([1.0, 2.0, 3.0], device=cuda)).sum().backward()
    expected = 18 * np.arange(6, dtype=np.float32).reshape(2, 3) * np.array([1.0, 2.0, 3.0], np.float32)
    np.testing.assert_array_equal(w.grad.cpu().numpy(), expected)


def _two_blocks(device, seed=0):
    zero.manual_seed(seed)
    first = zero.nn.Sequential(zero.nn.Linear(FEATURES, HIDDEN), zero.nn.ReLU()).to(device)
    second = zero.nn.Sequential(zero.nn.LayerNorm(HIDDEN), zero.nn.Linear(HIDDEN, CLASSES)).to(device)
    return first, second


def test_a_tuple_of_modules_shares_one_pool_and_chains(cuda):
    batches = make_batches(STEPS, seed=2)
    expected = _train(zero.nn.Sequential(*_two_blocks(cuda)), cuda, batches)
    first, second = _two_blocks(cuda)
    pool = zero.cuda.graph_pool_handle()
    graphed = zero.cuda.make_graphed_callables(
        (first, second), ((zero.zeros(ROWS, FEATURES, device=cuda),),
                          (zero.zeros(ROWS, HIDDEN, device=cuda, requires_grad=True),)), pool=pool)
    assert isinstance(graphed, tuple) and graphed[0] is first and graphed[1] is second
    assert pool.graphs == 4 and pool.reserved_bytes() > 0   # two forwards, two backwards, one pool
    model = zero.nn.Sequential(first, second)
    _assert_same_training(_train(model, cuda, batches), expected)


def test_eval_mode_runs_the_original_forward(cuda):
    model = _mlp(cuda)
    eager = _mlp(cuda)
    zero.cuda.make_graphed_callables(model, (zero.zeros(ROWS, FEATURES, device=cuda),))
    x = zero.tensor(make_batches(1)[0][0], device=cuda)
    model.eval()
    out = model(x)
    assert out.grad_fn.name != "GraphedOutputBackward"
    np.testing.assert_array_equal(out.detach().cpu().numpy(), eager(x).detach().cpu().numpy())
    model.train()
    assert model(x).grad_fn.name == "GraphedOutputBackward"
    with zero.no_grad():   # no gradient needed: the forward graph alone, no node
        out = model(x)
    assert out.grad_fn is None and not out.requires_grad
    np.testing.assert_array_equal(out.cpu().numpy(), eager(x).detach().cpu().numpy())


def test_unused_inputs_are_refused_unless_allowed(cuda):
    def first_only(a, b):
        return a * 2

    a = zero.zeros(3, device=cuda, requires_grad=True)
    b = zero.zeros(3, device=cuda, requires_grad=True)
    with pytest.raises(AutogradError, match="input 1 .*allow_unused_input=True"):
        zero.cuda.make_graphed_callables(first_only, (a, b))
    graphed = zero.cuda.make_graphed_callables(first_only, (a, b), allow_unused_input=True)
    x, y = zero.ones(3, device=cuda, requires_grad=True), zero.ones(3, device=cuda, requires_grad=True)
    graphed(x, y).sum().backward()
    assert x.grad.tolist() == [2.0] * 3 and y.grad is None


def test_misuse_gets_pytorch_s_errors(cuda):
    x = zero.zeros(ROWS, FEATURES, device=cuda)
    make = zero.cuda.make_graphed_callables
    for other in (3, None):   # (PyTorch's pytree counts None as a leaf, not a tensor, too)
        with pytest.raises(AssertionError, match="sample_args may hold tensors only"):
            make(lambda a, n: a * 2, (x, other))
    hooked = _mlp(cuda)
    hooked.register_forward_hook(lambda module, args, output: None)
    with pytest.raises(AssertionError, match="has hooks registered"):
        make(hooked, (x,))
    with_buffer = zero.nn.Linear(FEATURES, 2).to(cuda)
    with_buffer.register_buffer("scale", zero.ones(2, device=cuda, requires_grad=True))
    with pytest.raises(AssertionError, match="a buffer of .* requires grad"):
        make(with_buffer, (x,))
    with zero.autocast("cuda", dtype=zero.bfloat16):
        with pytest.raises(RuntimeError, match="autocast with its weight cache on"):
            make(_mlp(cuda), (x,))
    with pytest.raises(ValueError, match="must be CUDA tensors"):
        make(lambda a: a * 2, (zero.zeros(3),))
    with pytest.raises(TypeError, match="tuple of 2 tuples"):
        make((_mlp(cuda), _mlp(cuda)), ((x,),))
    graphed = make(lambda a: a * 2, (zero.zeros(3, device=cuda),))
    with pytest.raises(ValueError, match=r"captured for float32\[3\]"):
        graphed(zero.zeros(4, device=cuda))
    with pytest.raises(TypeError, match="called with 2 arguments"):
        graphed(zero.zeros(3, device=cuda), zero.zeros(3, device=cuda))
    with pytest.raises(TypeError, match="keyword arguments"):
        graphed(a=zero.zeros(3, device=cuda))
