"""minigpt's training loop, following Megatron-LM's pretrain()/train()/training_log().

Loss semantics (as in Megatron's train_step):
  * --calculate-per-token-loss: each micro-batch backpropagates its token-loss *sum*; gradients and
    token counts are summed over micro-batches and data-parallel ranks, then divided by the total
    token count. The reported lm loss is sum/count over the global batch.
  * otherwise: each micro-batch backpropagates mean/num_micro_batches and gradients are averaged
    over data-parallel ranks. With equal-length unmasked sequences (always the case here) both give
    the token mean over the global batch.
Throughput-only settings (micro-batch size, threads, data-parallel size, recompute) therefore only
change the floating-point summation order.
"""

import datetime
import gc
import math
import os
import sys
import time

import torch
import torch.distributed as dist
import torch.nn.functional as F

from . import log_format
from .data import IndexedDataset, MarkovDataset, micro_batch_start
from .model import GPTModel, num_floating_point_operations, pad_vocab
from .profiling import StepProfiler


def _print_rank_0(args, message):
    if args.rank == 0:
        log_format.emit(message)


def _print_rank_last(args, message):
    if args.rank == args.world_size - 1:
        log_format.emit(message)


def _configure_threads(args):
    # torch reads OMP_NUM_THREADS itself, but say so explicitly: it is a lever the tuner turns.
    env = os.getenv('OMP_NUM_THREADS')
    if env:
        torch.set_num_threads(max(1, int(env)))
    args.intra_op_threads = torch.get_num_threads()


def _initialize(args):
    args.cuda = torch.cuda.is_available()
    args.device = torch.device('cuda', args.local_rank) if args.cuda else torch.device('cpu')
    if args.cuda:
        torch.cuda.set_device(args.device)
    _configure_threads(args)
    args.data_parallel_rank = args.rank
    if args.world_size > 1:
        _print_rank_0(args, '> initializing torch distributed ...')
        backend = args.distributed_backend or ('nccl' if args.cuda else 'gloo')
        dist.init_process_group(backend=backend, world_size=args.world_size, rank=args.rank,
                                timeout=datetime.timedelta(minutes=args.distributed_timeout_minutes))
    _print_rank_0(args, '> initialized tensor model parallel with size 1')
    _print_rank_0(args, '> initialized pipeline model parallel with size 1')
    _print_rank_0(args, '> setting random seeds to {} ...'.format(args.seed))
    _print_rank_0(args, '> minigpt: device {}, intra-op threads {} (OMP_NUM_THREADS={})'.format(
        args.device, args.intra_op_threads, os.getenv('OMP_NUM_THREADS', 'unset')))
    torch.manual_seed(args.seed)
    _print_rank_0(args, log_format.datetime_line('after megatron is initialized'))


def _build_model_and_optimizer(args):
    args.padded_vocab_size = pad_vocab(args)
    _print_rank_0(args, ' > padded vocab (size: {}) with {} dummy tokens (new size: {})'.format(
        args.vocab_size, args.padded_vocab_size - args.vocab_size, args.padded_vocab_size))
    model = GPTModel(args).to(args.device)
    count = sum(p.numel() for p in model.parameters())
    if args.data_parallel_rank == 0:
        log_format.emit(
            ' > number of parameters on (tensor, pipeline) model parallel rank (0, 0): {}'.format(
                count))
    if args.world_size > 1:
        for p in model.parameters():  # because every rank must start from the same weights
            dist.broadcast(p.data, src=0)
    if args.optimizer == 'adam':
        optimizer = torch.optim.AdamW(model.parameters(), lr=args.lr, weight_decay=args.weight_decay,
                                      betas=(args.adam_beta1, args.adam_beta2), eps=args.adam_eps)
    else:
        optimizer = torch.optim.SGD(model.parameters(), lr=args.lr, momentum=args.sgd_momentum,
                                    weight_decay=args.weight_decay)
    _print_rank_0(args, log_format.datetime_line(
        'after model, optimizer, and learning rate scheduler are built'))
    return model, optimizer


