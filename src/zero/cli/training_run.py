"""What both training jobs hold for the life of a run, and the rules they share.

    with TrainingRun(job, checkpoints, ...) as run:      # lock, metrics, signal handlers; at the
                                                         # run's end, however it ends, its plot
        for step ...:
            loss, norm = run.check_step(done, loss, grad_norm)  # Diverged: exit status 3
            ...
            if run.checkpoint_due() or run.stop_requested:
                run.save(state, done, model.named_parameters(), val_loss)
            if run.stop_requested:
                return run.stop(done)                    # 130 (SIGINT) / 143 (SIGTERM)

Checkpoints are written at the job's own points (each --eval-interval, each
epoch, the end), every --checkpoint-minutes of wall-clock time (default 10)
and when a stop signal arrives. Before a checkpoint is written the model's
parameters are checked: a model holding inf or NaN is never saved (Diverged),
so the latest checkpoint on disk is always a good one -- the one a
divergence message names.
"""
from __future__ import annotations

import sys
import time
from collections.abc import Callable

from ..errors import FileWriteError
from .checkpoints import CheckpointSet
from .common import MetricsFile
from .plot import write_plot_beside
from .run_control import (Diverged, StopSignals, StoppedNow, TrainerLock, arithmetic_failure, check_finite,
                          nonfinite_tensors, read_step_values, signal_name)


