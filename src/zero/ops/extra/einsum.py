"""``einsum``: products and sums written as index equations, ``"bij,bjk->bik"``.

Each letter names a dimension. A letter on every side of a product that is kept in the
output is a *batch* dimension, one that is dropped is *contracted* (summed over), one
that only one operand has and the output keeps is a *free* dimension of that operand.
The equation is computed with the ops that already have a backward:

    one operand      sum over the letters the output drops, then permute
    two operands     for each operand, sum away the letters nobody else needs, then
                     permute to (batch, free, contracted) and reshape to 3-D, so that
                     one batched matmul does the products and the contraction:
                     (B, M, K) @ (B, K, N) -> (B, M, N), reshaped and permuted to the output
    more             two at a time, left to right

``...`` stands for the same leading dimensions (broadcast) in every operand. Without
``->`` the output is every letter that appears once, in alphabetical order (NumPy's and
PyTorch's rule). A letter repeated inside one operand (``"ii->i"``, ``"...ii->..."``) takes
that operand's diagonal first (a view), as in PyTorch.
"""
from __future__ import annotations

import math
import string
from collections.abc import Sequence

from ...errors import ShapeError, describe
from ...tensors.tensor import Tensor
from ..matmul import matmul
from .linalg import diagonal

_ELLIPSIS_LETTERS = string.ascii_uppercase[::-1]  # stand-ins for "...", never in a user's equation of lowercase


def einsum(equation: str, *operands: Tensor | list[Tensor] | tuple[Tensor, ...]) -> Tensor:
    if len(operands) == 1 and isinstance(operands[0], (list, tuple)):
        operands = tuple(operands[0])
    tensors = [t for t in operands if isinstance(t, Tensor)]
    if not tensors or len(tensors) != len(operands):
        raise TypeError(f"einsum: expected tensors after the equation, got {[describe(t) for t in operands]}")
    inputs, output = _parse(equation.replace(" ", ""), tensors)
    sizes: dict[str, int] = {}
    for k, (letters, t) in enumerate(zip(inputs, tensors)):
        while len(set(letters)) != len(letters):   # a repeated letter: the diagonal, appended last
            letter = next(c for c in letters if letters.count(c) > 1)
            i = letters.index(letter)
            j = letters.index(letter, i + 1)
            if t.shape[i] != t.shape[j]:
                raise ShapeError(f"einsum: the repeated letter {letter!r} of {equation!r} names dimensions of "
                                 f"sizes {t.shape[i]} and {t.shape[j]} in {describe(t)}; a diagonal needs "
                                 "equal sizes")
            t = diagonal(t, 0, i, j)
            letters = letters[:i] + letters[i + 1:j] + letters[j + 1:] + letter
        inputs[k], tensors[k] = letters, t
        for letter, n in zip(letters, t.shape):
            known = sizes.setdefault(letter, n)
            if known != n and 1 not in (known, n):
                raise ShapeError(f"einsum: dimension {letter!r} has sizes {known} and {n} in {equation!r} "
                                 f"(operands {', '.join(describe(t) for t in tensors)})")
            sizes[letter] = n if known == 1 else known  # a size-1 dimension broadcasts
    terms = list(zip(inputs, tensors))
    letters, result = terms[0]
    for k in range(1, len(terms)):
        later = set(output).union(*(set(ls) for ls, _ in terms[k + 1:]))
        letters, result = _product(letters, result, *terms[k], later, sizes)
    dropped = tuple(i for i, letter in enumerate(letters) if letter not in output)
    if dropped:
        result = result.sum(dropped)
        letters = "".join(letter for letter in letters if letter in output)
    result = result.expand(tuple(sizes[letter] for letter in letters)) if letters else result
    return result.permute(tuple(letters.index(letter) for letter in output)) if output else result


def _parse(equation: str, operands: Sequence[Tensor]) -> tuple[list[str], str]:
    output: str | None
    if "->" in equation:
        left, output = equation.split("->")
    else:
        left, output = equation, None
    inputs = left.split(",")
    if len(inputs) != len(operands):
        raise ShapeError(f"einsum: {equation!r} names {len(inputs)} operands, {len(operands)} were given")
    spread = max((t.ndim - len(s.replace("...", "")) for s, t in zip(inputs, operands) if "..." in s), default=0)
    stand_in = _ELLIPSIS_LETTERS[:spread][::-1]
    expanded = []
    for letters, t in zip(inputs, operands):
        if "..." in letters:
            extra = t.ndim - len(letters.replace("...", ""))
            letters = letters.replace("...", stand_in[spread - extra:] if extra else "")
        if not all(c.isalpha() for c in letters) or len(letters) != t.ndim:
            raise ShapeError(f"einsum: {letters!r} does not name the {t.ndim} dimensions of {describe(t)}")
        expanded.append(letters)
    if output is None:
        counts = {c: "".join(expanded).count(c) for c in "".join(expanded)}
        output = stand_in + "".join(sorted(c for c, n in counts.items() if n == 1 and c not in stand_in))
    else:
        output = output.replace("...", stand_in)
        missing = [c for c in output if c not in "".join(expanded)]
        if missing or len(set(output)) != len(output):
            raise ShapeError(f"einsum: the output of {equation!r} names a letter no operand has or one twice")
    return expanded, output


def _product(left: str, a: Tensor, right: str, b: Tensor, later: set[str],
             sizes: dict[str, int]) -> tuple[str, Tensor]:
    """a (letters ``left``) times b (``right``), summed over what nothing ``later`` needs."""
    a, left = _sum_away(a, left, set(right) | later)
    b, right = _sum_away(b, right, set(left) | later)
    batch = [c for c in left if c in right and c in later]
    contracted = [c for c in left if c in right and c not in later]
    free_a = [c for c in left if c not in right]
    free_b = [c for c in right if c not in left]
    size = lambda letters: math.prod(sizes[c] for c in letters)  # noqa: E731
    a3 = _arranged(a, left, batch + free_a + contracted, sizes).reshape(size(batch), size(free_a), size(contracted))
    b3 = _arranged(b, right, batch + contracted + free_b, sizes).reshape(size(batch), size(contracted), size(free_b))
    out = matmul(a3, b3)                                         # (B, M, N)
    letters = "".join(batch + free_a + free_b)
    return letters, out.reshape(tuple(sizes[c] for c in letters))


def _sum_away(t: Tensor, letters: str, needed: set[str]) -> tuple[Tensor, str]:
    unused = tuple(i for i, c in enumerate(letters) if c not in needed)
    if not unused:
        return t, letters
    return t.sum(unused), "".join(c for c in letters if c in needed)


def _arranged(t: Tensor, letters: str, order: list[str], sizes: dict[str, int]) -> Tensor:
    """``t`` permuted to the letters' ``order``, broadcast dimensions expanded."""
    t = t.permute(tuple(letters.index(c) for c in order)) if order else t
    return t.expand(tuple(sizes[c] for c in order)) if order else t
