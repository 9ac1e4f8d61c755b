"""--preset: named defaults for `zero gpt train`, each overridden by any option given."""
import pytest
from cli_helpers import gpt

import zero
from zero.cli import presets
from zero.cli.gpt_train import check_arguments
from zero.cli.main import build_parser
from zero.models import GPT
from zero.models.gpt import GPTConfig


def _settled(tmp_path, *argv):
    args = build_parser().parse_args(["gpt", "train", "--out", str(tmp_path / "run"), *map(str, argv)])
    check_arguments(args)
    return args


def test_the_default_preset_is_cpu_and_the_book_preset_is_the_books(tmp_path):
    args = _settled(tmp_path)
    assert args.preset == "cpu"
    assert {name: getattr(args, name) for name in presets.OPTIONS} == presets.PRESETS["cpu"]
    book = _settled(tmp_path, "--preset", "book")
    assert (book.n_layer, book.n_head, book.n_embd, book.block_size, book.batch_size) == (6, 6, 384, 256, 64)


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_any_option_given_overrides_the_preset(tmp_path, name):
    args = _settled(tmp_path, "--preset", name, "--n-embd", 24, "--lr", 5e-4, "--dropout", 0)
    assert (args.n_embd, args.lr, args.dropout) == (24, 5e-4, 0.0)
    others = {k: v for k, v in presets.PRESETS[name].items() if k not in ("n_embd", "lr", "dropout")}
    assert {k: getattr(args, k) for k in others} == others


@pytest.mark.parametrize("name", list(presets.PRESETS))
def test_the_help_counts_parameters_as_the_model_does(name):
    settings = presets.PRESETS[name]
    model = GPT(GPTConfig(vocab_size=presets.VOCABULARY, **{k: settings[k] for k in
                                                             ("block_size", "n_layer", "n_head", "n_embd")}))
    assert presets.parameters(settings) == model.num_parameters()


def test_a_preset_trains_and_its_checkpoint_remembers_it(prepared, tmp_path):
    run = tmp_path / "run"
    assert gpt("train", "--preset", "tiny", "--data", prepared, "--out", run, "--steps", 3, "--n-embd", 8) == 0
    checkpoint = zero.load(run / "checkpoint.safetensors")
    assert checkpoint["config"]["model"]["n_embd"] == 8  # the option given
    assert checkpoint["config"]["model"]["n_layer"] == presets.PRESETS["tiny"]["n_layer"]  # the preset's
    assert checkpoint["config"]["train"]["preset"] == "tiny" and checkpoint["step"] == 3
    assert gpt("train", "--out", run, "--resume", "--steps", 5) == 0  # the checkpoint's preset and settings
    resumed = zero.load(run / "checkpoint.safetensors")
    assert resumed["step"] == 5 and resumed["config"]["train"]["preset"] == "tiny"
    assert resumed["config"]["model"]["n_embd"] == 8


def test_a_resumed_run_cannot_change_its_preset(prepared, tmp_path, capsys):
    run = tmp_path / "run"
    assert gpt("train", "--preset", "tiny", "--data", prepared, "--out", run, "--steps", 2) == 0
    capsys.readouterr()
    assert gpt("train", "--out", run, "--resume", "--steps", 4, "--preset", "cpu") == 2
    assert "was trained with --preset tiny; a resumed run cannot change it to cpu" in capsys.readouterr().err


def test_an_unknown_preset_lists_the_presets(capsys):
    assert gpt("train", "--preset", "huge") == 2
    err = capsys.readouterr().err
    assert "invalid choice: 'huge'" in err and all(name in err for name in presets.PRESETS)
