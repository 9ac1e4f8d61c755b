"""`zero gpt train`'s configuration, resolved once (cli/gpt_config.py), the trainer that reads it,
and --dry-run.

Precedence: the parser's defaults < --preset < the --resume checkpoint's settings < options given;
the model's shape and the preset cannot change on resume."""
from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
import shutil
from pathlib import Path

import pytest
from cli_helpers import gpt

import zero
from zero.cli import presets
from zero.cli.gpt_config import GPTTrainConfig, resolve_config, train_settings
from zero.cli.main import build_parser
from zero.errors import UsageError

FIXTURES = Path(__file__).parent / "fixtures"
# Written by the code before the config and the trainer existed (main at 2fd996e), from the
# `prepared` fixture's text: `zero gpt train --preset tiny --eval-interval 4 --log-interval 1
# --sample-tokens 0 --steps 8`: its checkpoint of step 4, its losses, its final weights' hash.
OLD_CHECKPOINT = FIXTURES / "gpt_tiny_step4_before_config.safetensors"
OLD_LOSSES = FIXTURES / "gpt_tiny_8_steps_before_config.jsonl"
OLD_WEIGHTS_SHA256 = "db379396accfd400dacb4125393d897f5f006401784a0166b29778d3878e6a61"
OLD_RUN = ("--preset", "tiny", "--eval-interval", 4, "--log-interval", 1, "--sample-tokens", 0)


def _args(tmp_path, *argv):
    return build_parser().parse_args(["gpt", "train", "--out", str(tmp_path / "run"), *map(str, argv)])


def _resolve(tmp_path, *argv, saved=None):
    return resolve_config(_args(tmp_path, *argv), saved, "ckpt.safetensors")


# -- precedence -------------------------------------------------------------------------------


def test_the_defaults_are_the_cpu_preset_and_the_parsers(tmp_path):
    config, overrides = _resolve(tmp_path)
    assert overrides == []
    assert config.preset == presets.DEFAULT == "cpu"
    assert {k: getattr(config, k) for k in presets.OPTIONS} == presets.PRESETS["cpu"]
    assert (config.weight_decay, config.grad_clip, config.seed, config.keep_checkpoints) == (0.1, 1.0, 1337, 3)
    assert config.metrics == str(tmp_path / "run" / "metrics.jsonl")
    assert config.data is None and config.resume is None and not config.dry_run
    # the dataclass's own defaults are the same run
    assert dataclasses.replace(config, out="runs/gpt", metrics=None) == GPTTrainConfig()


def test_a_preset_overrides_the_defaults(tmp_path):
    config, _ = _resolve(tmp_path, "--preset", "tiny")
    assert {k: getattr(config, k) for k in presets.OPTIONS} == presets.PRESETS["tiny"]


def test_an_option_given_overrides_the_preset(tmp_path):
    config, _ = _resolve(tmp_path, "--preset", "book", "--lr", 5e-4, "--n-layer", 2, "--dropout", 0)
    assert (config.lr, config.n_layer, config.dropout) == (5e-4, 2, 0.0)
    assert (config.n_embd, config.block_size) == (384, 256)  # the rest: the preset's


SAVED = {**presets.PRESETS["tiny"], "preset": "tiny", "lr": 0.003, "steps": 40, "weight_decay": 0.5,
         "seed": 7, "data": "/somewhere/data", "metrics": "/somewhere/metrics.jsonl", "vocab_size": 30}


def test_a_checkpoint_overrides_the_preset_and_the_defaults(tmp_path):
    config, overrides = _resolve(tmp_path, "--resume", saved=SAVED)
    assert overrides == []
    assert config.preset == "tiny"  # the checkpoint's, not the default's
    assert (config.lr, config.steps, config.weight_decay, config.seed) == (0.003, 40, 0.5, 7)
    assert (config.data, config.metrics) == ("/somewhere/data", "/somewhere/metrics.jsonl")
    # what the checkpoint does not record comes from its preset
    assert config.sample_tokens == presets.PRESETS["tiny"]["sample_tokens"]


