"""Throughput reports to rubickd, which refits the job's performance model from them.

A report is best effort: the daemon may be restarting, and training must go on, so a
failure is printed and forgotten.
"""
import json
import sys
import time
import urllib.request


def post(url, job, token, body):
    """POST `body` to $RUBICK_URL/v1/jobs/$RUBICK_JOB_ID/report with the job's token."""
    if not url or not job:
        return
    req = urllib.request.Request("%s/v1/jobs/%s/report" % (url, job), data=json.dumps(body).encode(),
                                 method="POST", headers={"Content-Type": "application/json",
                                                         "Authorization": "Bearer " + token})
    try:
        urllib.request.urlopen(req, timeout=2).read()
    except Exception as e:  # the daemon may be restarting: training goes on
        print("report failed: %s" % e, file=sys.stderr, flush=True)


class Meter:
    """Samples per second over the steps since the last report (wall clock)."""

    def __init__(self):
        self.t_last, self.steps = time.time(), 0

    def tick(self):
        self.steps += 1

    def take(self, global_batch):
        """Throughput since the last take, in samples/s; restarts the window."""
        now = time.time()
        iter_s = (now - self.t_last) / max(1, self.steps)
        self.t_last, self.steps = now, 0
        return global_batch / iter_s
