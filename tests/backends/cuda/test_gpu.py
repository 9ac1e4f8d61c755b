"""Tests that need a GPU: ops on cuda against the same ops on the CPU, memory statistics,
TF32, and a GPT step on both devices. Skipped unless ZERO_TEST_DEVICE=cuda (see conftest;
scripts/gpu-check.sh runs them)."""
from __future__ import annotations

import gc
import os
import subprocess
import sys

import numpy as np
import pytest
from conftest import needs_gpu  # (tests/backends/cuda/conftest.py)

import zero
import zero.cuda
from zero.errors import DeviceError
from zero.nn import functional as F

pytestmark = [needs_gpu, pytest.mark.usefixtures("arrays")]  # `arrays` sets the backend up (or fails)


def _tensors(values, device, dtype):
    return [zero.tensor(v, dtype=dtype if v.dtype.kind == "f" else None, device=device,
                        requires_grad=v.dtype.kind == "f") for v in values]


def parity(fn, *values, dtype=zero.float32, rtol=2e-4, atol=2e-5, backward=True):
    """fn on CPU tensors and on CUDA tensors made from the same NumPy values: equal outputs and,
    after backward with the same cotangent, equal gradients of every float input."""
    rng = np.random.default_rng(0)
    cpu_in, gpu_in = _tensors(values, "cpu", dtype), _tensors(values, "cuda", dtype)
    cpu_out, gpu_out = fn(*cpu_in), fn(*gpu_in)
    assert gpu_out.device == zero.Device("cuda") and gpu_out.shape == cpu_out.shape
    np.testing.assert_allclose(gpu_out.cpu().detach().numpy(), cpu_out.detach().numpy(), rtol=rtol, atol=atol,
                               err_msg="forward")
    if not backward or not cpu_out.requires_grad:
        return
    cotangent = rng.standard_normal(cpu_out.shape)
    cpu_out.backward(zero.tensor(cotangent, dtype=cpu_out.dtype))
    gpu_out.backward(zero.tensor(cotangent, dtype=gpu_out.dtype, device="cuda"))
    for i, (c, g) in enumerate(zip(cpu_in, gpu_in)):
        if c.requires_grad:
            assert g.grad.device == zero.Device("cuda")
            np.testing.assert_allclose(g.grad.cpu().numpy(), c.grad.numpy(), rtol=rtol, atol=atol,
                                       err_msg=f"gradient of input {i}")


R = np.random.default_rng(1)
A, B = R.standard_normal((6, 7)), R.standard_normal((6, 7))
M, N = R.standard_normal((4, 6, 5)), R.standard_normal((4, 5, 3))
POSITIVE = R.uniform(0.5, 2.0, (6, 7))
IDS = R.integers(0, 10, (4, 9))
TARGET = R.integers(0, 7, 6)

OPS = {
    "add broadcast": (lambda a, b: a + b[0], A, B),
    "mul transposed": (lambda a, b: a.mT * b.mT, A, B),
    "div pow": (lambda a, b: a / b ** 2, A, POSITIVE),
    "exp log sqrt": (lambda a, b: (a.exp() + b.log() + b.sqrt()).tanh(), A, POSITIVE),
    "activations": (lambda a: a.relu() + a.sigmoid() + F.silu(a) + F.gelu(a) + F.gelu(a, approximate="tanh"), A),
    "where maximum clamp": (lambda a, b: zero.where(a > b, a, b).clamp(-0.5, 0.5) + zero.maximum(a, b), A, B),
    "sum mean var": (lambda a: a.sum(0) + a.mean(1).sum() + a.var(0), A),
    "amax logsumexp": (lambda a: a.amax(1) + a.logsumexp(1), A),
    "max with indices": (lambda a: a.max(dim=1)[0], A),
    "softmax log_softmax": (lambda a: a.softmax(-1) + a.mT.log_softmax(-1).mT, A),
    "matmul": (lambda a, b: a @ b.mT, A, B),
    "batched matmul": (lambda m, n: m @ n, M, N),
    "batched matmul transposed": (lambda m, n: m.mT.mT @ n.transpose(1, 2).mT, M, N),
    "broadcast matmul": (lambda m, n: m[:1] @ n, M, N),
    "getitem advanced": (lambda a: a[zero.tensor([0, 2, 2], device=a.device)], A),
    "embedding": (lambda w, i: F.embedding(i, w), R.standard_normal((10, 5)), IDS),
    "cat stack tril": (lambda a, b: zero.cat([a, b], 1).tril() + zero.cat([zero.stack([a, b]).sum(0)] * 2, 1), A, B),
    "layer_norm": (lambda a, w, b: F.layer_norm(a * 3, (7,), w, b), A, R.standard_normal(7), R.standard_normal(7)),
    "cross_entropy": (lambda a, t: F.cross_entropy(a, t, label_smoothing=0.1), A, TARGET),
    "nll_loss": (lambda a, t: F.nll_loss(a.log_softmax(-1), t), A, TARGET),
    "linear": (lambda x, w, b: F.linear(x, w, b), M, R.standard_normal((8, 5)), R.standard_normal(8)),
    "ffn": (lambda x, w1, b1, w2, b2: F.ffn(x, w1, b1, w2, b2), M, R.standard_normal((16, 5)),
            R.standard_normal(16), R.standard_normal((5, 16)), R.standard_normal(5)),
    "linear_cross_entropy": (lambda x, w, t: F.linear_cross_entropy(x, w, t, chunk_size=5),
                             R.standard_normal((6, 5)), R.standard_normal((7, 5)), TARGET),
    "flash attention": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v, is_causal=True),
                        R.standard_normal((2, 3, 70, 16)), R.standard_normal((2, 3, 70, 16)),
                        R.standard_normal((2, 3, 70, 16))),
    "attention with mask": (lambda q, k, v: F.scaled_dot_product_attention(q, k, v), R.standard_normal((2, 9, 8)),
                            R.standard_normal((2, 11, 8)), R.standard_normal((2, 11, 8))),
}