def test_an_option_given_overrides_the_checkpoint_and_says_so(tmp_path):
    config, overrides = _resolve(tmp_path, "--resume", "--lr", 1e-4, "--steps", 60, saved=SAVED)
    assert (config.lr, config.steps) == (1e-4, 60)
    assert overrides == ["--steps 60 (the checkpoint's: 40)", "--lr 0.0001 (the checkpoint's: 0.003)"]


def test_an_option_given_at_its_default_value_still_overrides_the_checkpoint(tmp_path):
    config, overrides = _resolve(tmp_path, "--resume", "--weight-decay", 0.1, saved=SAVED)
    assert config.weight_decay == 0.1 and overrides == ["--weight-decay 0.1 (the checkpoint's: 0.5)"]


def test_a_path_given_on_resume_is_taken_absolute(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    config, _ = _resolve(tmp_path, "--resume", "--data", "here", saved=SAVED)
    assert config.data == os.path.abspath("here")


@pytest.mark.parametrize("option, value, saved", [("--n-embd", 32, 16), ("--n-layer", 3, 1), ("--block-size", 8, 16),
                                                  ("--n-head", 4, 2), ("--dropout", 0.3, 0.1),
                                                  ("--preset", "cpu", "tiny")])
def test_a_resumed_run_cannot_change_the_models_shape_or_its_preset(tmp_path, option, value, saved):
    with pytest.raises(UsageError, match=f"^--resume: ckpt.safetensors was trained with {option} {saved}; a resumed "
                                         f"run cannot change it to {value}$"):
        _resolve(tmp_path, "--resume", option, value, saved=SAVED)


def test_the_shape_given_again_as_it_was_is_accepted(tmp_path):
    config, overrides = _resolve(tmp_path, "--resume", "--n-embd", 16, "--preset", "tiny", saved=SAVED)
    assert config.n_embd == 16 and overrides == []


@pytest.mark.parametrize("argv, message", [(("--lr", "nan"), "--lr must be a number >= 0, got nan"),
                                           (("--min-lr", 1, "--lr", 0.1), "--min-lr 1.0 must not exceed --lr 0.1"),
                                           (("--n-embd", 30, "--n-head", 4), "--n-embd 30 must be a multiple of"),
                                           (("--steps", 0), "--steps must be at least 1, got 0")])
def test_every_rule_is_checked_on_the_resolved_values(tmp_path, argv, message):
    with pytest.raises(UsageError, match=re.escape(message)):
        _resolve(tmp_path, *argv)


def test_the_config_is_frozen(tmp_path):
    config, _ = _resolve(tmp_path)
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lr = 1.0  # type: ignore[misc]


def test_the_checkpoint_records_the_settings_under_the_keys_it_always_had(tmp_path):
    config, _ = _resolve(tmp_path, "--data", "d")
    old = zero.load(OLD_CHECKPOINT)["config"]["train"]
    assert list(train_settings(config)) == list(old)
    assert train_settings(config)["data"] == os.path.abspath("d")


# -- the trainer: the losses of the code before it, bit for bit --------------------------------


def _records(path: Path, first: int = 0) -> list[dict]:
    keys = ("step", "train_loss", "val_loss", "lr", "grad_norm")
    return [{k: r[k] for k in keys if k in r} for r in map(json.loads, path.read_text().splitlines())
            if r["step"] > first]


def _weights_sha256(path: Path) -> str:
    model = zero.load(path)["model"]
    digest = hashlib.sha256()
    for name in sorted(model):
        digest.update(name.encode())
        digest.update(model[name].numpy().tobytes())
    return digest.hexdigest()


def test_a_run_trains_as_the_code_before_the_trainer_did(prepared, tmp_path):
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", "--steps", 8, *OLD_RUN) == 0
    assert _records(tmp_path / "run" / "metrics.jsonl") == _records(OLD_LOSSES)
    assert _weights_sha256(tmp_path / "run" / "checkpoint.safetensors") == OLD_WEIGHTS_SHA256


def test_a_checkpoint_written_before_the_config_resumes_exactly(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    run.mkdir()
    shutil.copy(OLD_CHECKPOINT, run / "checkpoint.safetensors")
    metrics = tmp_path / "metrics.jsonl"
    assert gpt("train", "--out", run, "--resume", "--data", prepared, "--metrics", metrics) == 0
    out = capsys.readouterr().out
    assert f"resumed from {run / 'checkpoint.safetensors'} after step 4" in out
    assert _records(metrics) == _records(OLD_LOSSES, first=4)
    assert _weights_sha256(run / "checkpoint.safetensors") == OLD_WEIGHTS_SHA256
    assert zero.load(run / "checkpoint.safetensors")["config"]["train"]["preset"] == "tiny"


# -- --dry-run --------------------------------------------------------------------------------

TOLERANCE = 0.25  # the estimate against the allocator's measured peak


def _tree(path: Path) -> dict:
    return {str(p): p.stat().st_mtime_ns for p in path.rglob("*")}


def test_a_dry_run_estimates_the_peak_it_measures_and_writes_nothing(prepared, tmp_path, capsys):
    before = _tree(tmp_path)
    assert gpt("train", "--dry-run", "--data", prepared, "--out", tmp_path / "run") == 0  # the cpu preset
    measured_here = zero.cpu.memory_stats()["peak_bytes"]  # since the dry run's reset: its timed steps
    out = capsys.readouterr().out
    assert _tree(tmp_path) == before and not (tmp_path / "run").exists()
    assert re.search(r"model: [\d,]+ parameters \(4 layers, 4 heads, 128 wide, block 64", out)
    estimate = float(re.search(r"memory estimate on cpu: ([\d,.]+) MiB = weights", out).group(1).replace(",", ""))
    peak = float(re.search(r"measured peak during 3 steps: ([\d,.]+) MiB", out).group(1).replace(",", ""))
    assert abs(peak - measured_here / 2**20) < 0.1
    assert abs(peak / estimate - 1) <= TOLERANCE, (estimate, peak)
    assert re.search(r"time: [\d,]+ ms/step over 3 steps .* 600 steps: about \d+:\d\d", out)


def test_a_dry_run_refuses_what_training_would(prepared, tmp_path, capsys):
    assert gpt("train", "--dry-run", "--data", tmp_path / "nothing", "--out", tmp_path / "run") == 2
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "no vocabulary file" in err
    assert not (tmp_path / "run").exists()
    assert gpt("train", "--dry-run", "--data", prepared, "--out", tmp_path / "run", "--lr", "-1") == 2
    assert "--lr must be a number >= 0, got -1.0" in capsys.readouterr().err


def test_the_help_documents_the_dry_run(capsys):
    with pytest.raises(SystemExit):
        build_parser().parse_args(["gpt", "train", "--help"])
    out = capsys.readouterr().out
    assert "--dry-run" in out and "writes nothing" in out


# -- the MNIST job: the same pattern ----------------------------------------------------------


def test_the_mnist_job_resolves_its_config_once(tiny_mnist, tmp_path):
    from cli_helpers import mnist

    from zero.cli.mnist import MNISTConfig, check_arguments

    def resolve(*argv):
        return check_arguments(build_parser().parse_args(["mnist", *map(str, argv)]))

    config, saved = resolve("--data", tiny_mnist, "--lr", 0.01)
    assert saved is None and isinstance(config, MNISTConfig)
    assert (config.lr, config.epochs, config.hidden, config.optimizer) == (0.01, 1, 512, "adamw")
    with pytest.raises(dataclasses.FrozenInstanceError):
        config.lr = 1.0  # type: ignore[misc]

    first = tmp_path / "first.safetensors"
    assert mnist("--data", tiny_mnist, "--batch-size", 32, "--hidden", 16, "--lr", 0.02, "--save", first) == 0
    config, saved = resolve("--resume", first, "--epochs", 2, "--seed", 9)
    assert saved is not None and saved["epoch"] == 1
    # the checkpoint's over the defaults; the options given over the checkpoint's
    assert (config.hidden, config.batch_size, config.lr) == (16, 32, 0.02)
    assert (config.epochs, config.seed) == (2, 9)
    with pytest.raises(UsageError, match="was trained with --hidden 16; a resumed run cannot change it to 8"):
        resolve("--resume", first, "--epochs", 2, "--hidden", 8)
