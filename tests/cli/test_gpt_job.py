"""`zero gpt prepare | train | sample` end to end on a tiny configuration."""
import json

import zero

from cli_helpers import TINY_GPT, gpt

TINY = TINY_GPT
_run = gpt


def test_train_then_sample(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    metrics = tmp_path / "metrics.jsonl"
    assert _run("train", "--data", prepared, "--out", run, "--steps", 6, "--eval-interval", 3,
                "--metrics", metrics, *TINY) == 0
    records = [json.loads(line) for line in metrics.read_text().splitlines()]
    assert [r["step"] for r in records] == [1, 2, 3, 4, 5, 6]
    assert "val_loss" in records[2] and "val_loss" in records[5] and "val_loss" not in records[0]
    for key in ("train_loss", "lr", "grad_norm", "ms_per_step", "tokens_per_s"):
        assert key in records[0]
    capsys.readouterr()
    assert _run("sample", "--run", run, "--prompt", "To be", "--tokens", 30, "--seed", 1) == 0
    out = capsys.readouterr().out
    assert out.startswith("To be") and len(out.rstrip("\n")) >= 30


def test_resume_gives_the_losses_of_an_uninterrupted_run(prepared, tmp_path):
    common = ("--data", prepared, "--steps", 8, "--eval-interval", 4, *TINY)
    straight = tmp_path / "straight.jsonl"
    assert _run("train", *common, "--out", tmp_path / "a", "--metrics", straight) == 0

    import zero.cli.gpt_train as job

    real = job._checkpoint

    def checkpoint_then_stop(*args):
        real(*args)
        raise KeyboardInterrupt

    job._checkpoint = checkpoint_then_stop
    try:
        assert _run("train", *common, "--out", tmp_path / "b", "--metrics", tmp_path / "b.jsonl") == 130
    finally:
        job._checkpoint = real
    assert _run("train", *common, "--out", tmp_path / "b", "--metrics", tmp_path / "b.jsonl", "--resume") == 0
    losses = lambda path: [(r["step"], r["train_loss"], r.get("val_loss"))  # noqa: E731
                           for r in map(json.loads, path.read_text().splitlines())]
    assert losses(tmp_path / "b.jsonl") == losses(straight)


def test_a_cpu_checkpoint_resumes_on_another_device(prepared, tmp_path, second_device):
    """--resume loads the CPU checkpoint into a model on the device (a cross-device copy_)."""
    common = ("--data", prepared, "--out", tmp_path / "run", "--eval-interval", 2, *TINY)
    assert _run("train", *common, "--steps", 2) == 0
    assert _run("train", *common, "--steps", 4, "--device", str(second_device), "--resume") == 0
    assert zero.load(tmp_path / "run" / "checkpoint.safetensors")["step"] == 4


def test_prompt_outside_vocabulary_is_named(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert _run("train", "--data", prepared, "--out", run, "--steps", 1, *TINY) == 0
    assert _run("sample", "--run", run, "--prompt", "Zebra", "--tokens", 5) == 2
    assert "'Z'" in capsys.readouterr().err


def test_prepare_errors_name_the_file(tmp_path, capsys):
    bad = tmp_path / "bad.txt"
    bad.write_bytes(b"abc\xffdef")
    assert _run("prepare", bad, "--out", tmp_path / "o") == 2
    err = capsys.readouterr().err
    assert str(bad) in err and "byte offset 3" in err


def test_default_corpus_is_pythons_documentation(tmp_path, monkeypatch, capsys):
    monkeypatch.setenv("ZERO_DATA", str(tmp_path / "cache"))
    assert _run("train", "--out", tmp_path / "run", "--steps", 1, *TINY) == 0
    out = capsys.readouterr().out
    assert "pydoc_data.topics" in out
    assert (tmp_path / "cache" / "gpt" / "pydoc-topics-bpe512" / "tokenizer.json").is_file()
    assert zero.load(tmp_path / "run" / "checkpoint.safetensors")["step"] == 1