@pytest.mark.parametrize("name", sorted(OPS))
@pytest.mark.parametrize("dtype", [zero.float32, zero.float64], ids=["float32", "float64"])
def test_op_on_cuda_matches_the_cpu(name, dtype):
    fn, *values = OPS[name]
    tolerance = {"rtol": 2e-4, "atol": 2e-5} if dtype is zero.float32 else {"rtol": 1e-7, "atol": 1e-9}
    parity(fn, *values, dtype=dtype, **tolerance)


@pytest.mark.parametrize("layout", ["plain", "transposed", "batched, broadcast", "strided columns (copied)"])
def test_a_layout_s_kept_plan_computes_later_products_of_that_layout(layout):
    """The first product of a layout plans it, and keeps the plan when it reads the operands
    in place; later products of the layout, on other arrays, use the kept plan."""
    from zero.backends.cuda.kernels import linalg

    linalg._in_place_plans.clear()
    for seed in range(3):
        rng = np.random.default_rng(seed)
        a, b = rng.standard_normal((4, 8, 12)), rng.standard_normal((6, 5))
        x, w = (zero.tensor(v, dtype=zero.float32, device="cuda") for v in (a, b))
        if layout == "plain":
            a, b, x, w = a[0, :, :6], b, x[0, :, :6], w     # rows 12 apart: read in place
        elif layout == "transposed":
            a, x, w = a[0, :6, :8].T, x[0, :6, :8].mT, w.mT.contiguous().mT
        elif layout == "batched, broadcast":
            a, x = a[:, :, :6], x[:, :, :6]
        else:
            a, x = a[:, :, ::2], x[:, :, ::2]                # columns 2 apart: cuBLAS needs a copy
        got = (x @ w).cpu().numpy()
        np.testing.assert_allclose(got, np.matmul(a, b), rtol=1e-4, atol=1e-4, err_msg=f"product {seed}")
    assert len(linalg._in_place_plans) == (0 if "copied" in layout else 1)


def test_dropout_draws_the_same_mask_on_both_devices():
    x = np.ones((33, 65))
    masks = []
    for device in ("cpu", "cuda"):
        generator = zero.Generator(seed=42)
        masks.append(F.dropout(zero.tensor(x, device=device), 0.3, generator=generator).cpu().numpy() == 0)
    assert np.array_equal(*masks) and 0.2 < masks[0].mean() < 0.4


def test_moving_a_module_moves_gradients():
    model = zero.nn.Linear(4, 3)
    model(zero.randn(2, 4)).sum().backward()
    model.to("cuda")
    assert model.weight.device == zero.Device("cuda") and model.weight.grad.device == zero.Device("cuda")


