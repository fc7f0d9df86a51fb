#!/usr/bin/env python3
"""A stand-in for a training script, for the toy stack (docs/examples/stack-plugin).

It trains nothing: each step "runs" global_batch / micro_batch micro-batches, each costing a fixed
launch overhead plus time per sample (so a larger micro-batch is faster), and prints one line per
step:

    step 3/20 | time_ms 96.1 | loss 8.7312 | mem_gib 3.5

The loss depends only on the objective (learning rate, global batch, sequence length, seed), never
on the micro-batch size, as in real training. A micro-batch too large for the 16 GiB "device"
fails the way PyTorch does ("CUDA out of memory"), with exit code 1.
"""
import argparse
import math
import random
import sys
import time

OVERHEAD_S = 0.004      # per micro-batch: kernel launches, Python
PER_SAMPLE_S = 0.0008   # per sample
DEVICE_GIB = 16.0


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--steps', type=int, default=20)
    p.add_argument('--global-batch', type=int, default=16)
    p.add_argument('--micro-batch', type=int, default=1)
    p.add_argument('--seq-length', type=int, default=128)
    p.add_argument('--lr', type=float, default=0.1)
    p.add_argument('--seed', type=int, default=1)
    a = p.parse_args()
    if a.micro_batch < 1 or a.global_batch % a.micro_batch:
        print(f'error: --global-batch {a.global_batch} is not a multiple of --micro-batch '
              f'{a.micro_batch}', file=sys.stderr)
        return 2
    mem_gib = 2.0 + 1.5 * a.micro_batch * a.seq_length / 128
    print(f'toy_train: global batch {a.global_batch}, micro-batch {a.micro_batch}, '
          f'{a.steps} steps', flush=True)
    if mem_gib > DEVICE_GIB:
        print(f'torch.OutOfMemoryError: CUDA out of memory. Tried to allocate {mem_gib - DEVICE_GIB:.2f} '
              f'GiB (micro-batch {a.micro_batch}; the device has {DEVICE_GIB:.0f} GiB)', flush=True)
        return 1
    print('training started', flush=True)
    noise = random.Random(a.seed)
    for step in range(1, a.steps + 1):
        start = time.monotonic()
        for _ in range(a.global_batch // a.micro_batch):
            time.sleep(OVERHEAD_S + PER_SAMPLE_S * a.micro_batch)
        elapsed_ms = (time.monotonic() - start) * 1000
        progress = a.lr * step * a.global_batch * a.seq_length / 2048
        loss = 2.0 + 8.0 * math.exp(-progress) + 0.01 * noise.random()
        print(f'step {step}/{a.steps} | time_ms {elapsed_ms:.1f} | loss {loss:.4f} | '
              f'mem_gib {mem_gib:.1f}', flush=True)
    print('training done', flush=True)
    return 0


if __name__ == '__main__':
    sys.exit(main())
