#!/usr/bin/python3
"""Entry point of minigpt, named like Megatron-LM's: `python pretrain_gpt.py --num-layers ...`.

Arguments are parsed before torch is imported so that refused flags and --help answer at once.
Run data-parallel with `torchrun --nproc-per-node N pretrain_gpt.py ...` (gloo on CPU).
"""

import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))

from minigpt.arguments import parse_args  # noqa: E402


def main():
    args = parse_args(prog=os.path.basename(sys.argv[0]))
    from minigpt.training import pretrain  # because importing torch costs ~1.5 s
    pretrain(args)


if __name__ == '__main__':
    main()
