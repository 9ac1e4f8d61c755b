"""Frameworks timed in separate processes, taking turns: the protocol shared by
``kernels.py`` and ``train_step.py`` (long-lived workers), and the simpler one of a fresh
worker per round (``compare_fresh_processes``) that the layer benchmarks use.

Why separate processes: in one process PyTorch's OpenMP threads and OpenBLAS's threads
spin-wait after each call and steal each other's cores, so whichever runs second is
slowed by the first (measured on the 2-core machine: one tiny GPT step came out 1.45x,
1.82x or 3.2x PyTorch's time depending on how the two shared a process).

The protocol:

- The main script starts one long-lived worker process per framework
  (``python benchmarks/<script>.py --worker zero``, ``... --worker torch``), each with
  its own imports, thread pools and warm caches. It talks to them over pipes, one JSON
  object per line: a request on the worker's stdin, one reply on its stdout. Anything a
  worker prints goes to stderr, so stdout carries only replies.
- Only one worker computes at a time; the others block reading stdin. After each reply
  the main script waits ``SETTLE_SECONDS`` before it sends the next request, so the
  threads of the worker that just finished are asleep before the next one starts
  (measured with ``lost_cores`` after a NumPy GEMM: OpenBLAS's threads keep half a core
  busy for 0.05 s and are quiet by 0.1 s; PyTorch's OpenMP threads by 0.02 s).
- Round r runs every framework once per case, in the order A B for even r and B A for
  odd r, so a slow drift of the machine's load hits both alike; the tables quote the
  median over rounds of the per-round ratio.
- Other people's processes. The machine is shared, and a 2-thread OpenMP region (PyTorch's)
  stalls for a scheduler time slice (~8 ms measured, per parallel region) whenever another
  process holds one of the two cores, while a serial loop merely slows down. So every
  reply carries ``foreign``: the cores that processes other than the worker kept busy
  during the request, on average, from ``/proc/stat`` (all CPUs' busy time, in clock
  ticks) minus the worker's own CPU time (``time.process_time``, all its threads). The
  scripts wait for a quiet machine before a round (``wait_for_quiet``), repeat a
  measurement taken under foreign load, and report how many were. Before each round
  ``wait_for_quiet`` also probes for time the hypervisor takes away (``lost_cores``),
  which no counter inside the machine shows.
"""
from __future__ import annotations

import json
import os
import resource
import statistics
import subprocess
import sys
import time
import traceback
from collections.abc import Callable, Sequence

SETTLE_SECONDS = 0.15
CLOCK_TICKS = os.sysconf("SC_CLK_TCK") if hasattr(os, "sysconf") else 100


def busy_seconds() -> float | None:
    """CPU seconds spent busy by every process on every core since boot (None off Linux)."""
    try:
        with open("/proc/stat") as f:
            fields = [int(v) for v in f.readline().split()[1:]]
    except OSError:
        return None
    idle = fields[3] + fields[4]  # idle, iowait
    return (sum(fields[:8]) - idle) / CLOCK_TICKS


