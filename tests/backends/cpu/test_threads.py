"""The CPU pool (zero.backends.cpu.threads) and its splits (zero.backends.cpu.parallel):
how work is split, errors, forks, and what a kernel split over threads gives against one
thread (the same bits for loops, the same to rounding for matrix products, and the same
bits again for the same thread count)."""
from __future__ import annotations

import multiprocessing
import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import zero
from zero.backends.cpu import kernels as K
from zero.backends.cpu import parallel, threads
from zero.backends.cpu.kernels import nn as nn_kernels


@pytest.fixture
def two_threads():
    before = threads.get_num_threads()
    threads.set_num_threads(2)
    yield
    threads.set_num_threads(before)


@pytest.fixture
def split_everything(monkeypatch, two_threads):
    """Two threads, and every size worth splitting: the parallel paths on small arrays. Gives
    the list of the splits that ran (their number of parts), so a test can check that its
    kernel really split."""
    monkeypatch.setattr(parallel, "SPLIT_NS", 1e-3)
    monkeypatch.setattr(parallel, "SPLIT_FLOPS", 1)
    monkeypatch.setattr(parallel, "MIN_ROWS", 1)
    monkeypatch.setattr(parallel, "LAYER_NORM_PART", 1)
    monkeypatch.setattr(parallel, "MEMORY_PART", 1)
    splits, run_all = [], threads._pool.run_all

    def recorded(functions):
        splits.append(len(functions))
        run_all(functions)

    monkeypatch.setattr(threads._pool, "run_all", recorded)
    return splits


def test_parts_cover_the_range_once_and_run_on_two_threads(two_threads):
    seen, lock = [], threading.Lock()

    def body(start, stop):
        with lock:
            seen.append((start, stop, threading.current_thread().name))

    threads.parallel_for(10, body)
    assert sorted((start, stop) for start, stop, _ in seen) == [(0, 5), (5, 10)]
    assert len({name for *_, name in seen}) == 2
    assert threads.ranges(10, grain=6) == [(0, 10)]          # too short to split
    assert threads.ranges(0) == [(0, 0)]


def test_an_error_in_a_worker_reaches_the_caller(two_threads):
    def body(start, stop):
        if start > 0:
            raise KeyError(f"part {start}")

    with pytest.raises(KeyError, match="part 5"):
        threads.parallel_for(10, body)
    threads.parallel_for(10, lambda start, stop: None)       # the pool still works


def test_a_split_inside_a_part_runs_on_that_part_thread(two_threads):
    inner = []

    def outer(start, stop):
        threads.parallel_for(4, lambda a, b: inner.append((a, b)))

    threads.parallel_for(2, outer)
    assert inner == [(0, 4), (0, 4)]                          # one serial part each, no deadlock


def test_set_num_threads_checks_its_argument():
    for bad in (0, -1, 1.5, True, "2"):
        with pytest.raises(ValueError, match="set_num_threads: the number of threads must be an integer >= 1"):
            zero.set_num_threads(bad)


def test_one_thread_runs_everything_on_the_caller():
    before = zero.get_num_threads()
    try:
        zero.set_num_threads(1)
        assert zero.get_num_threads() == 1
        names = []
        threads.parallel_for(100, lambda a, b: names.append(threading.current_thread().name))
        assert names == [threading.current_thread().name]
    finally:
        zero.set_num_threads(before)


def test_blas_is_single_threaded_before_the_first_product():
    """Even a small product, not split, on a pool of one thread: otherwise the first steps
    of a run would run on BLAS's threads and round differently from the rest."""
    pytest.importorskip("threadpoolctl")
    program = ("import threadpoolctl, zero\n"
               "zero.set_num_threads(1)\n"
               "a = zero.randn(3, 3)\n"
               "(a @ a).sum()\n"
               "print(max(i['num_threads'] for i in threadpoolctl.threadpool_info() if i['user_api'] == 'blas'))\n")
    found = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True, timeout=120,
                           env={**os.environ, "OPENBLAS_NUM_THREADS": "2"})
    assert found.returncode == 0, found.stderr
    assert found.stdout.split() == ["1"]