def test_memory_statistics_follow_tensors_and_cupy_temporaries():
    zero.cuda.trim_free_pool()
    zero.cuda.reset_peak_memory_stats()
    before = zero.cuda.memory_stats()
    x = zero.empty(1000, 1000, device="cuda")                  # 4 MB
    assert zero.cuda.memory_stats()["live_bytes"] - before["live_bytes"] == 4_000_256  # rounded to 512
    x.sum().item()                                              # CuPy's reduction temporaries come from the pool
    del x
    gc.collect()
    stats = zero.cuda.memory_stats()
    assert stats["live_bytes"] == before["live_bytes"] and stats["cached_bytes"] >= 4_000_256
    assert stats["peak_bytes"] >= before["live_bytes"] + 4_000_256
    y = zero.empty(1000, 1000, device="cuda")                  # the same bucket: a hit, no cudaMalloc
    assert zero.cuda.memory_stats()["hits"] > stats["hits"]
    del y
    gc.collect()
    assert zero.cuda.trim_free_pool() >= 4_000_256
    assert zero.cuda.memory_stats()["cached_bytes"] == 0


def test_as_cupy_shares_memory_and_keeps_it_alive():
    t = zero.arange(10.0, device="cuda")
    array = zero.cuda.as_cupy(t)
    address = array.data.ptr
    del t
    gc.collect()
    u = zero.zeros(10, device="cuda")
    assert zero.cuda.as_cupy(u).data.ptr != address
    assert float(array.sum()) == 45.0


def test_tf32_only_when_asked():
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((512, 512)), rng.standard_normal((512, 512))
    exact = a @ b

    def error():
        got = (zero.tensor(a, dtype=zero.float32, device="cuda") @ zero.tensor(b, dtype=zero.float32,
                                                                              device="cuda")).cpu().numpy()
        return np.abs(got - exact).max() / np.abs(exact).max()

    flags = zero.backends.cuda.matmul
    previous = flags.allow_tf32
    try:
        flags.allow_tf32 = False
        assert error() < 1e-5
        flags.allow_tf32 = True
        assert error() < 5e-3
    finally:
        flags.allow_tf32 = previous


def _gpt_losses(device: str, rng, low=None) -> list:
    """Three AdamW steps of a small GPT on ``device`` (the forward under autocast in ``low``)."""
    from zero.models import GPT, GPTConfig

    config = GPTConfig(vocab_size=50, block_size=32, n_layer=2, n_head=2, n_embd=32, dropout=0.0)
    batches = [(rng.integers(0, 50, (4, 32)), rng.integers(0, 50, (4, 32))) for _ in range(3)]
    zero.manual_seed(0)
    model = GPT(config).to(device)
    optimizer = zero.optim.AdamW(model.parameters(), lr=1e-3)
    losses = []
    for x, y in batches:
        with zero.autocast(device, dtype=low or zero.bfloat16, enabled=low is not None):
            loss = model(zero.tensor(x, device=device), zero.tensor(y, device=device))
        optimizer.zero_grad()
        loss.backward()
        optimizer.step()
        losses.append(loss.item())
    assert all(p.dtype is zero.float32 for p in model.parameters())
    return losses


def test_a_gpt_step_on_cuda_matches_the_cpu():
    losses = {device: _gpt_losses(device, np.random.default_rng(0)) for device in ("cpu", "cuda")}
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=1e-4)


@pytest.mark.parametrize("low", [zero.bfloat16, zero.float16], ids=["bfloat16", "float16"])
def test_16_bit_products_and_a_gpt_step_under_autocast_on_cuda(low):
    """cuBLAS products of 16-bit operands (float32 accumulation) against the CPU's, and a GPT
    step under CUDA autocast following the CPU's under CPU autocast (issue 38)."""
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal((3, 64, 96)), rng.standard_normal((96, 40))
    got = (zero.tensor(a, device="cuda").to(low) @ zero.tensor(b, device="cuda").to(low)).float().cpu().numpy()
    want = (zero.tensor(a).to(low) @ zero.tensor(b).to(low)).float().numpy()
    np.testing.assert_allclose(got, want, rtol=2e-2, atol=2e-2)
    losses = {device: _gpt_losses(device, np.random.default_rng(2), low) for device in ("cpu", "cuda")}
    np.testing.assert_allclose(losses["cuda"], losses["cpu"], rtol=2e-2)


