"""`zero gpt train --dtype bfloat16|float16`: the forward under autocast, float32 checkpoints
that resume in any dtype, float16's loss scaling (issue 38)."""
import json

import pytest

import zero

from cli_helpers import TINY_GPT, gpt


def test_bfloat16_training_says_so_keeps_float32_checkpoints_and_resumes_in_float32(prepared, tmp_path, capsys):
    run, metrics = tmp_path / "run", tmp_path / "metrics.jsonl"
    common = ("--data", prepared, "--out", run, "--eval-interval", 3, "--metrics", metrics, *TINY_GPT)
    assert gpt("train", *common, "--steps", 3, "--dtype", "bfloat16") == 0
    assert "on cpu in bfloat16;" in capsys.readouterr().out
    checkpoint = zero.load(run / "checkpoint.safetensors")
    assert {t.dtype for t in checkpoint["model"].values()} == {zero.float32}
    assert gpt("train", *common, "--steps", 5, "--resume", "--dtype", "float32") == 0
    assert "on cpu in float32;" in capsys.readouterr().out
    losses = [json.loads(line)["train_loss"] for line in metrics.read_text().splitlines()]
    assert len(losses) == 5 and all(0 < loss < 10 for loss in losses)


@pytest.mark.parametrize("dtype, tolerance", [("bfloat16", 0.02), ("float16", 0.01)])
def test_16_bit_losses_follow_float32s(prepared, tmp_path, dtype, tolerance):
    runs = {}
    for run in ("float32", dtype):
        metrics = tmp_path / f"{run}.jsonl"
        assert gpt("train", "--data", prepared, "--out", tmp_path / run, "--steps", 4, "--eval-interval", 4,
                   "--metrics", metrics, "--dtype", run, *TINY_GPT) == 0
        runs[run] = [json.loads(line)["train_loss"] for line in metrics.read_text().splitlines()]
    for full, mixed in zip(runs["float32"], runs[dtype]):
        assert abs(full - mixed) <= tolerance * full, runs


def _losses(metrics):
    return [json.loads(line) for line in metrics.read_text().splitlines()]


def test_float16_scales_the_loss_skips_an_overflowing_step_and_resumes_exactly(prepared, tmp_path, capsys,
                                                                               monkeypatch):
    """--dtype float16: the loss is scaled by a GradScaler. A scale so large that the gradients
    overflow makes the scaler skip those updates and lower its scale (grad_norm None in the
    metrics), and the run goes on: an overflow is not a divergence. The scaler's state is in
    the checkpoint, so a run stopped and resumed equals one that never stopped."""
    import functools

    import zero.cli.gpt_trainer as trainer

    monkeypatch.setattr(trainer, "GradScaler", functools.partial(zero.amp.GradScaler, init_scale=2.0 ** 20))
    common = ("--data", prepared, "--eval-interval", 3, "--dtype", "float16", *TINY_GPT)
    whole, parts = tmp_path / "whole.jsonl", tmp_path / "parts.jsonl"
    assert gpt("train", *common, "--out", tmp_path / "a", "--steps", 6, "--metrics", whole) == 0
    assert "on cpu in float16;" in capsys.readouterr().out
    records = _losses(whole)
    assert records[0]["grad_norm"] is None                     # 2^20: the first steps overflow, skipped
    assert records[-1]["grad_norm"] is not None                # the scale came down; updates resumed
    checkpoint = zero.load(tmp_path / "a" / "checkpoint.safetensors")
    assert checkpoint["scaler"]["scale"] < 2.0 ** 20
    assert {t.dtype for t in checkpoint["model"].values()} == {zero.float32}

    assert gpt("train", *common, "--out", tmp_path / "b", "--steps", 3, "--metrics", parts) == 0
    assert gpt("train", *common, "--out", tmp_path / "b", "--steps", 6, "--metrics", parts, "--resume") == 0
    assert [(r["train_loss"], r["grad_norm"]) for r in _losses(parts)] == \
        [(r["train_loss"], r["grad_norm"]) for r in records]



@pytest.mark.parametrize("device, native, expected", [("cpu", True, "float32"), ("cuda", False, "float32"),
                                                      ("cuda", True, "bfloat16"), ("cuda:0", True, "bfloat16")])
def test_the_default_dtype_is_bfloat16_where_the_gpu_computes_it(monkeypatch, device, native, expected):
    """nanoGPT's rule: without --dtype, bfloat16 on a GPU of compute capability 8.0 or more."""
    from zero.cli import gpt_config

    asked = []
    monkeypatch.setattr(zero.cuda, "is_bf16_supported", lambda including_emulation=True: asked.append(
        including_emulation) or native)
    assert gpt_config.default_dtype(device) == expected
    assert asked == ([] if device == "cpu" else [False])   # native support only, not emulation


def test_is_bf16_supported_is_false_without_a_gpu():
    torch = pytest.importorskip("torch")
    if zero.cuda.is_available():
        pytest.skip("a GPU is here")
    assert zero.cuda.is_bf16_supported() is False and torch.cuda.is_bf16_supported() is False
