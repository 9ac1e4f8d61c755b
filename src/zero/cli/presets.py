"""``zero gpt train --preset NAME``: named sets of defaults for the GPT job.

A preset fills in each option of ``OPTIONS`` the command line does not give (on
--resume, the checkpoint's settings come first, then the preset). To retune one,
change its numbers here and measure it again: ``MEASURED`` is what the help and
the README quote, measured with ``zero gpt train --preset NAME`` on the default
corpus (Python's documentation topics, 465,126 characters) on the project's 2-core
CPU, first run's kernel compilation excluded: the cpu preset with the default BPE of
512 tokens, the others on characters (``--tokenizer char``, a vocabulary of 103;
measured before BPE became the default).
"""
from __future__ import annotations

from ..errors import UsageError

DEFAULT = "cpu"

# The options a preset sets, in the order the help lists them.
OPTIONS = ("n_layer", "n_head", "n_embd", "block_size", "batch_size", "steps", "dropout", "lr", "min_lr", "warmup",
           "eval_interval", "eval_iters", "log_interval", "sample_tokens")

PRESETS: dict[str, dict] = {
    # Seconds: for tests and for trying the commands. It learns little.
    "tiny": dict(n_layer=1, n_head=2, n_embd=16, block_size=16, batch_size=4, steps=50, dropout=0.1, lr=1e-3,
                 min_lr=1e-4, warmup=2, eval_interval=25, eval_iters=2, log_interval=10, sample_tokens=20),
    # The default: about a minute on the project's 2 cores (600 steps of ~95 ms, measured
    # alone: 1 min 4 s with the default BPE), a sample that looks like its text.
    "cpu": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=32, steps=600, dropout=0.0, lr=2e-3,
                min_lr=2e-4, warmup=50, eval_interval=150, eval_iters=20, log_interval=50, sample_tokens=300),
    # nanoGPT's configuration for Shakespeare on a CPU (its README), step for step.
    "shakespeare-cpu": dict(n_layer=4, n_head=4, n_embd=128, block_size=64, batch_size=12, steps=2000, dropout=0.0,
                            lr=1e-3, min_lr=1e-4, warmup=100, eval_interval=250, eval_iters=20, log_interval=50,
                            sample_tokens=300),
    # The book's configuration and its CPU smoke run (30 steps: it does not get past the warm-up).
    "book": dict(n_layer=6, n_head=6, n_embd=384, block_size=256, batch_size=64, steps=30, dropout=0.2, lr=1e-3,
                 min_lr=1e-4, warmup=100, eval_interval=500, eval_iters=20, log_interval=10, sample_tokens=200),
}

# What each costs: wall time of the whole job and the validation loss it ends at (see above).
MEASURED: dict[str, str] = {
    "tiny": "seconds",
    "cpu": "val loss 2.9562 (1.884 bits/char; BPE 512); 1 min 4 s alone (~95 ms/step)",
    "shakespeare-cpu": "val loss 1.4140 (characters); 1 min 49 s alone (44 ms/step)",
    "book": "val loss 2.4890 (characters; still in the warm-up); 4 min 38 s alone (7.1 s/step)",
}

VOCABULARY = 512  # the vocabulary the help's parameter counts assume (the default BPE's)


def apply(args) -> None:
    """Each preset option left unset (None) takes the value of ``args.preset``."""
    if args.preset not in PRESETS:
        raise UsageError(f"--preset must be one of {', '.join(PRESETS)}, got {args.preset!r}")
    for name, value in PRESETS[args.preset].items():
        if getattr(args, name, None) is None:
            setattr(args, name, value)


def parameters(settings: dict, vocabulary: int = VOCABULARY) -> int:
    """``zero.models.GPT``'s parameter count for these settings: token and position embeddings,
    per layer two layer norms, the attention's qkv and projection and the FFN (12 C² + 13 C),
    and the final layer norm; the output layer is tied to the token embedding."""
    C = settings["n_embd"]
    return (vocabulary + settings["block_size"]) * C + settings["n_layer"] * (12 * C * C + 13 * C) + 2 * C


def option_help(name: str) -> str:
    """The help's note on an option a preset sets: the default preset's value (the table in the
    help's epilog has the others)."""
    return f"(default: {_shown(PRESETS[DEFAULT][name])} with --preset {DEFAULT})"


def _shown(value) -> str:
    return f"{value:g}" if isinstance(value, float) else str(value)


def _count(n: int) -> str:
    return f"{n / 1e6:.1f} M" if n >= 1e6 else f"{n / 1e3:.0f} K"


def table() -> str:
    """The presets side by side, for the help's epilog."""
    names = list(PRESETS)
    rows = [("", *names)]
    rows += [("--" + option.replace("_", "-"), *(_shown(PRESETS[n][option]) for n in names)) for option in OPTIONS]
    rows.append((f"parameters ({VOCABULARY} chars)", *(_count(parameters(PRESETS[n])) for n in names)))
    width = [max(len(row[i]) for row in rows) for i in range(len(rows[0]))]
    lines = ["  " + "  ".join(cell.rjust(width[i]) if i else cell.ljust(width[i]) for i, cell in enumerate(row))
             for row in rows]
    lines.append("")
    lines += [f"  {name:<{width[0]}}  {MEASURED[name]}" for name in names]
    return "\n".join(lines)
