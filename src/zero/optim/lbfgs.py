"""L-BFGS, PyTorch's: a quasi-Newton method that keeps the last ``history_size`` steps and
gradient changes to apply an approximate inverse Hessian (the two-loop recursion).

``step(closure)`` runs up to ``max_iter`` iterations (``max_eval`` evaluations of the
closure, which must clear the gradients, compute the loss, call backward and return the
loss). Each iteration moves along d = −H g: by ``lr`` (the first iteration of a run:
min(1, 1 / ‖g‖₁) · lr), or by the step a strong-Wolfe line search finds
(``line_search_fn="strong_wolfe"``: a bracketing phase, then a zoom by cubic interpolation,
with c1 = 1e-4 and c2 = 0.9). It stops early when the largest gradient component is at most
``tolerance_grad``, or when the step or the change of the loss is below ``tolerance_change``.

One parameter group only. All parameters are treated as one flat vector (on the
parameters' device); the scalars are Python floats. The state (``func_evals``, ``n_iter``,
``d``, ``t``, ``old_dirs``, ``old_stps``, ``ro``, ``H_diag``, ``prev_flat_grad``, ``prev_loss``,
``al``) is PyTorch's and lives under the first parameter.
"""
from __future__ import annotations

import math

from ..grad_mode import enable_grad, no_grad
from ..ops.joining import cat
from .optimizer import Optimizer


def _cubic_minimum(x1: float, f1: float, g1: float, x2: float, f2: float, g2: float,
                   bounds: tuple | None = None) -> float:
    """The minimiser of the cubic through (x1, f1, f'=g1) and (x2, f2, f'=g2), kept within
    ``bounds`` (default: between x1 and x2); the middle of the bounds when the cubic has none."""
    low, high = bounds if bounds is not None else (min(x1, x2), max(x1, x2))
    d1 = g1 + g2 - 3 * (f1 - f2) / (x1 - x2)
    discriminant = d1 ** 2 - g1 * g2
    if discriminant < 0:
        return (low + high) / 2.0
    d2 = math.sqrt(discriminant)
    if x1 <= x2:
        point = x2 - (x2 - x1) * ((g2 + d2 - d1) / (g2 - g1 + 2 * d2))
    else:
        point = x1 - (x1 - x2) * ((g1 + d2 - d1) / (g1 - g2 + 2 * d2))
    return min(max(point, low), high)