def test_clip_grad_norm_and_adamw_on_cuda_match_the_cpu():
    """Both take every gradient of a group in one launch on the GPU (tables of addresses)."""
    rng = np.random.default_rng(0)
    shapes = [(384, 1152), (1152,), (65, 384), (7,), (3, 1025)]
    values = [(rng.standard_normal(s).astype(np.float32), rng.standard_normal(s).astype(np.float32)) for s in shapes]
    results = {}
    for device in ("cpu", "cuda"):
        params = [zero.nn.Parameter(zero.tensor(w, device=device)) for w, _ in values]
        optimizer = zero.optim.AdamW(params, lr=1e-2, weight_decay=0.1)
        norms = []
        for step in range(2):
            for p, (_, g) in zip(params, values):
                p.grad = zero.tensor(g * (step + 1), device=device)
            norms.append(zero.nn.utils.clip_grad_norm_(params, 50.0).item())
            optimizer.step()
        results[device] = norms, [p.detach().cpu().numpy() for p in params]
    # the GPU adds the squares in float64, the CPU's BLAS dot in float32 (~450,000 of them)
    np.testing.assert_allclose(results["cuda"][0], results["cpu"][0], rtol=2e-5)
    for got, want in zip(results["cuda"][1], results["cpu"][1]):
        np.testing.assert_allclose(got, want, rtol=1e-5, atol=1e-6)


def test_events_time_the_gpu_and_the_profiler_reports_its_time_per_op():
    x = zero.randn(512, 512, device="cuda", requires_grad=True)
    start, end = zero.cuda.Event(enable_timing=True), zero.cuda.Event(enable_timing=True)
    start.record()
    x @ x
    end.record()
    assert start.elapsed_time(end) > 0 and end.query()
    with pytest.raises(DeviceError, match="never recorded"):
        zero.cuda.Event(enable_timing=True).elapsed_time(end)
    with pytest.raises(DeviceError, match="without enable_timing"):
        zero.cuda.Event().elapsed_time(end)
    with zero.profiler.profile(use_device="cuda") as prof:
        (x @ x).tanh().sum().backward()
    matmul = prof.stats["MatMul"]
    assert matmul.backward_calls == 1 and matmul.device_forward_seconds > 0 and matmul.device_backward_seconds > 0
    assert prof.stats["Tanh"].device_backward_seconds > 0
    assert "dev total" in prof.table()


def test_cuda_work_never_imports_torch():
    code = ("import sys\n"
            "at_start = 'torch' in sys.modules\n"
            "import zero\n"
            "x = zero.randn(64, 64, device='cuda', requires_grad=True)\n"
            "zero.nn.functional.layer_norm(x, (64,)).softmax(-1).sum().backward()\n"
            "print(x.grad.sum().item(), at_start, 'torch' in sys.modules)\n")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=300, env=env,
                            check=False)
    assert result.returncode == 0, result.stderr[-3000:]
    *_, at_start, at_end = result.stdout.split()
    if at_start == "True":
        pytest.skip("this interpreter loads torch at start-up (its site-packages), before any of Zero")
    assert at_end == "False", ("torch was imported (by Triton's driver or its argument specializer): "
                               + result.stderr[-2000:])


def test_nccl_on_one_gpu(tmp_path):
    """zero.distributed's nccl backend for real, one rank: every collective, DDP and ZeRO on the
    GPU (tests/distributed/programs/nccl_one_gpu.py, in its own process: it picks its GPU
    before CUDA starts)."""
    import json

    import zero.distributed

    if not zero.distributed.is_nccl_available():
        pytest.skip("NCCL is not installed here: pip install 'nvidia-nccl-cu13>=2.27.7,<3'")
    program = os.path.join(os.path.dirname(__file__), "..", "..", "distributed", "programs", "nccl_one_gpu.py")
    env = {k: v for k, v in os.environ.items() if k != "TRITON_INTERPRET"}
    result = subprocess.run([sys.executable, program, str(tmp_path)], capture_output=True, text=True, timeout=240,
                            env=env, check=False)
    assert result.returncode == 0, result.stdout[-2000:] + result.stderr[-4000:]
    report = json.loads((tmp_path / "rank0.json").read_text())
    values = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert report["backend"] == "nccl" and report["world"] == 1
    for op in ("SUM", "AVG", "MAX", "PRODUCT"):  # one rank: each reduction gives back its input
        np.testing.assert_array_equal(report[f"all_reduce {op}"], values * 2)
    assert report["async float16"] == [values.tolist(), True]
    for name in ("broadcast", "all_gather_into_tensor", "all_gather", "reduce_scatter_tensor"):
        np.testing.assert_array_equal(report[name], values, err_msg=name)
    assert report["objects"] == [1.0, 1.0]
    np.testing.assert_allclose(report["ddp losses"], report["plain losses"], rtol=1e-6)
    np.testing.assert_allclose(report["zero losses"], report["plain losses"], rtol=1e-6)
    assert report["zero state entries"] == 4
