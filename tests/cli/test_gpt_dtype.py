"""`zero gpt train --dtype bfloat16`: the forward under autocast, float32 checkpoints that
resume in either dtype (issue 38)."""
import json

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


def test_bfloat16_losses_follow_float32s(prepared, tmp_path):
    runs = {}
    for dtype in ("float32", "bfloat16"):
        metrics = tmp_path / f"{dtype}.jsonl"
        assert gpt("train", "--data", prepared, "--out", tmp_path / dtype, "--steps", 4, "--eval-interval", 4,
                   "--metrics", metrics, "--dtype", dtype, *TINY_GPT) == 0
        runs[dtype] = [json.loads(line)["train_loss"] for line in metrics.read_text().splitlines()]
    for full, mixed in zip(runs["float32"], runs["bfloat16"]):
        assert abs(full - mixed) <= 0.02 * full, runs
