"""What a run owns and where it finds its files (issue 39, items 3, 4, 5 and 13): a manifest
says which checkpoints are the run's, a prepared data directory is whole or refused, a
resumed run finds its data and metrics from any directory, and one damaged file leaves
the run's other checkpoints whole and choosable."""
from __future__ import annotations

import json
import os

import numpy as np
from cli_helpers import TINY_GPT, gpt, mnist

import zero
from zero.cli.checkpoints import CheckpointSet

CKPT = "checkpoint.safetensors"


def _train(data, out, *extra) -> int:
    return gpt("train", "--data", data, "--out", out, *TINY_GPT, "--sample-tokens", 0, *extra)


# -- item 3: --overwrite deletes only the run's own files -------------------------------------


def test_neighbours_named_like_numbered_checkpoints_are_not_the_run_s(tiny_mnist, tmp_path, capsys):
    models = tmp_path / "m"
    models.mkdir()
    neighbours = {name: os.urandom(64) for name in ("mlp-1.safetensors", "mlp-3.safetensors", "mlp-2-old.safetensors")}
    for name, data in neighbours.items():
        (models / name).write_bytes(data)
    save = ["--data", tiny_mnist, "--epochs", 1, "--batch-size", 32, "--hidden", 8,
            "--save", models / "mlp.safetensors"]
    assert mnist(*save) == 0                            # they are not checkpoints of this run: no --overwrite needed
    assert mnist(*save, "--overwrite") == 0             # --overwrite deletes this run's checkpoints only
    for name, data in neighbours.items():
        assert (models / name).read_bytes() == data, name
    assert sorted(p.name for p in models.iterdir() if p.name.startswith("mlp")) == sorted(
        [*neighbours, "mlp.safetensors", "mlp-000008.safetensors", "mlp-best.safetensors"])

    # a file the run did not write, where it would write one, is refused before any work
    (models / "mine").mkdir()
    for name in ("mlp-best.safetensors", "mlp-000016.safetensors"):
        (models / "mine" / name).write_bytes(b"a user's own file")
        capsys.readouterr()
        save[-1] = models / "mine" / "mlp.safetensors"
        assert mnist(*save, "--overwrite") == 2
        assert f"{name} sit(s) where this run writes its checkpoints" in capsys.readouterr().err
        assert (models / "mine" / name).read_bytes() == b"a user's own file"
        (models / "mine" / name).unlink()


def test_overwrite_deletes_every_checkpoint_the_run_wrote(prepared, tmp_path):
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 6, "--eval-interval", 2, "--keep-checkpoints", 5) == 0
    written = CheckpointSet(run / CKPT).existing()
    assert len(written) == 5                            # latest, best, steps 2, 4, 6
    assert _train(prepared, run, "--steps", 1, "--overwrite") == 0
    assert [p.name for p in CheckpointSet(run / CKPT).existing()] == [CKPT, "checkpoint-best.safetensors",
                                                                    "checkpoint-000001.safetensors"]


# -- item 13: separate files, and --resume STEP|best|PATH --------------------------------------