def _strong_wolfe(evaluate, t: float, d, f: float, g, gtd: float, c1: float = 1e-4, c2: float = 0.9,
                  tolerance_change: float = 1e-9, max_ls: int = 25):
    """A step t along ``d`` meeting the strong Wolfe conditions (sufficient decrease, and
    |g(t)·d| ≤ c2 |g(0)·d|), or the best point of the bracket found. ``evaluate(t)`` gives
    (loss, flat gradient) at x + t d. Returns (loss, gradient, t, evaluations)."""
    d_norm = float(d.abs().max())
    f_new, g_new = evaluate(t)
    evaluations = 1
    gtd_new = float(g_new.dot(d))
    t_prev, f_prev, g_prev, gtd_prev = 0.0, f, g.clone(), gtd
    done = False
    ls_iter = 0
    bracket: list = []
    bracket_f: list = []
    bracket_g: list = []
    bracket_gtd: list = []
    while ls_iter < max_ls:   # bracketing: grow t until an interval holds a suitable point
        overshot = f_new > f + c1 * t * gtd or (ls_iter > 1 and f_new >= f_prev)
        if not overshot and abs(gtd_new) <= -c2 * gtd:
            bracket, bracket_f, bracket_g = [t], [f_new], [g_new]
            done = True
            break
        if overshot or gtd_new >= 0:
            bracket, bracket_f = [t_prev, t], [f_prev, f_new]
            bracket_g, bracket_gtd = [g_prev, g_new.clone()], [gtd_prev, gtd_new]
            break
        previous = t
        t = _cubic_minimum(t_prev, f_prev, gtd_prev, t, f_new, gtd_new, bounds=(t + 0.01 * (t - t_prev), t * 10))
        t_prev, f_prev, g_prev, gtd_prev = previous, f_new, g_new.clone(), gtd_new
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
    if ls_iter == max_ls:
        bracket, bracket_f, bracket_g = [0, t], [f, f_new], [g, g_new]
    insufficient_progress = False
    low, high = (0, 1) if bracket_f[0] <= bracket_f[-1] else (1, 0)
    while not done and ls_iter < max_ls:   # zoom: shrink the bracket around the point
        if abs(bracket[1] - bracket[0]) * d_norm < tolerance_change:
            break
        t = _cubic_minimum(bracket[0], bracket_f[0], bracket_gtd[0], bracket[1], bracket_f[1], bracket_gtd[1])
        top, bottom = max(bracket), min(bracket)
        margin = 0.1 * (top - bottom)
        if min(top - t, t - bottom) < margin:   # too near an end: move it inside, unless that is new
            if insufficient_progress or t >= top or t <= bottom:
                t = top - margin if abs(t - top) < abs(t - bottom) else bottom + margin
                insufficient_progress = False
            else:
                insufficient_progress = True
        else:
            insufficient_progress = False
        f_new, g_new = evaluate(t)
        evaluations += 1
        gtd_new = float(g_new.dot(d))
        ls_iter += 1
        if f_new > f + c1 * t * gtd or f_new >= bracket_f[low]:
            bracket[high], bracket_f[high], bracket_g[high], bracket_gtd[high] = t, f_new, g_new.clone(), gtd_new
            low, high = (0, 1) if bracket_f[0] <= bracket_f[1] else (1, 0)
        else:
            if abs(gtd_new) <= -c2 * gtd:
                done = True
            elif gtd_new * (bracket[high] - bracket[low]) >= 0:
                bracket[high], bracket_f[high] = bracket[low], bracket_f[low]
                bracket_g[high], bracket_gtd[high] = bracket_g[low], bracket_gtd[low]
            bracket[low], bracket_f[low], bracket_g[low], bracket_gtd[low] = t, f_new, g_new.clone(), gtd_new
    return bracket_f[low], bracket_g[low], bracket[low], evaluations