def lost_cores(seconds: float = 0.25, gap: float = 2e-4) -> float:
    """How much of the machine was not ours: one probe process spins on each core for
    ``seconds``, reading the clock, and sums the gaps longer than ``gap`` (time when it was
    not running). Returns the lost core-seconds per second, 0 (all ours) to the number of
    cores. It sees other processes of this machine and also time the hypervisor gives to
    other guests, which ``/proc/stat`` does not show (measured here: up to 12 ms at a time)."""
    cpus = sorted(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else []
    if len(cpus) < 1 or not hasattr(os, "fork"):
        return 0.0

    def spin(cpu: int) -> float:
        os.sched_setaffinity(0, {cpu})
        last = time.perf_counter()
        end, lost = last + seconds, 0.0
        while last < end:
            now = time.perf_counter()
            if now - last > gap:
                lost += now - last
            last = now
        return lost / seconds

    children = []
    for cpu in cpus[1:]:
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:  # the child only spins and writes one number
            os.close(read_end)
            os.write(write_end, repr(spin(cpu)).encode())
            os._exit(0)
        os.close(write_end)
        children.append((pid, read_end))
    try:
        total = spin(cpus[0])
    finally:
        os.sched_setaffinity(0, set(cpus))
    for pid, read_end in children:
        total += float(os.read(read_end, 64) or 0.0)
        os.close(read_end)
        os.waitpid(pid, 0)
    return total


def wait_for_quiet(threshold: float, patience: float) -> tuple[float, float]:
    """Probe (``lost_cores``) until less than ``threshold`` of a core is lost, or for
    ``patience`` seconds; returns (the seconds waited, the last probe's lost cores)."""
    start = time.perf_counter()
    while (lost := lost_cores()) >= threshold and time.perf_counter() - start < patience:
        time.sleep(0.5)
    return time.perf_counter() - start, lost


class WorkerError(RuntimeError):
    """A worker replied with a failure (its traceback is the message) or died."""


class Worker:
    """One framework's process; ``call(**request)`` sends a request and returns the reply."""

    def __init__(self, name: str, argv: Sequence[str], env: dict | None = None):
        self.name = name
        self.process = subprocess.Popen(list(argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
                                        bufsize=1, env={**os.environ, **(env or {})})

    def call(self, **request) -> dict:
        assert self.process.stdin is not None and self.process.stdout is not None
        start, busy_before = time.perf_counter(), busy_seconds()
        try:
            self.process.stdin.write(json.dumps(request) + "\n")
            self.process.stdin.flush()
        except BrokenPipeError as e:
            raise WorkerError(f"{self.name} worker has exited (status {self.process.poll()})") from e
        line = self.process.stdout.readline()
        wall, busy_after = time.perf_counter() - start, busy_seconds()
        time.sleep(SETTLE_SECONDS)
        if not line:
            raise WorkerError(f"{self.name} worker exited (status {self.process.wait()}) during {request}")
        reply = json.loads(line)
        if "error" in reply:
            raise WorkerError(f"{self.name} worker failed on {request}:\n{reply['error']}")
        reply["wall"] = wall
        if busy_before is not None and busy_after is not None:
            reply["foreign"] = max(0.0, busy_after - busy_before - reply.get("cpu", 0.0)) / wall
        return reply

    def close(self) -> None:
        if self.process.poll() is None:
            assert self.process.stdin is not None
            self.process.stdin.close()
            try:
                self.process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()


def worker_command(script: str, framework: str, *extra: str) -> list[str]:
    """The command line that starts ``script`` as a worker for ``framework``."""
    return [sys.executable, script, "--worker", framework, *extra]


def serve(handle: Callable[[dict], dict]) -> None:
    """The worker's loop: one request per stdin line, one JSON reply per stdout line, until
    stdin closes. A failing request is answered with its traceback; the worker lives on."""
    replies = sys.stdout
    sys.stdout = sys.stderr  # prints from the framework or the benchmark must not break the protocol
    for line in sys.stdin:
        if not line.strip():
            continue
        cpu, faults = time.process_time(), resource.getrusage(resource.RUSAGE_SELF).ru_minflt
        try:
            reply = handle(json.loads(line))
            reply["cpu"] = time.process_time() - cpu
            reply["page_faults"] = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - faults
        except Exception:
            reply = {"error": traceback.format_exc()}
        replies.write(json.dumps(reply) + "\n")
        replies.flush()


class Patience:
    """The seconds a configuration may spend waiting for a quiet machine and repeating
    measurements taken under foreign load (then the rest is taken as it comes, flagged)."""

    def __init__(self, seconds: float, threshold: float):
        self.left, self.threshold = seconds, threshold

    def wait(self, at_most: float) -> float:
        """Wait for quiet (at most ``at_most`` seconds, and what is left); the lost cores."""
        waited, lost = wait_for_quiet(self.threshold, max(0.0, min(at_most, self.left)))
        self.left -= waited
        return lost


def measured(worker: Worker, request: dict, attempts: int, patience: Patience) -> dict:
    """One measurement, repeated (after waiting for quiet) while other processes kept more
    than ``patience.threshold`` cores busy during it; the least disturbed one is kept."""
    best = None
    for attempt in range(attempts):
        reply = worker.call(**request)
        reply["attempts"] = attempt + 1
        if best is None or reply.get("foreign", 0.0) < best.get("foreign", 0.0):
            best = reply
        if reply.get("foreign", 0.0) <= patience.threshold or patience.left <= 0:
            break
        patience.wait(10.0)
    assert best is not None
    return best


def quiet_rounds(rounds: list[dict], threshold: float) -> list[dict]:
    """The rounds in which no measurement ran under foreign load, when there are at least
    two of them; else every round."""
    quiet = [record for record in rounds if is_quiet(record, threshold)]
    return quiet if len(quiet) >= 2 else rounds


def replies(record: dict) -> list[dict]:
    return [value for value in record.values() if isinstance(value, dict)]


def is_quiet(record: dict, threshold: float) -> bool:
    """No other process busy during the round's measurements, nothing lost just before."""
    return record.get("probe", 0.0) < threshold and all(x.get("foreign", 0.0) <= threshold for x in replies(record))


def order(names: Sequence[str], round_index: int) -> list[str]:
    """A B for even rounds, B A for odd ones (with more names: reversed on odd rounds)."""
    return list(names) if round_index % 2 == 0 else list(reversed(names))


# -- statistics ------------------------------------------------------------------------------


def median_seconds(step: Callable[[], object], warmup: int, repeats: int,
                   before: Callable[[], object] | None = None) -> float:
    """Median wall seconds of ``repeats`` calls of ``step``, after ``warmup`` untimed ones;
    ``before``, if given, runs untimed before each timed call."""
    for _ in range(warmup):
        step()
    times = []
    for _ in range(repeats):
        if before is not None:
            before()
        start = time.perf_counter()
        step()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def median(values):
    values = [v for v in values if v is not None]
    return statistics.median(values) if values else None


def spread(values) -> float | None:
    """(max - min) / median of the per-round values: how much the machine moved them."""
    values = [v for v in values if v is not None]
    if len(values) < 2:
        return None
    return (max(values) - min(values)) / statistics.median(values)


def ratios(a: Sequence, b: Sequence) -> list[float]:
    """Per-round ratios a[r] / b[r] (rounds where either is missing are skipped)."""
    return [x / y for x, y in zip(a, b) if x is not None and y]


def markdown(header: Sequence[str], rows: Sequence[Sequence[str]], align: str | None = None) -> str:
    """A markdown table; ``align`` gives one of 'l' / 'r' per column (default: first left)."""
    align = align or "l" + "r" * (len(header) - 1)
    lines = ["| " + " | ".join(header) + " |",
             "|" + "|".join("---" if a == "l" else "---:" for a in align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return "\n".join(lines)


# -- one process per framework per round ------------------------------------------------------
# (the simpler scheme of conv.py, recurrent.py, activations.py and transformer_layer.py: each
# round starts a fresh worker per framework, which times every case and prints one JSON object
# of {case: median seconds})


def frameworks() -> list[str]:
    """["zero", "torch"], or ["zero"] where PyTorch is not installed."""
    try:
        import torch  # noqa: F401  (only to know whether the comparison can run)
    except ImportError:
        return ["zero"]
    return ["zero", "torch"]


def run_once(script: str, framework: str, *extra: str) -> dict:
    """Start ``script`` as a worker for ``framework``, wait for it, and return its JSON."""
    result = subprocess.run(worker_command(script, framework, *extra), capture_output=True, text=True, check=False)
    if result.returncode != 0:
        raise SystemExit(f"{framework} worker failed:\n{result.stderr[-3000:]}")
    return json.loads(result.stdout.strip().splitlines()[-1])


def compare_fresh_processes(script: str, extra: Sequence[str], rounds: int, cases: Sequence[str], title: str,
                            digits: int = 1) -> None:
    """``rounds`` rounds of one fresh worker per framework, in ``order``; then the table: per
    case, the median over rounds of each framework's milliseconds and of the per-round ratio
    Zero / PyTorch."""
    names = frameworks()
    results: dict[str, list[dict]] = {name: [] for name in names}
    for r in range(rounds):
        for name in order(names, r):
            results[name].append(run_once(script, name, *extra))
        print(f"round {r + 1}/{rounds} done", file=sys.stderr, flush=True)
    print(title)
    rows = []
    for case in cases:
        zero_ms = statistics.median(r[case] for r in results["zero"]) * 1e3
        if "torch" in results:
            torch_ms = statistics.median(r[case] for r in results["torch"]) * 1e3
            ratio = statistics.median(z[case] / t[case] for z, t in zip(results["zero"], results["torch"]))
            rows.append([case, f"{zero_ms:.{digits}f}", f"{torch_ms:.{digits}f}", f"{ratio:.2f}"])
        else:
            rows.append([case, f"{zero_ms:.{digits}f}", "-", "-"])
    print(markdown(["case", "zero ms", "torch ms", "zero / torch"], rows))


def add_comparison_arguments(parser, repeats: int, dtype: bool = True) -> None:
    """The options every ``compare_fresh_processes`` script takes (``--worker``: internal)."""
    import argparse

    parser.add_argument("--rounds", type=int, default=5, help="processes per framework, taking turns")
    parser.add_argument("--repeats", type=int, default=repeats, help="timed calls per case in each process")
    if dtype:
        parser.add_argument("--dtype", default="float32", choices=["float32", "float64"])
    parser.add_argument("--threads", type=int, default=2, help="PyTorch's intra-op threads")
    parser.add_argument("--worker", choices=["zero", "torch"], help=argparse.SUPPRESS)
