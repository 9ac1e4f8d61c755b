"""Every error of the command line is one line on stderr and exit status 2, found before any
data is loaded, with nothing written."""
import json
import math

import pytest
from cli_helpers import TINY_GPT, gpt, mnist

import zero
from zero.cli.arguments import settle_with_checkpoint
from zero.cli.main import main
from zero.errors import UsageError


def _tree(root):
    return sorted((str(p.relative_to(root)), p.stat().st_mtime_ns if p.is_file() else 0) for p in root.rglob("*"))


@pytest.fixture
def sandbox(tmp_path, monkeypatch):
    """A directory with a plain file and an MNIST-style checkpoint in it; the data cache
    points inside it, so preparing the default corpus would show as a write."""
    monkeypatch.setenv("ZERO_DATA", str(tmp_path / "cache"))
    (tmp_path / "afile").write_text("not a directory")
    zero.save({"model": {}, "optimizer": {}, "epoch": 1, "rng": {}, "config": {"hidden": 16, "optimizer": "adamw"}},
              tmp_path / "adamw.safetensors")
    zero.save({"w": zero.ones(2)}, tmp_path / "other.safetensors")
    (tmp_path / "corrupt.safetensors").write_bytes(b"\x10" + bytes(30))
    return tmp_path


def _refused(argv, fragment, root, capsys):
    before = _tree(root)
    capsys.readouterr()
    assert main([str(a) for a in argv]) == 2
    captured = capsys.readouterr()
    lines = captured.err.strip().splitlines()
    assert len(lines) == 1, captured.err
    assert fragment in lines[0], lines[0]
    assert "Traceback" not in captured.err
    assert _tree(root) == before, "an error wrote something"


GPT_TRAIN = [
    (("--lr", -1), "--lr must be a number >= 0, got -1.0"),
    (("--lr", "nan"), "--lr must be a number >= 0, got nan"),
    (("--lr", "inf"), "--lr must be a number >= 0, got inf"),
    (("--weight-decay", "nan"), "--weight-decay must be a number >= 0, got nan"),
    (("--dropout", 1.0), "--dropout must be a number >= 0 and < 1, got 1.0"),
    (("--dropout", -0.1), "--dropout must be a number >= 0 and < 1"),
    (("--grad-clip", -1), "--grad-clip must be a number >= 0, got -1.0"),
    (("--warmup", -5), "--warmup must be at least 0, got -5"),
    (("--preset", "book", "--min-lr", 0.1), "--min-lr 0.1 must not exceed --lr 0.001"),
    (("--steps", 0), "--steps must be at least 1, got 0"),
    (("--eval-iters", 0), "--eval-iters must be at least 1"),
    (("--sample-tokens", -1), "--sample-tokens must be at least 0"),
    (("--preset", "book", "--n-head", 5), "--n-embd 384 must be a multiple of --n-head 5"),
    (("--seed", -1), "--seed must be at least 0, got -1"),
    (("--checkpoint-minutes", -1), "--checkpoint-minutes must be a number >= 0"),
    (("--keep-checkpoints", 0), "--keep-checkpoints must be at least 1"),
    (("--batch-size", 100000), "lower --batch-size"),
    (("--steps", "abc"), "argument --steps: invalid int value: 'abc'"),
    (("--resume",), "--resume: no checkpoint"),
    (("--resume", "--overwrite"), "argument --overwrite: not allowed with argument --resume"),
    (("--metrics", "{root}/afile/m.jsonl"), "afile is a file"),
]


@pytest.mark.parametrize("extra, fragment", GPT_TRAIN, ids=lambda v: " ".join(map(str, v)) if isinstance(v, tuple)
                         else None)
def test_gpt_train_refuses(sandbox, capsys, extra, fragment):
    """--data names nothing: each argument error must come before data is looked at (and the
    default corpus is not prepared without --data: the cache stays empty)."""
    extra = [str(a).format(root=sandbox) for a in extra]
    _refused(["gpt", "train", "--out", sandbox / "run", *extra], fragment, sandbox, capsys)
    _refused(["gpt", "train", "--data", sandbox / "no-data", "--out", sandbox / "run", *extra], fragment, sandbox,
             capsys)


def test_gpt_train_out_must_be_a_directory(sandbox, capsys):
    _refused(["gpt", "train", "--out", sandbox / "afile"], "--out", sandbox, capsys)


