"""SIGUSR1/SIGTERM become one flag that every rank of the node can read.

rubickd asks a run to stop (to reconfigure it, preempt it or cancel it) with SIGUSR1 or
SIGTERM, sent to the process it started. With several local ranks that process is a
launcher: the workers ignore the signals, the launcher sets a shared flag, and each step
rank 0's view of the flag is broadcast so that all ranks stop after the same step
(trainer.py). Exit codes: 0 when every rank finished, 75 when every rank checkpointed
(or stopped fenced), 1 otherwise.
"""
import signal
import sys

import torch.multiprocessing as mp

EXIT_CHECKPOINTED = 75


def launch(worker, base, local):
    """Run worker(rank, stop_flag) for ranks base .. base + local - 1 and exit as above.
    One rank runs in this process (no launcher in between); several are forked, not
    spawned, so that they inherit the imported torch instead of importing it again."""
    ctx = mp.get_context("fork")
    stop_flag = ctx.Value("i", 0)

    def on_signal(signum, frame):
        stop_flag.value = 1

    if local == 1:
        signal.signal(signal.SIGUSR1, on_signal)
        signal.signal(signal.SIGTERM, on_signal)
        worker(base, stop_flag)
        return
    # workers ignore the signals: the launcher turns them into a flag all ranks agree on
    signal.signal(signal.SIGUSR1, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    procs = [ctx.Process(target=worker, args=(base + r, stop_flag)) for r in range(local)]
    for p in procs:
        p.start()
    signal.signal(signal.SIGUSR1, on_signal)
    signal.signal(signal.SIGTERM, on_signal)
    codes = []
    for p in procs:
        while p.is_alive():
            p.join(0.2)
        codes.append(p.exitcode)
    if all(c == 0 for c in codes):
        return
    sys.exit(EXIT_CHECKPOINTED if all(c == EXIT_CHECKPOINTED for c in codes) else 1)
