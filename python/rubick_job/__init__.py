"""rubick_job: make a PyTorch training script reconfigurable by rubick (docs/job-library.md).

rubickd stops a run with a signal and starts the next one under another plan; a job that
follows its protocol (docs/rubickd.8, JOB PROTOCOL) checkpoints after a step all ranks
agree on and resumes under any plan with the same trajectory. This package is that
protocol, so that a script need not copy it: Job is the entry point; plan, order, ckpt,
dist, signals and report are its parts, usable alone. Depends on torch only.
"""
from . import pipeline, tp
from .ckpt import fenced, latest, merge_parts, publish
from .order import batch_indices, micro_batches
from .plan import (EXIT_PLAN_REFUSED, Plan, PlanError, PlanRefused, check_model_fits, check_supported, exit_for,
                   global_batch, parse_plan, read_plan)
from .signals import EXIT_CHECKPOINTED
from .trainer import Job, add_arguments

__all__ = ["Job", "add_arguments", "Plan", "PlanError", "parse_plan", "read_plan", "check_supported", "check_model_fits",
           "global_batch", "batch_indices", "micro_batches", "fenced", "latest", "publish",
           "merge_parts", "EXIT_CHECKPOINTED", "EXIT_PLAN_REFUSED", "PlanRefused", "exit_for"]