def test_gpt_train_missing_data_is_one_line_and_writes_nothing(sandbox, capsys):
    _refused(["gpt", "train", "--data", sandbox / "no-data", "--out", sandbox / "run"], "no vocabulary file",
             sandbox, capsys)


def test_gpt_train_block_size_longer_than_the_data(prepared, tmp_path, capsys):
    _refused(["gpt", "train", "--data", prepared, "--out", tmp_path / "run", *map(str, TINY_GPT),
              "--block-size", 500], "cannot fill a window of --block-size 500", tmp_path, capsys)


GPT_SAMPLE = [
    (("--top-k", 0), "--top-k must be at least 1, got 0"),
    (("--temperature", -1), "--temperature must be a number >= 0, got -1.0"),
    (("--temperature", "nan"), "--temperature must be a number >= 0, got nan"),
    (("--tokens", -5), "--tokens must be at least 1, got -5"),
    (("--tokens", 0), "--tokens must be at least 1, got 0"),
    (("--checkpoint", "newest"), "--checkpoint must be latest, best or a step number"),
    ((), "no checkpoint checkpoint.safetensors"),
]


@pytest.mark.parametrize("extra, fragment", GPT_SAMPLE, ids=lambda v: " ".join(map(str, v)) if isinstance(v, tuple)
                         else None)
def test_gpt_sample_refuses(sandbox, capsys, extra, fragment):
    _refused(["gpt", "sample", "--run", sandbox / "no-run", *extra], fragment, sandbox, capsys)


MNIST = [
    (("--resume", "{root}/missing.safetensors"), "--resume {root}/missing.safetensors: no such file"),
    (("--resume", "{root}/corrupt.safetensors"), "corrupt.safetensors"),
    (("--resume", "{root}/other.safetensors"), "is not a `zero mnist` checkpoint"),
    (("--resume", "{root}/adamw.safetensors", "--optimizer", "sgd"),
     "was trained with --optimizer adamw; a resumed run cannot change it to sgd"),
    (("--resume", "{root}/adamw.safetensors", "--hidden", 32), "--hidden 16; a resumed run cannot change it to 32"),
    (("--resume", "{root}/adamw.safetensors", "--epochs", 1), "--epochs 1: {root}/adamw.safetensors has 1 epochs"),
    (("--lr", -1), "--lr must be a number >= 0, got -1.0"),
    (("--lr", "nan"), "--lr must be a number >= 0, got nan"),
    (("--epochs", 0), "--epochs must be at least 1"),
    (("--hidden", 0), "--hidden must be at least 1"),
    (("--batch-size", 0), "--batch-size must be at least 1"),
    (("--save", "{root}/afile/x.safetensors"), "afile is a file"),
    (("--save", "{root}"), "is a directory; expected a file"),
    (("--metrics", "{root}/afile/m.jsonl"), "afile is a file"),
    (("--save", "{root}/other.safetensors"), "already holds checkpoints"),
    (("--hidden", 10**9), "lower --hidden"),
    (("--optimizer", "adam"), "argument --optimizer: invalid choice: 'adam'"),
]


@pytest.mark.parametrize("extra, fragment", MNIST, ids=lambda v: " ".join(map(str, v)) if isinstance(v, tuple)
                         else None)
def test_mnist_refuses_before_loading_data(sandbox, capsys, extra, fragment):
    extra = [str(a).format(root=sandbox) for a in extra]
    _refused(["mnist", "--data", sandbox / "no-data", *extra], fragment.format(root=sandbox), sandbox, capsys)


def test_mnist_missing_data_directory(sandbox, capsys):
    _refused(["mnist", "--data", sandbox / "no-data"], "no-data: not a directory", sandbox, capsys)


def test_gpt_lr_1e6_is_a_divergence_not_a_traceback(prepared, tmp_path, capsys):
    """The issue's `--lr 1e6`: a ZeroDivisionError inside the fused attention at step 2."""
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 5, "--lr", 1e6) == 3
    err = capsys.readouterr().err
    assert "zero gpt train: diverged: step " in err and "Traceback" not in err


def test_the_parent_of_an_output_is_created_when_training_starts(tiny_mnist, tmp_path):
    assert mnist("--data", tiny_mnist, "--batch-size", 64, "--hidden", 8, "--save", tmp_path / "new" / "m.safetensors",
                 "--metrics", tmp_path / "logs" / "m.jsonl") == 0
    assert zero.load(tmp_path / "new" / "m.safetensors")["epoch"] == 1


