"""Megatron-LM's --profile, on minigpt's loop (megatron/training/training.py's train()).

With --use-pytorch-profiler, torch.profiler runs on the ranks in --profile-ranks with Megatron's
schedule: wait profile_step_start - 1 steps, warm up 1, record profile_step_end - profile_step_start,
once; prof.step() at the start of every iteration and prof.stop() after iteration
profile_step_end. Each rank writes one chrome trace into --tensorboard-dir through
tensorboard_trace_handler. One difference from Megatron: the worker name is 'rank<N>' (Megatron
keeps torch's '<host>_<pid>'), because a torch built without Kineto (Debian's, CPU only) records
no distributedInfo, and the rank in the file name is what tells the traces apart.

Without --use-pytorch-profiler, Megatron brackets the steps with cudaProfilerStart/Stop for an
external profiler (nsys); minigpt does the same on CUDA (arguments.py refuses it on CPU).
"""

import os

import torch


class StepProfiler:
    """Drives the profiler from the training loop: begin_step() before, end_step() after each."""

    def __init__(self, args):
        self.args = args
        self.enabled = args.profile and args.rank in args.profile_ranks
        self.prof = None
        if not self.enabled or not args.use_pytorch_profiler:
            return
        activities = [torch.profiler.ProfilerActivity.CPU]
        if args.cuda:
            activities.append(torch.profiler.ProfilerActivity.CUDA)
        os.makedirs(args.tensorboard_dir, exist_ok=True)
        self.prof = torch.profiler.profile(
            activities=activities,
            schedule=torch.profiler.schedule(
                wait=max(args.profile_step_start - 1, 0),
                warmup=1 if args.profile_step_start > 0 else 0,
                active=args.profile_step_end - args.profile_step_start,
                repeat=1),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(
                args.tensorboard_dir, worker_name='rank{}'.format(args.rank)),
            record_shapes=True,
            with_stack=True)
        self.prof.start()

    def begin_step(self, iteration):
        """Before iteration `iteration` (1-based) runs."""
        if not self.enabled:
            return
        if self.prof is not None:
            self.prof.step()
        elif self.args.cuda and iteration - 1 == self.args.profile_step_start:
            torch.cuda.cudart().cudaProfilerStart()

    def end_step(self, iteration):
        """After iteration `iteration` (1-based) has run."""
        if not self.enabled or iteration != self.args.profile_step_end:
            return
        if self.prof is not None:
            self.prof.stop()
            self.prof = None
            self.enabled = False
        elif self.args.cuda:
            torch.cuda.cudart().cudaProfilerStop()
            self.enabled = False

    def close(self):
        """At the end of training: a run shorter than profile_step_end still writes its trace."""
        if self.prof is not None:
            self.prof.stop()
            self.prof = None
