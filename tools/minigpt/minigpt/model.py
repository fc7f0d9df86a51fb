"""A small GPT: learned positions, pre-LayerNorm blocks, GELU MLP, tied output embedding.

Recompute follows Megatron's meaning of the flags, using torch.utils.checkpoint:
  * full + uniform N: layers are split in consecutive groups of N, each group is one checkpoint;
  * full + block N: the first N layers are checkpointed one by one, the others are not;
  * selective: only the core attention (softmax(QK^T)V, the large s*s activations) is recomputed.
There is no dropout, so recompute changes no random stream and no result.
"""

import math

import torch
import torch.nn.functional as F
from torch.utils.checkpoint import checkpoint


def _core_attention(q, k, v, mask):
    scores = torch.matmul(q, k.transpose(-1, -2)) * (1.0 / math.sqrt(q.size(-1)))
    scores = scores.masked_fill(mask, float('-inf'))
    return torch.matmul(torch.softmax(scores.float(), dim=-1).to(v.dtype), v)


class SelfAttention(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.heads = args.num_attention_heads
        self.head_dim = args.kv_channels
        inner = self.heads * self.head_dim
        self.qkv = torch.nn.Linear(args.hidden_size, 3 * inner)
        self.proj = torch.nn.Linear(inner, args.hidden_size)
        self.selective_recompute = args.recompute_granularity == 'selective'

    def forward(self, x, mask):
        b, s, _ = x.shape
        qkv = self.qkv(x).view(b, s, 3, self.heads, self.head_dim).permute(2, 0, 3, 1, 4)
        q, k, v = qkv[0], qkv[1], qkv[2]
        if self.selective_recompute and torch.is_grad_enabled():
            ctx = checkpoint(_core_attention, q, k, v, mask, use_reentrant=False)
        else:
            ctx = _core_attention(q, k, v, mask)
        return self.proj(ctx.transpose(1, 2).reshape(b, s, -1))


class TransformerLayer(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.ln1 = torch.nn.LayerNorm(args.hidden_size)
        self.attn = SelfAttention(args)
        self.ln2 = torch.nn.LayerNorm(args.hidden_size)
        self.fc1 = torch.nn.Linear(args.hidden_size, args.ffn_hidden_size)
        self.fc2 = torch.nn.Linear(args.ffn_hidden_size, args.hidden_size)

    def forward(self, x, mask):
        x = x + self.attn(self.ln1(x), mask)
        return x + self.fc2(F.gelu(self.fc1(self.ln2(x))))


def _run_layers(layers, x, mask):
    for layer in layers:
        x = layer(x, mask)
    return x


class GPTModel(torch.nn.Module):
    def __init__(self, args):
        super().__init__()
        self.args = args
        self.embedding = torch.nn.Embedding(args.padded_vocab_size, args.hidden_size)
        self.position = torch.nn.Embedding(args.max_position_embeddings, args.hidden_size)
        self.layers = torch.nn.ModuleList(TransformerLayer(args) for _ in range(args.num_layers))
        self.final_ln = torch.nn.LayerNorm(args.hidden_size)
        self.output = None
        if args.untie_embeddings_and_output_weights:
            self.output = torch.nn.Linear(args.hidden_size, args.padded_vocab_size, bias=False)
        self._init_weights()

    def _init_weights(self):
        # Megatron's scheme: N(0, std) for weights, output projections scaled by 1/sqrt(2L).
        std = self.args.init_method_std
        scaled = std / math.sqrt(2.0 * self.args.num_layers)
        for name, p in self.named_parameters():
            if name.endswith('bias'):
                torch.nn.init.zeros_(p)
            elif '.ln' in name or name.startswith('final_ln'):
                torch.nn.init.ones_(p)
            elif name.endswith('proj.weight') or name.endswith('fc2.weight'):
                torch.nn.init.normal_(p, 0.0, scaled)
            else:
                torch.nn.init.normal_(p, 0.0, std)

    def _layer_groups(self):
        """(layers, checkpointed) runs in order, following --recompute-method."""
        args, layers = self.args, list(self.layers)
        if args.recompute_granularity != 'full' or not torch.is_grad_enabled():
            return [(layers, False)]
        n = args.recompute_num_layers
        if args.recompute_method == 'uniform':
            return [(layers[i:i + n], True) for i in range(0, len(layers), n)]
        return [([layer], True) for layer in layers[:n]] + [(layers[n:], False)]

    def forward(self, tokens):
        s = tokens.size(1)
        positions = torch.arange(s, device=tokens.device)
        x = self.embedding(tokens) + self.position(positions)
        mask = torch.ones(s, s, dtype=torch.bool, device=tokens.device).triu_(1)
        for group, recompute in self._layer_groups():
            if recompute:
                x = checkpoint(_run_layers, group, x, mask, use_reentrant=False)
            elif group:
                x = _run_layers(group, x, mask)
        x = self.final_ln(x)
        weight = self.embedding.weight if self.output is None else self.output.weight
        return F.linear(x, weight)


def pad_vocab(args):
    """Megatron's vocab_size_with_padding; returns the padded size (or --padded-vocab-size)."""
    if args.padded_vocab_size is not None:
        return args.padded_vocab_size
    multiple = args.make_vocab_size_divisible_by * args.tensor_model_parallel_size
    return ((args.vocab_size + multiple - 1) // multiple) * multiple


def num_floating_point_operations(args, batch_size):
    """Megatron's model-FLOPs count for a dense GPT without GQA/SwiGLU (reference section 3.4)."""
    s, h, n, d = args.seq_length, args.hidden_size, args.num_attention_heads, args.kv_channels
    tokens = batch_size * s
    attention_proj = 6 * (h * (n * d + 2 * n * d) + n * d * h)
    mlp = 6 * h * args.ffn_hidden_size * 2
    logits = 6 * h * args.padded_vocab_size
    core_attention = 6 * n * d * batch_size * s * s
    return tokens * (args.num_layers * (attention_proj + mlp) + logits) + \
        core_attention * args.num_layers
