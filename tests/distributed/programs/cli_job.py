"""A `zero` job (the command line's main()) on each rank, as `mpirun -n N zero ...` runs it.

    cli_job.py OUT [--fault MODE:RANK:BATCH] gpt train ...   (or: mnist ...)

With --fault, rank RANK goes wrong when it draws its BATCH-th batch (1-based): ``kill``
(SIGKILL), ``hang`` (sleeps), ``raise`` (an OSError, as a full disk would), ``term``
(SIGTERM to itself), ``term-in-agree`` (SIGTERM to itself from inside the all-reduce of the
BATCH-th agreement on whether to stop: after its own flags went in). Each rank reports
main()'s exit status.
"""
from __future__ import annotations

import os
import signal
import time

from rank_common import ARGS, report

import zero.distributed as dist
from zero.cli import gpt_train, main, mnist, parallel

RANK = int(os.environ.get("OMPI_COMM_WORLD_RANK", os.environ.get("PMI_RANK", "0")))
argv = list(ARGS)
if argv[0] == "--fault" and argv[1].startswith("term-in-agree:"):
    _, at_rank, at_agreement = argv[1].split(":")
    argv = argv[2:]
    if RANK == int(at_rank):
        agreements, agree, all_reduce = [0], parallel.Ranks.agree, dist.all_reduce

        def signalled_all_reduce(*args, **kwargs):
            os.kill(os.getpid(), signal.SIGTERM)   # lands while this rank's flags are in the reduction
            return all_reduce(*args, **kwargs)

        def agree_with_a_signal(self, *args, **kwargs):
            agreements[0] += 1
            if agreements[0] != int(at_agreement):
                return agree(self, *args, **kwargs)
            dist.all_reduce = signalled_all_reduce
            try:
                return agree(self, *args, **kwargs)
            finally:
                dist.all_reduce = all_reduce

        parallel.Ranks.agree = agree_with_a_signal  # type: ignore[method-assign]
elif argv[0] == "--fault":
    mode, at_rank, at_batch = argv[1].split(":")
    argv = argv[2:]
    if RANK == int(at_rank):
        drawn = [0]

        def go_wrong() -> None:
            drawn[0] += 1
            if drawn[0] == int(at_batch):
                if mode == "kill":
                    os.kill(os.getpid(), signal.SIGKILL)
                if mode == "hang":
                    time.sleep(600)
                if mode == "term":  # as `kill -TERM` of one rank's process: the ranks stop together, saved
                    os.kill(os.getpid(), signal.SIGTERM)
                if mode == "raise":
                    raise OSError(28, "No space left on device (on purpose)")

        draw = gpt_train._batch

        def batch(*args, **kwargs):
            go_wrong()
            return draw(*args, **kwargs)

        gpt_train._batch = batch
        loader_iter = mnist.DataLoader.__iter__

        def batches(self):
            for item in loader_iter(self):
                if self.batch_size != 1000:  # (not the test set's loader)
                    go_wrong()
                yield item

        mnist.DataLoader.__iter__ = batches  # type: ignore[method-assign]

status = main.main(argv)
report(RANK, {"status": status})