def test_help_and_the_exit_statuses(capsys):
    assert main(["--help"]) == 0
    out = capsys.readouterr().out
    for status in ("0 ", "1 ", "2 ", "3 ", "130 "):
        assert f"\n    {status}" in out
    assert "143 by SIGTERM" in out
    assert main(["gpt", "train", "--help"]) == 0
    out = capsys.readouterr().out
    assert "--checkpoint-minutes" in out and "--overwrite" in out and "--keep-checkpoints" in out


# -- resuming with the checkpoint's settings --------------------------------------------------


class Args:
    def __init__(self, given=(), **values):
        self.given = frozenset(given)
        self.__dict__.update(values)


def test_options_not_given_take_the_checkpoints_values():
    args = Args(given=("lr",), lr=0.5, steps=30, n_layer=6)
    overrides = settle_with_checkpoint(args, {"lr": 0.1, "steps": 5000, "n_layer": 2}, "ckpt",
                                       fixed=("n_layer",), adjustable=("lr", "steps"))
    assert (args.lr, args.steps, args.n_layer) == (0.5, 5000, 2)
    assert overrides == ["--lr 0.5 (the checkpoint's: 0.1)"]
    with pytest.raises(UsageError, match="--n-layer 2; a resumed run cannot change it to 6"):
        settle_with_checkpoint(Args(given=("n_layer",), n_layer=6), {"n_layer": 2}, "ckpt", fixed=("n_layer",))


def test_a_resumed_run_keeps_its_settings_and_takes_new_ones_given(prepared, tmp_path, capsys):
    """Trained with --lr 3e-3 for 6 steps, interrupted at 2: a plain --resume goes on to step 6
    at 3e-3; a given --lr 1e-4 is used (the optimizer's own saved rate does not win)."""
    run = tmp_path / "run"
    settings = ("--data", prepared, "--out", run, *TINY_GPT, "--lr", 3e-3, "--min-lr", 1e-5, "--steps", 6,
                "--eval-interval", 2, "--warmup", 0, "--metrics", tmp_path / "m.jsonl")
    assert gpt("train", *settings) == 0
    full = zero.load(run / "checkpoint.safetensors")
    (run / "checkpoint.safetensors").unlink()
    (run / "checkpoint.safetensors").hardlink_to(run / "checkpoint-000002.safetensors")
    assert gpt("train", "--out", run, "--resume", "--metrics", tmp_path / "m.jsonl") == 0
    resumed = zero.load(run / "checkpoint.safetensors")
    assert resumed["step"] == 6
    for key, t in full["model"].items():
        assert (t.numpy() == resumed["model"][key].numpy()).all(), key
    capsys.readouterr()
    assert gpt("train", "--out", run, "--resume", "--steps", 8, "--lr", 1e-4, "--metrics", tmp_path / "m.jsonl") == 0
    assert "resume: --lr 0.0001 (the checkpoint's: 0.003)" in capsys.readouterr().out
    lrs = {r["step"]: r["lr"] for r in map(json.loads, (tmp_path / "m.jsonl").read_text().splitlines())}
    assert list(lrs) == list(range(1, 9))
    assert math.isclose(lrs[1], 3e-3) and lrs[7] <= 1e-4 and lrs[8] <= 1e-4


def test_running_out_of_memory_says_what_was_asked(prepared, tiny_mnist, tmp_path, capsys, monkeypatch):
    """Past the estimate, a MemoryError mid-run (the issue's: bare, after 28 s) names the sizes
    asked and what to lower, in one line."""
    from zero.models import GPT, MLP

    def out_of_memory(self, *args, **kwargs):
        raise MemoryError

    monkeypatch.setattr(GPT, "forward", out_of_memory)
    monkeypatch.setattr(MLP, "forward", out_of_memory)
    assert gpt("train", "--data", prepared, "--out", tmp_path / "run", *TINY_GPT, "--steps", 2) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "out of memory in step 1 (--batch-size 4 x --block-size 16" in err
    assert "lower --batch-size" in err
    assert mnist("--data", tiny_mnist, "--hidden", 8) == 2
    err = capsys.readouterr().err.strip()
    assert err.splitlines() == [err] and "out of memory training --hidden 8 with --batch-size 64" in err