class LBFGS(Optimizer):
    def __init__(self, params, lr: float = 1, max_iter: int = 20, max_eval: int | None = None,
                 tolerance_grad: float = 1e-7, tolerance_change: float = 1e-9, history_size: int = 100,
                 line_search_fn: str | None = None):
        if not 0.0 <= lr:
            raise ValueError(f"Invalid learning rate: {lr}")
        if max_eval is None:
            max_eval = max_iter * 5 // 4
        super().__init__(params, dict(lr=lr, max_iter=max_iter, max_eval=max_eval, tolerance_grad=tolerance_grad,
                                      tolerance_change=tolerance_change, history_size=history_size,
                                      line_search_fn=line_search_fn))
        if len(self.param_groups) != 1:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        self._params = self.param_groups[0]["params"]

    def add_param_group(self, param_group: dict) -> None:
        if self.param_groups:
            raise ValueError("LBFGS doesn't support per-parameter options (parameter groups)")
        super().add_param_group(param_group)

    # -- the flat view of the parameters ---------------------------------------------------------
    def _flat_grad(self):
        return cat([(p.grad if p.grad is not None else p.new_zeros(p.shape)).reshape(-1) for p in self._params])

    def _move(self, step: float, direction) -> None:
        offset = 0
        for p in self._params:
            n = p.numel()
            p.add_(direction[offset:offset + n].reshape(p.shape) * step)
            offset += n

    def _evaluate_along(self, closure, start: list, t: float, d):
        """(loss, flat gradient) at start + t d; the parameters are put back at ``start``."""
        self._move(t, d)
        with enable_grad():
            loss = float(closure())
        flat_grad = self._flat_grad()
        for p, x in zip(self._params, start):
            p.copy_(x)
        return loss, flat_grad

    def step(self, closure):  # type: ignore[override]
        """One run of up to ``max_iter`` iterations; ``closure`` is required. Returns the loss
        the first evaluation gave."""
        if closure is None:
            raise RuntimeError("LBFGS requires a closure: step(closure), the closure returning the loss")
        with no_grad():
            return self._run(closure)

    def _run(self, closure):
        group = self.param_groups[0]
        lr, max_iter, max_eval = group["lr"], group["max_iter"], group["max_eval"]
        tolerance_grad, tolerance_change = group["tolerance_grad"], group["tolerance_change"]
        line_search, history_size = group["line_search_fn"], group["history_size"]
        if line_search not in (None, "strong_wolfe"):
            raise RuntimeError("only 'strong_wolfe' is supported")
        state = self.state[self._params[0]]
        state.setdefault("func_evals", 0)
        state.setdefault("n_iter", 0)
        with enable_grad():
            first_loss = closure()
        loss = float(first_loss)
        evaluations = 1
        state["func_evals"] += 1
        flat_grad = self._flat_grad()
        if float(flat_grad.abs().max()) <= tolerance_grad:
            return first_loss
        d, t = state.get("d"), state.get("t")
        old_dirs, old_stps, ro = state.get("old_dirs"), state.get("old_stps"), state.get("ro")
        H_diag = state.get("H_diag")
        prev_flat_grad, prev_loss = state.get("prev_flat_grad"), state.get("prev_loss")
        n_iter = 0
        while n_iter < max_iter:
            n_iter += 1
            state["n_iter"] += 1
            if state["n_iter"] == 1:
                d = -flat_grad
                old_dirs, old_stps, ro, H_diag = [], [], [], 1.0
            else:
                y = flat_grad - prev_flat_grad
                s = d * t
                ys = float(y.dot(s))
                if ys > 1e-10:   # keep the pair only where the curvature is positive
                    if len(old_dirs) == history_size:
                        old_dirs.pop(0)
                        old_stps.pop(0)
                        ro.pop(0)
                    old_dirs.append(y)
                    old_stps.append(s)
                    ro.append(1.0 / ys)
                    H_diag = ys / float(y.dot(y))
                if "al" not in state:
                    state["al"] = [None] * history_size
                al = state["al"]
                q = -flat_grad   # the two-loop recursion: d = −H g
                for i in range(len(old_dirs) - 1, -1, -1):
                    al[i] = float(old_stps[i].dot(q)) * ro[i]
                    q = q - old_dirs[i] * al[i]
                d = r = q * H_diag
                for i in range(len(old_dirs)):
                    be_i = float(old_dirs[i].dot(r)) * ro[i]
                    r.add_(old_stps[i] * (al[i] - be_i))
            prev_flat_grad = flat_grad.clone()
            prev_loss = loss
            t = min(1.0, 1.0 / float(flat_grad.abs().sum())) * lr if state["n_iter"] == 1 else lr
            gtd = float(flat_grad.dot(d))
            if gtd > -tolerance_change:   # not a descent direction any more
                break
            used = 0
            converged = False
            if line_search is not None:
                start = [p.clone() for p in self._params]
                loss, flat_grad, t, used = _strong_wolfe(
                    lambda step, start=start, d=d: self._evaluate_along(closure, start, step, d),
                    t, d, loss, flat_grad, gtd, max_ls=max_eval - evaluations)
                self._move(t, d)
                converged = float(flat_grad.abs().max()) <= tolerance_grad
            else:
                self._move(t, d)
                if n_iter != max_iter:   # (no evaluation after the last move: the next step makes it)
                    with enable_grad():
                        loss = float(closure())
                    flat_grad = self._flat_grad()
                    converged = float(flat_grad.abs().max()) <= tolerance_grad
                    used = 1
            evaluations += used
            state["func_evals"] += used
            if (n_iter == max_iter or evaluations >= max_eval or converged
                    or float((d * t).abs().max()) <= tolerance_change or abs(loss - prev_loss) < tolerance_change):
                break
        state.update(d=d, t=t, old_dirs=old_dirs, old_stps=old_stps, ro=ro, H_diag=H_diag,
                     prev_flat_grad=prev_flat_grad, prev_loss=prev_loss)
        return first_loss
