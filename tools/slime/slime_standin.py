#!/usr/bin/env python3
"""STAND-IN for slime's train.py, for attune's tests only: it trains nothing.

It accepts slime's command line (Megatron, slime and --sglang-* flags), sleeps a little per rollout,
and prints the lines slime's real driver log carries, in slime's formats, behind Ray's actor
prefixes (shared reference section 6.4):
  (MegatronTrainRayActor pid=.., ip=..) [date] model.py:918 - step N: {'train/loss': .., ...}
  (RolloutManager pid=.., ip=..) [date] rollout_metrics.py:90 - perf R: {'perf/rollout_time': .., ...}
  (MegatronTrainRayActor pid=.., ip=..) [date] train_metric_utils.py:77 - perf R: {'perf/step_time': .., ...}
The times are a made-up, deterministic model of the levers (more rollout GPUs or a larger SGLang
memory fraction shorten rollout, a larger token cap shortens training until it runs out of memory),
so that a tuner has something to find. The losses depend only on --seed and the step, never on
the throughput levers, as a real run's paired-loss check expects. An argument assertion is raised
like slime's for a token cap above 32768 (out of memory) to exercise triage.

Profiling as slime's training actors do it (slime/observability/profile_utils.py, TrainProfiler):
with --use-pytorch-profiler and `train_overall` in --profile-target, one torch.profiler steps once
per rollout with the schedule wait = --profile-step-start - 1, warm-up 1, active = end - start,
and writes <--tensorboard-dir>/train_overall_rank_0.<ts>.pt.trace.json.gz when the window closes
(one training rank here; slime traces every one). The traced work is a small CPU matmul per rollout.
"""
import argparse
import datetime
import math
import os
import sys
import time


def parse():
    p = argparse.ArgumentParser(description="slime train.py stand-in (attune tests)")
    p.add_argument("--actor-num-nodes", type=int, default=1)
    p.add_argument("--actor-num-gpus-per-node", type=int, default=8)
    p.add_argument("--rollout-num-gpus", type=int, default=None)
    p.add_argument("--rollout-num-gpus-per-engine", type=int, default=1)
    p.add_argument("--colocate", action="store_true")
    p.add_argument("--sglang-mem-fraction-static", type=float, default=0.8)
    p.add_argument("--sglang-server-concurrency", type=int, default=512)
    p.add_argument("--use-dynamic-batch-size", action="store_true")
    p.add_argument("--max-tokens-per-gpu", type=int, default=None)
    p.add_argument("--micro-batch-size", type=int, default=1)
    p.add_argument("--rollout-batch-size", type=int, required=True)
    p.add_argument("--n-samples-per-prompt", type=int, default=1)
    p.add_argument("--num-rollout", type=int, default=4)
    p.add_argument("--seed", type=int, default=1234)
    p.add_argument("--standin-seconds-per-rollout", type=float, default=0.05)
    # Megatron's profiling flags, which slime's TrainProfiler reads, and slime's own target.
    p.add_argument("--use-pytorch-profiler", action="store_true")
    p.add_argument("--profile-step-start", type=int, default=10)
    p.add_argument("--profile-step-end", type=int, default=12)
    p.add_argument("--tensorboard-dir", default=None)
    p.add_argument("--profile-target", nargs="+", default=["train_overall"],
                   choices=["train_overall", "train_actor", "train_log_probs"])
    args, _ = p.parse_known_args()  # the real train.py takes hundreds of other flags
    return args


def log(actor, pid, source, message):
    stamp = datetime.datetime(2026, 1, 1) + datetime.timedelta(seconds=time.monotonic() % 86400)
    print(f"({actor} pid={pid}, ip=10.0.0.1) [{stamp:%Y-%m-%d %H:%M:%S}] {source} - {message}", flush=True)


def fmt(d):
    return "{" + ", ".join(f"'{k}': {v!r}" for k, v in d.items()) + "}"


