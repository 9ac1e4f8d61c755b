"""How tensors print: PyTorch's ``set_printoptions`` for ``repr(tensor)``.

    precision   digits after the point (4)
    threshold   more elements than this print summarised, with "..." (200)
    edgeitems   elements shown at each end of a summarised dimension (3)
    linewidth   characters per line before wrapping (80)
    sci_mode    True: always scientific notation, False: never, None: NumPy's choice
    profile     "default", "short" (precision 2, 2 edge items) or "full" (never summarised)

(Zero's default threshold is 200 elements where PyTorch's is 1000: a tensor printed in a
training log stays short.)
"""
from __future__ import annotations

import math
from typing import Any

DEFAULTS: dict[str, Any] = {"precision": 4, "threshold": 200, "edgeitems": 3, "linewidth": 80, "sci_mode": None}
PROFILES: dict[str, dict[str, Any]] = {
    "default": DEFAULTS,
    "short": dict(DEFAULTS, precision=2, edgeitems=2),
    "full": dict(DEFAULTS, threshold=math.inf),
}
_options: dict[str, Any] = dict(DEFAULTS)


def set_printoptions(precision: int | None = None, threshold: float | None = None, edgeitems: int | None = None,
                     linewidth: int | None = None, profile: str | None = None, sci_mode: bool | None = None) -> None:
    """Set how tensors print; a profile first resets every option, the others then apply."""
    if profile is not None:
        if profile not in PROFILES:
            raise ValueError(f"set_printoptions: profile must be one of {sorted(PROFILES)}, got {profile!r}")
        _options.update(PROFILES[profile])
    for name, value in (("precision", precision), ("threshold", threshold), ("edgeitems", edgeitems),
                        ("linewidth", linewidth)):
        if value is not None:
            if not isinstance(value, (int, float)) or isinstance(value, bool) or value < 0:
                raise ValueError(f"set_printoptions: {name} must be a non-negative number, got {value!r}")
            _options[name] = value
    _options["sci_mode"] = sci_mode


def get_printoptions() -> dict[str, Any]:
    return dict(_options)


def array2string_options() -> dict[str, Any]:
    """The options as ``numpy.array2string`` keywords."""
    precision = int(_options["precision"])
    threshold = _options["threshold"]
    options: dict[str, Any] = {"precision": precision, "edgeitems": int(_options["edgeitems"]),
                               "max_line_width": int(_options["linewidth"]),
                               "threshold": 2 ** 62 if math.isinf(threshold) else int(threshold)}  # (an int)
    if _options["sci_mode"] is True:
        options["formatter"] = {"float_kind": lambda v: f"{v:.{precision}e}"}
    elif _options["sci_mode"] is False:
        options["formatter"] = {"float_kind": lambda v: f"{v:.{precision}f}"}
    return options