def _split_product_in_child(queue):
    a = np.arange(64 * 32, dtype=np.float32).reshape(64, 32)
    out = np.empty((64, 64), np.float32)
    parallel.SPLIT_FLOPS = 1
    parallel.product(a, a.T, out)
    queue.put(bool(np.allclose(out, a @ a.T, rtol=1e-6)) and len(threads._pool.workers) == 1)


def test_a_forked_process_starts_its_own_workers(two_threads):
    threads.parallel_for(2, lambda a, b: None)               # workers exist in the parent
    context = multiprocessing.get_context("fork")
    queue = context.Queue()
    child = context.Process(target=_split_product_in_child, args=(queue,))
    child.start()
    child.join(60)
    assert child.exitcode == 0 and queue.get(timeout=5)


# -- the same bits on one thread and on two ------------------------------------------------------


def _on(n, run):
    before = threads.get_num_threads()
    threads.set_num_threads(n)
    try:
        return run()
    finally:
        threads.set_num_threads(before)


def _same_bits(run, splits):
    """The loops compute each element on one thread from the same operands: the results do
    not depend on the number of threads."""
    one, two = _on(1, run), _on(2, run)
    assert splits and max(splits) == 2                        # the second run did split
    for a, b in zip(one, two):
        assert a.dtype == b.dtype and np.array_equal(a, b, equal_nan=True)


def _close_and_repeatable(run, splits):
    """A matrix product split into ranges of rows is not bit for bit the unsplit product
    (BLAS blocks a shorter matrix differently), so products agree across thread counts to
    rounding only; with one number of threads they repeat bit for bit."""
    one, two, again = _on(1, run), _on(2, run), _on(2, run)
    assert splits and max(splits) == 2                        # the runs on two threads did split
    for a, b, c in zip(one, two, again):
        np.testing.assert_allclose(b, a, rtol=2e-5, atol=2e-5)
        assert np.array_equal(b, c)


rng = np.random.default_rng(0)


def _f32(*shape, scale=1.0):
    return (rng.standard_normal(shape) * scale).astype(np.float32)


@pytest.mark.parametrize("shapes", [((37, 19), (19, 23)), ((5, 40), (40, 70)), ((6, 9, 8), (6, 8, 7)),
                                    ((40,), (40, 33)), ((33, 40), (40,)), ((4, 9, 8), (8, 7))])