class TrainProfiler:
    """slime's train_overall profiler: started after init, stepped after each rollout's training."""

    def __init__(self, a):
        self.prof = None
        self.work = None
        if not (a.use_pytorch_profiler and "train_overall" in a.profile_target):
            return
        import torch  # only a profiled run needs torch
        self.work = lambda: torch.randn(96, 96) @ torch.randn(96, 96)
        self.prof = torch.profiler.profile(
            activities=[torch.profiler.ProfilerActivity.CPU],
            schedule=torch.profiler.schedule(wait=max(a.profile_step_start - 1, 0),
                                             warmup=1 if a.profile_step_start > 0 else 0,
                                             active=a.profile_step_end - a.profile_step_start, repeat=1),
            on_trace_ready=torch.profiler.tensorboard_trace_handler(
                a.tensorboard_dir, worker_name="train_overall_rank_0", use_gzip=True))
        self.prof.start()

    def train(self):
        if self.work is not None:
            for _ in range(20):
                self.work()

    def step(self):
        if self.prof is not None:
            self.prof.step()

    def close(self):
        if self.prof is not None:
            self.prof.stop()


def main():
    a = parse()
    actors = a.actor_num_nodes * a.actor_num_gpus_per_node
    if not a.colocate and a.rollout_num_gpus is None:
        print("TypeError: unsupported operand type(s) for //: 'NoneType' and 'int'", flush=True)
        print("ray.exceptions.ActorDiedError: The actor died because of an error raised in its creation "
              "task, ray::RolloutManager.__init__() (pid=1, ip=10.0.0.1)", flush=True)
        return 1
    rollout_gpus = actors if a.colocate else a.rollout_num_gpus
    tokens_cap = a.max_tokens_per_gpu if a.use_dynamic_batch_size and a.max_tokens_per_gpu else 4096 * a.micro_batch_size
    if tokens_cap > 32768:
        log("MegatronTrainRayActor", 4121, "actor.py:311",
            "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 9.00 GiB.")
        return 1
    samples = a.rollout_batch_size * a.n_samples_per_prompt
    tokens = samples * 1024
    engines = max(1, rollout_gpus // max(1, a.rollout_num_gpus_per_engine))
    rollout_time = 40.0 * samples / 256 * (8 / (rollout_gpus + engines)) * (0.8 / a.sglang_mem_fraction_static)
    train_time = 30.0 * samples / 256 * (8 / actors) * (1.0 + 2048 / tokens_cap)
    if a.colocate:
        rollout_time *= 1.1
    update = 2.0
    prof = TrainProfiler(a)
    for r in range(a.num_rollout):
        time.sleep(a.standin_seconds_per_rollout)
        prof.train()
        prof.step()
        jitter = 1.0 + 0.004 * math.sin(r * 1.7)
        rt, tt = rollout_time * (1.6 if r == 0 else jitter), train_time * jitter
        log("RolloutManager", 2001, "rollout_metrics.py:90",
            f"perf {r}: " + fmt({"rollout/response_len/mean": 1024.0, "perf/rollout_time": rt,
                                 "perf/tokens_per_gpu_per_sec": tokens / rt / rollout_gpus}))
        loss = 0.1 / (1 + r) + 0.001 * (a.seed % 7)
        log("MegatronTrainRayActor", 4121, "model.py:918",
            f"step {r}: " + fmt({"train/loss": loss, "train/pg_loss": loss, "train/grad_norm": 0.5 + 0.01 * r,
                                 "train/step": r}))
        log("MegatronTrainRayActor", 4121, "train_metric_utils.py:77",
            f"perf {r}: " + fmt({"perf/train_wait_time": rt, "perf/train_time": tt, "perf/actor_train_time": tt,
                                 "perf/update_weights_time": update,
                                 "perf/actor_train_tflops": 120.0 * (1.0 + 0.2 * (tokens_cap > 8192)),
                                 "perf/actor_train_tok_per_s": tokens / tt, "perf/step_time": rt + tt,
                                 "perf/wait_time_ratio": rt / (rt + tt)}))
    prof.close()
    return 0


if __name__ == "__main__":
    sys.exit(main())