def learning_rate(args, step):
    """Megatron's OptimizerParamScheduler.get_lr in units of iterations."""
    warmup, decay = args.lr_warmup_iters, args.lr_decay_iters
    if warmup > 0 and step <= warmup:
        return args.lr * step / warmup
    if args.lr_decay_style == 'constant':
        return args.lr
    if step > decay:
        return args.min_lr
    ratio = (step - warmup) / float(max(1, decay - warmup))
    if args.lr_decay_style == 'linear':
        coeff = 1.0 - ratio
    else:
        coeff = 0.5 * (math.cos(math.pi * ratio) + 1.0)
    return args.min_lr + coeff * (args.lr - args.min_lr)


def _set_lr(optimizer, lr):
    for group in optimizer.param_groups:
        group['lr'] = lr


def _forward_micro_batch(args, model, dataset, iteration, micro):
    start = micro_batch_start(iteration, micro, args)
    tokens = dataset.batch(start, args.micro_batch_size).to(args.device)
    inputs, labels = tokens[:, :-1], tokens[:, 1:]
    with torch.autocast(device_type=args.device.type, dtype=torch.bfloat16, enabled=args.bf16):
        logits = model(inputs)
    loss_sum = F.cross_entropy(logits.float().reshape(-1, logits.size(-1)), labels.reshape(-1),
                               reduction='sum')
    return loss_sum, labels.numel()


def _reduce_gradients(args, model, token_count):
    """Sums or averages gradients over DP ranks; returns the global token count."""
    grads = [p.grad for p in model.parameters() if p.grad is not None]
    total = torch.tensor([float(token_count)], device=args.device)
    if args.world_size > 1:
        flat = torch.cat([g.reshape(-1) for g in grads])
        dist.all_reduce(flat)
        dist.all_reduce(total)
        offset = 0
        for g in grads:
            g.copy_(flat[offset:offset + g.numel()].view_as(g))
            offset += g.numel()
    scale = 1.0 / total.item() if args.calculate_per_token_loss else 1.0 / args.data_parallel_size
    if scale != 1.0:
        for g in grads:
            g.mul_(scale)
    return total.item()


def _reduce_loss(args, loss_sum, token_count):
    stats = torch.tensor([loss_sum, float(token_count)], device=args.device, dtype=torch.float64)
    if args.world_size > 1:
        dist.all_reduce(stats)
    return (stats[0] / stats[1]).item()


def train_step(args, model, optimizer, dataset, iteration):
    """One global batch (0-based iteration). Returns (lm loss, grad norm)."""
    optimizer.zero_grad(set_to_none=True)
    loss_sum, token_count = 0.0, 0
    for micro in range(args.num_micro_batches):
        mb_loss, mb_tokens = _forward_micro_batch(args, model, dataset, iteration, micro)
        if args.calculate_per_token_loss:
            mb_loss.backward()
        else:
            (mb_loss / mb_tokens / args.num_micro_batches).backward()
        loss_sum += mb_loss.item()
        token_count += mb_tokens
    _reduce_gradients(args, model, token_count)
    clip = args.clip_grad if args.clip_grad > 0 else float('inf')
    grad_norm = torch.nn.utils.clip_grad_norm_(model.parameters(), clip).item()
    optimizer.step()
    return _reduce_loss(args, loss_sum, token_count), grad_norm


class _IntervalStats:
    """Megatron's total_loss_dict plus the 'interval-time' timer (not reset after iteration 1)."""

    def __init__(self):
        self.loss_total, self.advanced, self.nan = 0.0, 0, 0
        self.start = time.perf_counter()

    def add(self, loss):
        if loss != loss or loss in (float('inf'), float('-inf')):
            self.nan += 1
        self.loss_total += loss
        self.advanced += 1

    def reset(self, now):
        self.loss_total, self.advanced, self.nan = 0.0, 0, 0
        self.start = now