def test_a_damaged_latest_leaves_the_numbered_checkpoints_whole_and_resumable(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 6, "--eval-interval", 3) == 0
    latest = bytearray((run / CKPT).read_bytes())
    latest[len(latest) // 2] ^= 0xFF                     # one flipped byte in the tensors' data
    latest[:8] = (10**9).to_bytes(8, "little")           # and a header length that cannot be
    (run / CKPT).write_bytes(bytes(latest))
    assert zero.load(run / "checkpoint-000006.safetensors")["step"] == 6   # the numbered file is whole
    capsys.readouterr()
    assert _train(prepared, run, "--steps", 8, "--resume") == 2
    err = capsys.readouterr().err
    assert "this run's other checkpoints: best, 3, 6 (--resume WHICH)" in err, err
    assert _train(prepared, run, "--steps", 8, "--resume", "6") == 0
    assert "resumed from" in capsys.readouterr().out
    assert zero.load(run / CKPT)["step"] == 8


def test_resume_goes_back_to_an_older_step_and_rotation_follows_the_new_line(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert _train(prepared, run, "--steps", 6, "--eval-interval", 2, "--keep-checkpoints", 3) == 0
    assert _train(prepared, run, "--steps", 8, "--eval-interval", 2, "--keep-checkpoints", 3, "--resume", "2") == 0
    assert f"resumed from {run / 'checkpoint-000002.safetensors'} after step 2" in capsys.readouterr().out
    # written in order: 2, 4, 6, then (from step 2 again) 4, 6, 8: the newest three are the new line's
    assert [s for s, _ in CheckpointSet(run / CKPT).numbered_files()] == [4, 6, 8]
    assert zero.load(run / CKPT)["step"] == 8


def test_resume_best_and_a_path_and_what_is_refused(prepared, tmp_path, capsys):
    run, other = tmp_path / "run", tmp_path / "other"
    assert _train(prepared, run, "--steps", 4, "--eval-interval", 2) == 0
    assert _train(prepared, run, "--steps", 6, "--resume", "best") == 0
    assert _train(prepared, other, "--steps", 2) == 0
    capsys.readouterr()
    assert _train(prepared, other, "--steps", 6, "--resume", run / "checkpoint-000004.safetensors") == 2
    assert "not one of" in capsys.readouterr().err      # other holds a run of its own
    assert _train(prepared, tmp_path / "new", "--steps", 6, "--resume", run / "checkpoint-000004.safetensors") == 0
    assert _train(prepared, run, "--steps", 9, "--resume", "5") == 2
    assert "no checkpoint checkpoint-000005.safetensors" in capsys.readouterr().err


# -- item 4: a prepared directory is whole or refused ------------------------------------------


def test_a_preparation_cut_half_way_is_refused_by_train(tmp_path, capsys, monkeypatch):
    first, second = tmp_path / "a.txt", tmp_path / "b.txt"
    first.write_text("abcabcabc " * 60, encoding="utf-8")
    second.write_text("xyz? " * 60, encoding="utf-8")
    data = tmp_path / "d"
    assert gpt("prepare", first, "--out", data, "--tokenizer", "char") == 0

    import zero.data.text as text

    writes = []

    def full_disk(path):  # the disk fills after the vocabulary is written
        writes.append(path)
        if len(writes) > 1:
            raise OSError(28, "No space left on device")
        return real_write(path)

    real_write = text.atomic_write
    monkeypatch.setattr(text, "atomic_write", full_disk)
    assert gpt("prepare", second, "--out", data, "--tokenizer", "char") == 2
    monkeypatch.undo()
    assert json.loads((data / "vocab.txt").read_text().splitlines()[0]) == " "  # the new vocabulary ...
    capsys.readouterr()
    assert _train(data, tmp_path / "run", "--steps", 2) == 2                   # ... with the old ids: refused
    assert "no meta.json, so its preparation did not finish" in capsys.readouterr().err
    assert gpt("prepare", second, "--out", data, "--tokenizer", "char") == 0
    assert _train(data, tmp_path / "run", "--steps", 2) == 0


def test_a_token_file_swapped_in_from_another_preparation_is_refused(prepared, tmp_path, capsys):
    ids = np.fromfile(prepared / "train.bin", dtype=json.loads((prepared / "meta.json").read_text())["token_dtype"])
    (prepared / "train.bin").write_bytes(ids[::-1].tobytes())                   # same size, other contents
    assert _train(prepared, tmp_path / "run", "--steps", 2) == 2
    assert "train.bin: not the file meta.json describes" in capsys.readouterr().err


# -- item 5: a resume from another working directory -------------------------------------------


def test_resume_from_another_directory_reads_the_same_data_and_metrics(prepared, tmp_path, monkeypatch):
    start = tmp_path / "start"
    start.mkdir()
    (start / "d").symlink_to(prepared)
    monkeypatch.chdir(start)
    assert _train("d", "run", "--steps", 4, "--eval-interval", 2, "--metrics", "m.jsonl") == 0
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    assert gpt("train", "--out", start / "run", "--steps", 6, "--resume") == 0
    steps = [json.loads(line)["step"] for line in (start / "m.jsonl").read_text().splitlines()]
    assert steps == [1, 2, 3, 4, 5, 6] and list(elsewhere.iterdir()) == []




# -- item 12: a full disk mid-run says what the run still has -----------------------------------


def test_a_checkpoint_the_disk_refuses_names_the_last_good_one(prepared, tmp_path, capsys, monkeypatch):
    import zero.cli.checkpoints as checkpoints
    from zero.files import not_written

    saves, real_save = [], checkpoints.save

    def full_disk_after_one(state, path):
        saves.append(path)
        if len(saves) > 1:
            raise not_written(str(path), OSError(28, "No space left on device"), False)
        return real_save(state, path)

    monkeypatch.setattr(checkpoints, "save", full_disk_after_one)
    run = tmp_path / "run"
    capsys.readouterr()
    assert _train(prepared, run, "--steps", 4, "--eval-interval", 2) == 2
    err = capsys.readouterr().err.strip()
    assert len(err.splitlines()) == 1 and "checkpoint-000004.safetensors: not written (No space left" in err
    assert f"the last good checkpoint is {run / CKPT} (step 2)" in err
    assert zero.load(run / CKPT)["step"] == 2