def test_products(split_everything, shapes):
    a, b = _f32(*shapes[0]), _f32(*shapes[1])
    expected = np.matmul(a, b)

    def run():
        out = np.empty(expected.shape, np.float32)
        K.matmul(a, b, out)
        return (out,)

    _close_and_repeatable(run, split_everything)
    np.testing.assert_allclose(run()[0], expected, rtol=1e-5, atol=1e-5)
    transposed = np.empty((shapes[1][-1], 5), np.float32) if len(shapes[0]) == 2 and len(shapes[1]) == 2 else None
    if transposed is not None:                                # a transposed view as the left operand
        c = _f32(5, shapes[1][0])
        K.matmul(b.T, c.T, transposed)
        np.testing.assert_allclose(transposed, b.T @ c.T, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("bias", [False, True])
@pytest.mark.parametrize("rows", [30, 5])         # more rows than features (split by rows), fewer (by features)
def test_linear(split_everything, bias, rows):
    x, w, b, g = _f32(rows, 8), _f32(12, 8), _f32(12), _f32(rows, 12)

    def run():
        out = np.empty((rows, 12), np.float32)
        K.linear_forward(x, w, b if bias else None, out)
        grads = [np.empty_like(x), np.empty_like(w), np.empty_like(b)]
        K.linear_backward(g, x, w, *grads)
        return [out, *grads]

    _close_and_repeatable(run, split_everything)
    out, grad_x, grad_w, grad_b = run()
    np.testing.assert_allclose(out, x @ w.T + (b if bias else 0), rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_x, g @ w, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_w, g.T @ x, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(grad_b, g.sum(0), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("approximate", ["none", "tanh"])
@pytest.mark.parametrize("keep", [False, True])
def test_ffn(split_everything, approximate, keep):
    x, w1, b1, w2, b2, g = _f32(30, 8), _f32(24, 8), _f32(24), _f32(8, 24), _f32(8), _f32(30, 8)

    def run():
        out, kept = np.empty((30, 8), np.float32), np.empty((30, 24), np.float32) if keep else None
        K.ffn_forward(x, w1, b1, w2, b2, approximate, out, kept)
        grads = [np.empty_like(a) for a in (x, w1, b1, w2, b2)]
        K.ffn_backward(g, x, w1, b1, w2, approximate, *grads, kept)
        return [out, *grads]

    _close_and_repeatable(run, split_everything)


@pytest.mark.parametrize("causal", [False, True])
def test_attention(split_everything, causal):
    q, k, v, g = _f32(6, 20, 8), _f32(6, 20, 8), _f32(6, 20, 8), _f32(6, 20, 8)

    def run():
        out, lse = np.empty((6, 20, 8), np.float32), np.empty((6, 20), np.float32)
        K.flash_attention_forward(q, k, v, 0.35, causal, out, lse)
        grads = [np.empty_like(q) for _ in range(3)]
        K.flash_attention_backward(g, q, k, v, out, lse, 0.35, causal, *grads)
        return [out, lse, *grads]

    _same_bits(run, split_everything)


def test_self_attention(split_everything):
    """The heads read from the packed qkv and written into y in place: split over batches,
    the same bits as one thread, and as flash attention on contiguous copies of the heads."""
    qkv, g = _f32(4, 20, 3 * 3 * 8), _f32(4, 20, 3 * 8)

    def run():
        out, lse = np.empty((4, 20, 24), np.float32), np.empty((12, 20), np.float32)
        K.self_attention_forward(qkv, 3, 0.35, True, out, lse)
        grad_qkv = np.empty_like(qkv)
        K.self_attention_backward(g, qkv, out, lse, 3, 0.35, True, grad_qkv)
        return [out, lse, grad_qkv]

    _same_bits(run, split_everything)
    out, lse, grad_qkv = run()
    heads = [np.ascontiguousarray(h).reshape(12, 20, 8) for h in qkv.reshape(4, 20, 3, 3, 8).transpose(2, 0, 3, 1, 4)]
    flat_out, flat_lse = np.empty((12, 20, 8), np.float32), np.empty((12, 20), np.float32)
    K.flash_attention_forward(*heads, 0.35, True, flat_out, flat_lse)
    assert np.array_equal(out, flat_out.reshape(4, 3, 20, 8).transpose(0, 2, 1, 3).reshape(4, 20, 24))
    assert np.array_equal(lse, flat_lse)
    flat_grads = [np.empty((12, 20, 8), np.float32) for _ in range(3)]
    flat_g = np.ascontiguousarray(g.reshape(4, 20, 3, 8).transpose(0, 2, 1, 3)).reshape(12, 20, 8)
    K.flash_attention_backward(flat_g, *heads, flat_out, flat_lse, 0.35, True, *flat_grads)
    expected = np.stack([f.reshape(4, 3, 20, 8) for f in flat_grads]).transpose(1, 3, 0, 2, 4).reshape(qkv.shape)
    assert np.array_equal(grad_qkv, expected)


@pytest.mark.parametrize("affine", [False, True])
def test_layer_norm(split_everything, affine):
    """Rows split in forward, the backward's fixed chunks of rows (and their partial weight
    and bias sums) shared among threads: the same bits on one thread and two."""
    x, g, w, b = _f32(70, 9, scale=2.0), _f32(70, 9), _f32(9), _f32(9)

    def run():
        out, mean, rstd = np.empty_like(x), np.empty(70, np.float32), np.empty(70, np.float32)
        K.layer_norm_forward(x, w if affine else None, b if affine else None, 1e-5, out, mean, rstd)
        grads = [np.empty_like(x), np.empty_like(w), np.empty_like(b)]
        K.layer_norm_backward(g, x, w if affine else None, mean, rstd, *grads)
        return [out, mean, rstd, *grads]

    _same_bits(run, split_everything)
    out = run()[0]
    centred = x - x.mean(1, keepdims=True)
    normalised = centred / np.sqrt((centred ** 2).mean(1, keepdims=True) + 1e-5)
    expected = normalised * w + b if affine else normalised
    np.testing.assert_allclose(out, expected, rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("chunk", [16, 40])
def test_linear_cross_entropy(split_everything, chunk):
    """Chunks of 16 rows (3 chunks): a chunk's rows split (logits, their gradient, grad_x),
    then the weight's rows. One chunk of 40: one region by rows, each range summing its own
    rows' share of grad_w."""
    x, w = _f32(40, 8), _f32(11, 8)
    target = rng.integers(0, 11, 40)

    def run():
        loss, lse = np.empty(40, np.float32), np.empty(40, np.float64)
        K.linear_cross_entropy_forward(x, w, target, -100, chunk, loss, lse)
        grad_x, grad_w = np.empty_like(x), np.empty_like(w)
        K.linear_cross_entropy_backward(np.full(40, 0.5, np.float32), x, w, target, lse, -100, chunk, grad_x, grad_w)
        return [loss, lse, grad_x, grad_w]

    _close_and_repeatable(run, split_everything)
    logits = (x @ w.T).astype(np.float64)
    log_probs = logits - np.log(np.exp(logits - logits.max(1, keepdims=True)).sum(1, keepdims=True)) \
        - logits.max(1, keepdims=True)
    loss, _, grad_x, grad_w = run()
    np.testing.assert_allclose(loss, -log_probs[np.arange(40), target], rtol=1e-5, atol=1e-5)
    d_logits = 0.5 * (np.exp(log_probs) - np.eye(11)[target])
    np.testing.assert_allclose(grad_x, d_logits @ w, rtol=1e-4, atol=1e-5)
    np.testing.assert_allclose(grad_w, d_logits.T @ x, rtol=1e-4, atol=1e-5)


def test_row_and_flat_loops(split_everything):
    x, g = _f32(33, 17, scale=3.0), _f32(33, 17)
    target = rng.integers(0, 17, 33)

    def run():
        results = []
        for forward, backward in ((K.softmax_forward, K.softmax_backward),
                                  (K.log_softmax_forward, K.log_softmax_backward)):
            out, grad_in = np.empty_like(x), np.empty_like(x)
            forward(x, out)
            backward(g, out, grad_in)
            results += [out, grad_in]
        loss, lse, grad_logits = np.empty(33, np.float32), np.empty(33, np.float64), np.empty_like(x)
        K.cross_entropy_forward(x, target, None, -100, 0.1, loss, lse)
        K.cross_entropy_backward(np.ones(33, np.float32), x, target, None, lse, -100, 0.1, grad_logits)
        flat, gelu, gelu_grad, dropped = x.reshape(-1), np.empty(561, np.float32), np.empty(561, np.float32), \
            np.empty(561, np.float32)
        K.gelu(flat, gelu)
        K.gelu_backward(g.reshape(-1), flat, gelu_grad)
        K.dropout_forward(flat, 0.3, 1234, dropped)
        param, m, v = flat.copy(), np.zeros(561, np.float32), np.zeros(561, np.float32)
        K.adamw_step(param, g.reshape(-1), m, v, 1e-3, 0.9, 0.99, 0.0, 1e-8, 0.1, 1e-3)
        return results + [loss, lse, grad_logits, gelu, gelu_grad, dropped, param, m, v]

    _same_bits(run, split_everything)


def test_memory_bound_loops(split_everything):
    """Arithmetic and copies (NumPy's, cut into ranges), x + row, relu and where on two threads: the same
    bits as on one, and NumPy's values, for every form of operand the split accepts."""
    a, b, row = _f32(40, 33), _f32(40, 33) + 2, _f32(33)
    mask, scalar = a > 0, np.array(1.5, np.float32)
    ops = {"add": np.add, "sub": np.subtract, "mul": np.multiply, "div": np.true_divide}

    def run():
        results = []
        for name, ufunc in ops.items():
            for left, right in ((a, b), (a, 0.25), (3, b), (a, scalar), (a, b.astype(np.float64))):
                out = np.empty_like(a)
                getattr(K, name)(left, right, out)
                assert np.array_equal(out, ufunc(left, right, dtype=np.float32, casting="unsafe"))
                results.append(out)
            in_place = a.copy()
            getattr(K, name)(in_place, b, in_place)
            assert np.array_equal(in_place, ufunc(a, b))
            results.append(in_place)
        with_row, row_in_place = np.empty_like(a), a.copy()
        K.add(a, row, with_row)
        K.add(row_in_place, row, row_in_place)
        copied, converted = np.empty_like(a), np.empty(a.shape, np.float64)
        K.copy(a, copied)
        K.copy(a, converted)
        assert np.array_equal(copied, a) and np.array_equal(converted, a)
        results += [copied, converted]
        relu, relu_grad, chosen = np.empty_like(a), np.empty_like(a), np.empty_like(a)
        K.relu(a, relu)
        K.relu_backward(b, relu, relu_grad)
        K.where(mask, a, b, chosen)
        assert np.array_equal(with_row, a + row) and np.array_equal(row_in_place, a + row)
        assert np.array_equal(relu, np.maximum(a, 0)) and np.array_equal(chosen, np.where(mask, a, b))
        assert np.array_equal(relu_grad, np.where(relu > 0, b, 0))
        return results + [with_row, row_in_place, relu, relu_grad, chosen]

    _same_bits(run, split_everything)


def test_arithmetic_on_overlapping_operands_is_not_split(split_everything):
    """An operand that overlaps the output shifted (x[1:] + x[:-1] into x[1:]) would race
    with the other part's writes: such a call runs as one NumPy call, with NumPy's answer."""
    x = _f32(1000)
    expected = x.copy()
    np.add(expected[1:], expected[:-1], out=expected[1:])
    K.add(x[1:], x[:-1], x[1:])
    assert not split_everything
    assert np.array_equal(x, expected)


def test_the_table_splits_from_two_parts_worth(two_threads, monkeypatch):
    """The kernel table's splits (``parallel.elements`` / ``rows``) begin where the rules of
    ``parallel`` say: a memory-bound loop from two parts of MEMORY_PART elements, a loop with
    a cost from two parts of SPLIT_NS (GELU's tanh form costing less, so splitting later),
    rows from two parts' rows; one element less is one plain call."""
    splits, run_all = [], threads._pool.run_all

    def recorded(functions):
        splits.append(len(functions))
        run_all(functions)

    monkeypatch.setattr(threads._pool, "run_all", recorded)

    def splits_at(call, size) -> bool:
        splits.clear()
        call(size)
        return bool(splits)

    n = 2 * parallel.MEMORY_PART
    a, out = np.ones(n, np.float32), np.empty(n, np.float32)
    add = lambda size: K.add(a[:size], a[:size], out[:size])                          # noqa: E731
    assert splits_at(add, n) and not splits_at(add, n - 1)
    for form, ns in (("none", parallel.GELU_NS), ("tanh", parallel.GELU_TANH_NS)):
        least = 2 * parallel.element_grain(1, ns)
        gelu = lambda size: K.gelu(a[:size], out[:size], approximate=form)             # noqa: E731
        assert splits_at(gelu, least) and not splits_at(gelu, least - 1), form
    width = 64
    rows = 2 * parallel.element_grain(width, parallel.SOFTMAX_NS)
    x = np.ones((rows, width), np.float32)
    softmax = lambda count: K.softmax_forward(x[:count], np.empty((count, width), np.float32))  # noqa: E731
    assert splits_at(softmax, rows) and not splits_at(softmax, rows - 1)


def test_a_split_kernel_takes_its_arrays_by_keyword(two_threads, split_everything):
    """The table's functions have the contract's parameters: arrays given by keyword are cut
    as positional ones are (and a kernel's hidden part offset is not among them)."""
    x = _f32(40, 33)
    by_position, by_keyword = np.empty_like(x), np.empty_like(x)
    K.gelu(x, by_position, "tanh")
    K.gelu(out=by_keyword, x=x, approximate="tanh")
    assert np.array_equal(by_position, by_keyword) and split_everything
    dropped = np.empty_like(x)
    K.dropout_forward(x=x, p=0.5, seed=7, out=dropped)
    whole = np.empty_like(x)
    nn_kernels.dropout_forward(x, 0.5, 7, whole)                   # the plain kernel, on one thread
    assert np.array_equal(dropped, whole)
    with pytest.raises(TypeError):
        K.dropout_forward(x, 0.5, 7, dropped, first=3)
