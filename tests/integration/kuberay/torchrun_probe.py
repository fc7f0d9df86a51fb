"""A tiny torch.distributed job for the torchrun driver's tests: joins the process group (gloo),
all-reduces a one and prints what it saw. Options:
  --fail-node K --code C   the worker of node K exits C before the all-reduce
  --sleep S                every worker prints 'probe: ready pid=P' and sleeps S seconds first
"""
import argparse
import os
import sys
import time

import torch
import torch.distributed as dist


def main():
    p = argparse.ArgumentParser()
    p.add_argument('--fail-node', type=int, default=-1)
    p.add_argument('--code', type=int, default=3)
    p.add_argument('--sleep', type=float, default=0)
    a = p.parse_args()
    node = int(os.environ['GROUP_RANK'])
    print('probe: ready pid=%d node=%d' % (os.getpid(), node), flush=True)
    if node == a.fail_node:
        print('probe: node %d fails on purpose with code %d' % (node, a.code), file=sys.stderr,
              flush=True)
        sys.exit(a.code)
    if a.sleep:
        time.sleep(a.sleep)
    dist.init_process_group('gloo')
    t = torch.ones(1)
    dist.all_reduce(t)
    print('probe: rank %d/%d node %d sum %d' % (dist.get_rank(), dist.get_world_size(), node,
                                               int(t.item())), flush=True)
    dist.destroy_process_group()


if __name__ == '__main__':
    main()