def _log(args, stats, iteration, lr, grad_norm, first):
    if args.world_size > 1:
        dist.barrier()  # because Megatron reads the interval timer with barrier=True
    now = time.perf_counter()
    elapsed = (now - stats.start) / max(1, stats.advanced)
    tflops = None
    if args.log_throughput:
        flops = num_floating_point_operations(args, args.global_batch_size)
        tflops = flops / (elapsed * 1e12 * args.world_size)
    _print_rank_last(args, log_format.iteration_line({
        'iteration': iteration, 'train_iters': args.train_iters,
        'consumed': args.consumed_train_samples, 'elapsed_ms': elapsed * 1000.0, 'tflops': tflops,
        'lr': lr, 'batch_size': args.global_batch_size,
        'losses': {'lm loss': stats.loss_total / max(1, stats.advanced)}, 'loss_scale': 1.0,
        'grad_norm': grad_norm, 'skipped': 0, 'nan': stats.nan}))
    if not first:
        stats.reset(now)


def _report_memory(args, iteration):
    if args.data_parallel_rank == 0:
        log_format.emit(log_format.memory_line(
            args.rank, '(after {} iterations)'.format(iteration), args.cuda))


def _maybe_collect_garbage(args, iteration):
    if args.manual_gc and args.manual_gc_interval > 0 and iteration % args.manual_gc_interval == 0:
        gc.collect()


def train(args, model, optimizer, dataset):
    profiler = StepProfiler(args)
    try:
        _train_loop(args, model, optimizer, dataset, profiler)
    finally:
        profiler.close()


def _train_loop(args, model, optimizer, dataset, profiler):
    stats = _IntervalStats()
    report_memory_flag = True
    if args.manual_gc:
        gc.disable()
    for iteration in range(1, args.train_iters + 1):
        profiler.begin_step(iteration)
        _set_lr(optimizer, learning_rate(args, iteration - 1))
        loss, grad_norm = train_step(args, model, optimizer, dataset, iteration - 1)
        profiler.end_step(iteration)
        args.consumed_train_samples += args.global_batch_size
        stats.add(loss)
        lr = learning_rate(args, iteration)  # Megatron logs the lr after the scheduler step
        first = iteration == 1
        if first or iteration % args.log_interval == 0:
            _log(args, stats, iteration, lr, grad_norm, first)
            if report_memory_flag:
                _report_memory(args, iteration)
                report_memory_flag = iteration <= 1
            elif args.log_memory_interval and iteration % args.log_memory_interval == 0:
                _report_memory(args, iteration)
        _maybe_collect_garbage(args, iteration)
        if args.exit_interval and iteration % args.exit_interval == 0:
            _print_rank_0(args, log_format.datetime_line(
                'exiting program at iteration {}'.format(iteration)))
            return


def pretrain(args):
    _initialize(args)
    model, optimizer = _build_model_and_optimizer(args)
    if args.data_path:
        dataset = IndexedDataset(args.data_path, args.seq_length, args.vocab_size)
        _print_rank_0(args, ' > indexed dataset: {} tokens in {} sequences, {} samples per '
                      'epoch'.format(dataset.total_tokens, dataset.sequences, dataset.samples))
    else:
        dataset = MarkovDataset(args.vocab_size, args.seq_length, args.seed)
    args.consumed_train_samples = 0
    _print_rank_0(args, log_format.datetime_line('after dataloaders are built'))
    _print_rank_0(args, 'done with setup ...')
    _print_rank_0(args, 'training ...')
    _print_rank_0(args, log_format.datetime_line('before the start of training step'))
    train(args, model, optimizer, dataset)
    _print_rank_0(args, log_format.datetime_line('after training is done'))
    if args.world_size > 1:
        dist.barrier()
        dist.destroy_process_group()
    sys.stdout.flush()