class TrainingRun:
    def __init__(self, job: str, checkpoints: CheckpointSet | None, *, overwrite: bool, checkpoint_minutes: float,
                 metrics: str | None, metrics_key: str, metrics_after: int | None,
                 resumed_step: int | None = None, best_val_loss: float | None = None, report: bool = True,
                 say: Callable[[str], None] = print, locked: bool = False):
        """``checkpoints`` None: the run saves nothing (``zero mnist`` without --save).
        ``metrics_after``: on --resume, the last ``metrics_key`` value (step, epoch) whose
        records the metrics file keeps; None starts it afresh. ``resumed_step``: the step of
        the checkpoint a resumed run continues, ``best_val_loss`` the best it had seen.
        ``say`` prints a line (above the progress bar): each checkpoint is announced.
        ``locked``: the job took the run's lock itself, before its first line (the jobs'
        ``check_arguments``), and keeps it; the run does not take it again."""
        self.job, self.checkpoints, self.overwrite, self.say = job, checkpoints, overwrite, say
        self.report = report  # False: stop() says nothing (a rank other than 0 of a data-parallel job)
        self.metrics_path, self.metrics_key, self.metrics_after = metrics, metrics_key, metrics_after
        self.interval = checkpoint_minutes * 60.0
        self.best_val_loss = best_val_loss
        self.last_saved = resumed_step
        self.step = resumed_step or 0  # the last step done (the job keeps it up to date)
        self.signals = StopSignals()
        self.lock = TrainerLock(checkpoints.lock, str(checkpoints.latest.parent)) if checkpoints and not locked \
            else None
        self.metrics: MetricsFile | None = None
        self.plot: str | None = None  # after the run: the metrics' picture, or why there is none
        self.saved_at = time.monotonic()

    def __enter__(self) -> TrainingRun:
        if self.lock is not None:
            self.lock.__enter__()
        try:
            if self.overwrite and self.checkpoints is not None:
                self.checkpoints.remove_all()
            self.metrics = MetricsFile(self.metrics_path, self.metrics_key, self.metrics_after)
            self.signals.__enter__()
        except BaseException:
            self.__exit__(None, None, None)
            raise
        self.saved_at = time.monotonic()
        return self

    def __exit__(self, exc_type=None, exc=None, traceback=None) -> None:
        self.signals.__exit__()
        try:
            if self.metrics is not None:
                self.metrics.close()
                if exc_type is None or not issubclass(exc_type, (StoppedNow, KeyboardInterrupt)):
                    self._draw_plot(ended=exc_type is None and self.signals.signum is None)
        finally:
            if self.lock is not None:
                self.lock.__exit__()

    def _draw_plot(self, ended: bool) -> None:
        """The metrics' picture, at every end of a run that recorded some: a normal end (the
        summary names it: ``plot``), a stop signal, a divergence, an error (then a line says
        where it is). Not after a second signal, which asks to stop at once."""
        if not self.metrics_path or not self.report:
            return
        try:
            self.plot = write_plot_beside(self.metrics_path)
        except Exception as e:  # (the run's own end matters more than its picture)
            self.plot = f"none: {type(e).__name__}: {e}"
        if not ended and not self.plot.startswith("none:"):
            self.say(f"plot: {self.plot}")

    def write_metrics(self, record: dict, sync: bool = True) -> None:
        assert self.metrics is not None
        self.metrics.write(record, sync)

    # -- the divergence guard -----------------------------------------------------------------
    @property
    def last_good(self) -> str:
        if self.checkpoints is None:
            return "nothing was saved (no --save)"
        if self.last_saved is None:
            return "no checkpoint was written before it"
        return f"the last good checkpoint is {self.checkpoints.latest} (step {self.last_saved})"

    def check_step(self, step: int, loss, grad_norm=None) -> tuple[float, float | None]:
        """The step's loss and gradient norm as floats; Diverged if either is not finite."""
        loss_value, norm_value = read_step_values(loss, grad_norm)
        check_finite(step, loss_value, norm_value, self.last_good)
        return loss_value, norm_value

    def arithmetic_failure(self, step: int, error: ArithmeticError) -> Diverged:
        return arithmetic_failure(step, error, self.last_good)

    # -- checkpoints --------------------------------------------------------------------------
    @property
    def stop_requested(self) -> bool:
        return self.signals.signum is not None

    def checkpoint_due(self) -> bool:
        """True when --checkpoint-minutes have passed since the last checkpoint (0: never)."""
        return self.interval > 0 and time.monotonic() - self.saved_at >= self.interval

    def save(self, state: dict, step: int, parameters, val_loss: float | None = None):
        """Write ``state`` as the checkpoint of ``step`` (None without --save) after checking
        that ``parameters`` (name, tensor) are all finite."""
        self.saved_at = time.monotonic()
        if self.checkpoints is None:
            return None
        bad, checked = nonfinite_tensors(parameters)
        if bad:
            names = ", ".join(bad[:3]) + (" ..." if len(bad) > 3 else "")
            raise Diverged(f"step {step}: {len(bad)} of {checked} parameter tensors hold inf or NaN ({names}): "
                           "the run diverged and this model is not saved; "
                           f"{self.last_good} (try a lower --lr)")
        is_best = val_loss is not None and (self.best_val_loss is None or val_loss < self.best_val_loss)
        if is_best:
            self.best_val_loss = val_loss
        state["run"] = {"step": step, "val_loss": val_loss, "best_val_loss": self.best_val_loss}
        try:
            path = self.checkpoints.save(state, step, is_best=is_best)
        except FileWriteError as e:  # (a full disk): say what the run still has
            e.message = f"{e}; {self.last_good}"
            raise
        self.last_saved = step
        also = self.checkpoints.numbered(step).name + (f", {self.checkpoints.best.name}: the best so far" if is_best
                                                       else "")
        self.say(f"checkpoint: step {step} saved to {path} (also {also})")
        return path

    def stop(self, step: int) -> int:
        """After a stop signal (and the checkpoint): say where the run stands; the exit status."""
        signum = self.signals.signum
        assert signum is not None
        if self.checkpoints is None:
            where = "nothing saved (no --save)"
        else:
            where = f"checkpoint {self.checkpoints.latest} (step {self.last_saved}); continue with --resume"
        if self.report:
            print(f"zero {self.job}: {signal_name(signum)}: stopped after step {step}: {where}", file=sys.stderr,
                  flush=True)
        return self.signals.exit_status
