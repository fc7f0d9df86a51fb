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


_INDEX_HEADER = b"MMIDIDX\x00\x00"
_DTYPES = {1: 'uint8', 2: 'int8', 3: 'int16', 4: 'int32', 5: 'int64', 8: 'uint16'}


def _read_indexed(prefix):
    """The tokens of a Megatron indexed dataset (indexed_dataset.py, version 1), in order."""
    import numpy as np
    with open(prefix + '.idx', 'rb') as f:
        if f.read(9) != _INDEX_HEADER:
            raise SystemExit('minigpt: {}.idx: bad header, not a Megatron indexed dataset'.format(prefix))
        version = int.from_bytes(f.read(8), 'little')
        code = f.read(1)[0]
        if version != 1 or code not in _DTYPES:
            raise SystemExit('minigpt: {}.idx: version {} / dtype code {} not supported'.format(
                prefix, version, code))
        count = int.from_bytes(f.read(8), 'little')
        f.read(8)  # document count: minigpt samples across documents, as GPTDataset does
        lengths = np.frombuffer(f.read(4 * count), dtype='<i4')
        pointers = np.frombuffer(f.read(8 * count), dtype='<i8')
    data = np.fromfile(prefix + '.bin', dtype=np.dtype(_DTYPES[code]).newbyteorder('<'))
    size = data.dtype.itemsize
    parts = [data[p // size:p // size + n] for p, n in zip(pointers, lengths)]
    return (np.concatenate(parts) if parts else data[:0]).astype(np.int64), count


class IndexedDataset:
    """Samples from Megatron indexed datasets (--data-path PREFIX...): like Megatron's GPTDataset,
    sample k is the seq_length+1 tokens starting at k*seq_length of the sequences laid end to end
    (so one token overlaps the next sample); unlike it, there is no shuffling and no blending
    weights. Rows packed by `attune data pack` at the same seq_length are then exactly one sample
    each, plus the first token of the next row as the last label."""

    def __init__(self, prefixes, seq_length, vocab_size):
        import numpy as np
        if len(prefixes) > 1 and _is_number(prefixes[0]):
            raise SystemExit('minigpt: --data-path with blending weights is not supported; '
                             'give prefixes only')
        streams, self.sequences = [], 0
        for prefix in prefixes:
            tokens, count = _read_indexed(prefix)
            streams.append(tokens)
            self.sequences += count
        self.tokens = torch.from_numpy(np.concatenate(streams))
        self.total_tokens = int(self.tokens.numel())
        self.seq_length = seq_length
        self.samples = (self.total_tokens - 1) // seq_length
        if self.samples < 1:
            raise SystemExit('minigpt: --data-path holds {} tokens, fewer than one sample of '
                             '--seq-length {} + 1'.format(self.total_tokens, seq_length))
        top = int(self.tokens.max())
        if top >= vocab_size:
            raise SystemExit('minigpt: --data-path holds token id {}, but --vocab-size is {}; '
                             'set --vocab-size to the tokenizer\'s vocabulary'.format(top, vocab_size))

    def batch(self, first_index, count):
        """Tokens [count, seq_length+1] for samples first_index .. first_index+count-1 (wrapping
        around at the end of an epoch)."""
        rows = []
        for k in range(first_index, first_index + count):
            start = (k % self.samples) * self.seq_length
            rows.append(self.tokens[start:start + self.seq_length + 1])
        return torch.stack(rows)


def _is_number(text):
    try:
        float(text)
        return True
    except ValueError:
        return False
