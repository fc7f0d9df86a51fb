"""Deterministic synthetic data: token sequences drawn from a fixed random Markov chain.

Sample i depends only on (seed, i): its random numbers come from a generator seeded with both, so a
global batch holds the same samples whatever the micro-batch size or data-parallel size. The chain
gives every token a few likely successors, so the loss has structure to learn and goes down.

Sample indices follow Megatron's single-pass sampler (`MegatronPretrainingSampler`): iteration k
covers samples [k*G, (k+1)*G); micro-batch j of data-parallel rank r takes
k*G + j*mbs*DP + r*mbs ... + mbs - 1.
"""

import torch

_SUCCESSORS = 8
_DATA_SEED_OFFSET = 7919


def _transition_cdf(vocab_size, seed):
    """Cumulative transition probabilities [V, V] of the chain (a fixed function of the seed)."""
    gen = torch.Generator().manual_seed(seed * 1000003 + _DATA_SEED_OFFSET)
    probs = torch.full((vocab_size, vocab_size), 1e-3)
    successors = torch.randint(0, vocab_size, (vocab_size, _SUCCESSORS), generator=gen)
    weights = torch.rand((vocab_size, _SUCCESSORS), generator=gen) + 0.1
    probs.scatter_add_(1, successors, weights)
    probs /= probs.sum(dim=1, keepdim=True)
    cdf = probs.cumsum(dim=1)
    cdf[:, -1] = 1.0  # because rounding must not leave a uniform draw above the last bucket
    return cdf


class MarkovDataset:
    """Samples of seq_length+1 tokens; tokens = [:-1], labels = [1:]."""

    def __init__(self, vocab_size, seq_length, seed):
        self.vocab_size = vocab_size
        self.seq_length = seq_length
        self.seed = seed
        self.cdf = _transition_cdf(vocab_size, seed)

    def _uniforms(self, index):
        gen = torch.Generator().manual_seed(self.seed * 1000003 + index * 7 + 1)
        first = torch.randint(0, self.vocab_size, (1,), generator=gen)
        return first, torch.rand(self.seq_length, generator=gen)

    def batch(self, first_index, count):
        """Tokens [count, seq_length+1] for samples first_index .. first_index+count-1."""
        starts, draws = zip(*(self._uniforms(first_index + i) for i in range(count)))
        draws = torch.stack(draws)
        tokens = torch.empty((count, self.seq_length + 1), dtype=torch.long)
        tokens[:, 0] = torch.cat(starts)
        for t in range(self.seq_length):
            rows = self.cdf[tokens[:, t]]
            nxt = torch.searchsorted(rows, draws[:, t:t + 1]).squeeze(1)
            tokens[:, t + 1] = nxt.clamp_(max=self.vocab_size - 1)
        return tokens


def micro_batch_start(iteration, micro_batch, args):
    """First sample index of a micro-batch on this rank (0-based iteration and micro-batch)."""
    return (iteration * args.global_batch_size +
            micro_batch * args.micro_batch_size * args.data_parallel_size +
            args.data_parallel_rank * args.micro_batch_size)
