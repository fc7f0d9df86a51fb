"""Command line of minigpt: Megatron-LM's flag spellings for what minigpt implements.

This module must not import torch: `--help` and refused flags answer in well under a second.

The parser follows Megatron-LM's `megatron/training/arguments.py`:
  * `allow_abbrev=False`, so every flag must be spelled in full;
  * unknown flags are refused with argparse's "error: unrecognized arguments: ..." and exit 2;
  * `validate_args` derives data-parallel size from WORLD_SIZE and the model-parallel sizes, fills in
    defaults (global batch size, ffn hidden size, kv channels), checks Megatron's constraints and
    raises with Megatron-like messages before anything is built.
Defaults that Megatron leaves unset (model size, batch, iterations, lr) are small values that make
a step take a fraction of a second on two CPU cores; see README.md.
"""

import argparse
import os
import sys

_SEPARATOR_WIDTH = 48


def _add_network_size_args(parser):
    group = parser.add_argument_group(title='network size')
    group.add_argument('--num-layers', type=int, default=4, help='Number of transformer layers.')
    group.add_argument('--hidden-size', type=int, default=256, help='Transformer hidden size.')
    group.add_argument('--ffn-hidden-size', type=int, default=None,
                       help='Transformer feed-forward hidden size (default 4*hidden-size).')
    group.add_argument('--num-attention-heads', type=int, default=4,
                       help='Number of transformer attention heads.')
    group.add_argument('--kv-channels', type=int, default=None,
                       help='Projection size per head (default hidden-size/num-attention-heads).')
    group.add_argument('--max-position-embeddings', type=int, default=None,
                       help='Maximum number of position embeddings (default seq-length).')
    group.add_argument('--position-embedding-type', type=str, default='learned_absolute',
                       choices=['learned_absolute'], help='Position embedding type.')
    group.add_argument('--make-vocab-size-divisible-by', type=int, default=128,
                       help='Pad the vocab size to be divisible by this value times TP.')
    group.add_argument('--untie-embeddings-and-output-weights', action='store_true',
                       help='Untie embeddings and output weights.')
    group.add_argument('--init-method-std', type=float, default=0.02,
                       help='Standard deviation of the zero mean normal for weight init.')


def _add_tokenizer_args(parser):
    group = parser.add_argument_group(title='tokenizer and data')
    group.add_argument('--vocab-size', type=int, default=512,
                       help='Size of the vocabulary of the synthetic (NullTokenizer-like) data.')
    group.add_argument('--padded-vocab-size', type=int, default=None,
                       help='Vocabulary size after padding; overrides the computed padding.')
    group.add_argument('--mock-data', action='store_true',
                       help='Use synthetic data (minigpt always does: seeded Markov-chain tokens).')
    group.add_argument('--data-path', nargs='*', default=None,
                       help='Megatron indexed dataset prefixes (PREFIX.bin/PREFIX.idx, e.g. from '
                            '`attune data pack`); read in order, without weights or shuffling.')
    group.add_argument('--dataloader-type', type=str, default='single', choices=['single'],
                       help='Single pass sampler: consecutive sample indices per global batch.')


def _add_training_args(parser):
    group = parser.add_argument_group(title='training')
    group.add_argument('--micro-batch-size', type=int, default=1,
                       help='Batch size per model instance (local batch size).')
    group.add_argument('--global-batch-size', type=int, default=None,
                       help='Training batch size (default micro-batch-size * data-parallel-size).')
    group.add_argument('--seq-length', type=int, default=128, help='Sequence length to process.')
    group.add_argument('--train-iters', type=int, default=20,
                       help='Total number of iterations to train over.')
    group.add_argument('--exit-interval', type=int, default=None,
                       help='Exit the program after the iteration is divisible by this value.')
    group.add_argument('--recompute-activations', action='store_true',
                       help='Recompute activation (selective granularity; legacy spelling).')
    group.add_argument('--recompute-granularity', type=str, default=None,
                       choices=['full', 'selective'],
                       help='full: recompute whole transformer layers; selective: core attention.')
    group.add_argument('--recompute-method', type=str, default=None, choices=['uniform', 'block'],
                       help='uniform: checkpoint groups of --recompute-num-layers layers; block: '
                            'checkpoint only the first --recompute-num-layers layers.')
    group.add_argument('--recompute-num-layers', type=int, default=None,
                       help='Layers per recompute unit (uniform) or recomputed layers (block).')
    group.add_argument('--calculate-per-token-loss', action='store_true',
                       help='Scale the cross entropy loss by the number of non-padded tokens in '
                            'the global batch instead of averaging per micro-batch.')
    group.add_argument('--optimizer', type=str, default='adam', choices=['adam', 'sgd'],
                       help='Optimizer function.')
    group.add_argument('--manual-gc', action='store_true',
                       help='Disable automatic garbage collection; collect every '
                            '--manual-gc-interval iterations.')
    group.add_argument('--manual-gc-interval', type=int, default=0,
                       help='Iterations between manual garbage collections (0: never).')
    group.add_argument('--bf16', action='store_true', help='Run the model in bfloat16 autocast.')


def _add_optimizer_args(parser):
    group = parser.add_argument_group(title='learning rate and optimizer')
    group.add_argument('--lr', type=float, default=1.0e-3, help='Initial learning rate.')
    group.add_argument('--min-lr', type=float, default=0.0, help='Minimum learning rate.')
    group.add_argument('--lr-decay-style', type=str, default='linear',
                       choices=['constant', 'linear', 'cosine'], help='Learning rate decay.')
    group.add_argument('--lr-decay-iters', type=int, default=None,
                       help='Iterations to decay the learning rate over (default train-iters).')
    group.add_argument('--lr-warmup-iters', type=int, default=0,
                       help='Iterations to linearly warm up the learning rate over.')
    group.add_argument('--weight-decay', type=float, default=0.01, help='Weight decay coefficient.')
    group.add_argument('--clip-grad', type=float, default=1.0, help='Gradient clipping (L2 norm).')
    group.add_argument('--adam-beta1', type=float, default=0.9, help='Adam beta1.')
    group.add_argument('--adam-beta2', type=float, default=0.999, help='Adam beta2.')
    group.add_argument('--adam-eps', type=float, default=1e-08, help='Adam epsilon.')
    group.add_argument('--sgd-momentum', type=float, default=0.9, help='SGD momentum.')
    group.add_argument('--seed', type=int, default=1234,
                       help='Random seed for initialization and the synthetic data.')


def _add_distributed_args(parser):
    group = parser.add_argument_group(title='distributed')
    group.add_argument('--tensor-model-parallel-size', type=int, default=1,
                       help='Degree of tensor model parallelism (minigpt: 1 only).')
    group.add_argument('--pipeline-model-parallel-size', type=int, default=1,
                       help='Degree of pipeline model parallelism (minigpt: 1 only).')
    group.add_argument('--context-parallel-size', type=int, default=1,
                       help='Degree of context parallelism (minigpt: 1 only).')
    group.add_argument('--sequence-parallel', action='store_true',
                       help='Sequence parallelism (turned off when TP is 1, as in Megatron).')
    group.add_argument('--distributed-backend', default=None, choices=['nccl', 'gloo'],
                       help='Collective backend (default nccl on CUDA, gloo on CPU).')
    group.add_argument('--distributed-timeout-minutes', type=int, default=10,
                       help='Timeout in minutes for collectives.')
    group.add_argument('--use-cpu-initialization', action='store_true',
                       help='Initialize weights on CPU (minigpt always does; accepted as no-op).')


def _add_logging_args(parser):
    group = parser.add_argument_group(title='logging')
    group.add_argument('--log-interval', type=int, default=100,
                       help='Report loss and timing interval.')
    group.add_argument('--log-throughput', action='store_true',
                       help='Log throughput per GPU (TFLOP/s/GPU).')
    group.add_argument('--log-memory-interval', type=int, default=None,
                       help='Report memory every N iterations (a multiple of --log-interval).')


def _add_profiling_args(parser):
    group = parser.add_argument_group(title='profiling')
    group.add_argument('--profile', action='store_true',
                       help='Profile steps --profile-step-start to --profile-step-end on the ranks '
                            'in --profile-ranks.')
    group.add_argument('--use-pytorch-profiler', action='store_true',
                       help='Profile with torch.profiler and write a chrome trace per rank into '
                            '--tensorboard-dir (without it, --profile drives an external CUDA '
                            'profiler such as nsys, which needs CUDA).')
    group.add_argument('--profile-step-start', type=int, default=10,
                       help='Global step to start profiling.')
    group.add_argument('--profile-step-end', type=int, default=12,
                       help='Global step to stop profiling.')
    group.add_argument('--profile-ranks', nargs='+', type=int, default=[0],
                       help='Global ranks to profile.')
    group.add_argument('--tensorboard-dir', type=str, default=None,
                       help='Where torch.profiler traces are written.')


def build_parser(prog=None):
    """Returns the argparse parser (allow_abbrev=False, like Megatron-LM)."""
    parser = argparse.ArgumentParser(prog=prog, description='minigpt (Megatron-LM compatible flags)',
                                     allow_abbrev=False)
    for add in (_add_network_size_args, _add_tokenizer_args, _add_training_args,
                _add_optimizer_args, _add_distributed_args, _add_logging_args,
                _add_profiling_args):
        add(parser)
    return parser


def parse_args(argv=None, prog=None):
    """Parses argv (exit 2 on unknown flags) and returns validated args."""
    args = build_parser(prog).parse_args(argv)
    args.rank = int(os.getenv('RANK', '0'))
    args.world_size = int(os.getenv('WORLD_SIZE', '1'))
    args.local_rank = int(os.getenv('LOCAL_RANK', '0'))
    validate_args(args)
    return args


def print_rank_0(args, message):
    if args.rank == 0:
        sys.stdout.write(message + '\n')  # one write, so ranks' lines never interleave
        sys.stdout.flush()


def _validate_parallel_sizes(args):
    model_size = (args.tensor_model_parallel_size * args.pipeline_model_parallel_size *
                  args.context_parallel_size)
    assert args.world_size % model_size == 0, (
        'world size ({}) is not divisible by total_model_size ({})'.format(args.world_size,
                                                                          model_size))
    args.data_parallel_size = args.world_size // model_size
    print_rank_0(args, 'using world size: {}, data-parallel size: {}, context-parallel size: {}, '
                 'hierarchical context-parallel sizes: {}, tensor-model-parallel size: {}, '
                 'pipeline-model-parallel size: {}'.format(
                     args.world_size, args.data_parallel_size, args.context_parallel_size, None,
                     args.tensor_model_parallel_size, args.pipeline_model_parallel_size))
    for name in ('tensor_model_parallel_size', 'pipeline_model_parallel_size',
                 'context_parallel_size'):
        value = getattr(args, name)
        if value != 1:
            raise NotImplementedError(
                '{} is {} but minigpt implements data parallelism only; set '
                '--{} 1'.format(name, value, name.replace('_', '-')))
    if args.sequence_parallel:
        print_rank_0(args, 'WARNING: Disabling sequence parallelism because tensor model '
                     'parallelism is disabled')
        args.sequence_parallel = False


def _validate_batch(args):
    assert args.micro_batch_size is not None and args.micro_batch_size > 0
    if args.global_batch_size is None:
        args.global_batch_size = args.micro_batch_size * args.data_parallel_size
        print_rank_0(args, 'setting global batch size to {}'.format(args.global_batch_size))
    assert args.global_batch_size > 0
    micro_times_dp = args.micro_batch_size * args.data_parallel_size
    assert args.global_batch_size % micro_times_dp == 0, (
        'global batch size ({}) is not divisible by micro batch size ({}) times data parallel '
        'size ({})'.format(args.global_batch_size, args.micro_batch_size,
                           args.data_parallel_size))
    args.num_micro_batches = args.global_batch_size // micro_times_dp
    assert args.train_iters is not None and args.train_iters > 0, 'train_iters must be positive'


def _validate_model(args):
    assert args.hidden_size % args.num_attention_heads == 0, (
        'hidden_size ({}) must be divisible by num_attention_heads ({})'.format(
            args.hidden_size, args.num_attention_heads))
    if args.kv_channels is None:
        args.kv_channels = args.hidden_size // args.num_attention_heads
    if args.ffn_hidden_size is None:
        args.ffn_hidden_size = 4 * args.hidden_size
    if args.max_position_embeddings is None:
        args.max_position_embeddings = args.seq_length
    assert args.max_position_embeddings >= args.seq_length, (
        'max_position_embeddings ({}) must be greater than or equal to seq_length ({}).'.format(
            args.max_position_embeddings, args.seq_length))
    assert args.vocab_size > 1, 'vocab_size ({}) must be at least 2'.format(args.vocab_size)
    if args.padded_vocab_size is not None:
        assert args.padded_vocab_size >= args.vocab_size, (
            'padded_vocab_size ({}) must be at least vocab_size ({})'.format(
                args.padded_vocab_size, args.vocab_size))


def _validate_recompute(args):
    if args.recompute_activations:
        args.recompute_granularity = 'selective'
    if args.recompute_granularity == 'selective':
        assert args.recompute_method is None, (
            'recompute method is not yet supported for selective recomputing granularity')
    if args.recompute_granularity == 'full':
        if args.recompute_method is None:
            raise ValueError('Using recompute_granularity: full so recompute_method must be '
                             '"block" or "uniform"')
        if args.recompute_num_layers is None or not (
                1 <= args.recompute_num_layers <= args.num_layers):
            raise ValueError('num_layers_per_pipeline_rank: {} and recompute_num_layers: {} '
                             'must be between 1 and num_layers_per_pipeline_rank'.format(
                                 args.num_layers, args.recompute_num_layers))
    elif args.recompute_method is not None or args.recompute_num_layers is not None:
        if args.recompute_granularity is None:
            raise ValueError('recompute_method and recompute_num_layers require '
                             '--recompute-granularity full')


def _validate_logging(args):
    assert args.log_interval > 0, 'log_interval must be positive'
    if args.log_memory_interval is not None:
        assert args.log_memory_interval % args.log_interval == 0, (
            'log_memory_interval ({}) must be a multiple of log_interval ({})'.format(
                args.log_memory_interval, args.log_interval))
    if args.lr_decay_iters is None:
        args.lr_decay_iters = args.train_iters


def _validate_profiling(args):
    if not args.profile:
        return
    assert 0 <= args.profile_step_start < args.profile_step_end, (
        'profile_step_start ({}) must be at least 0 and less than profile_step_end ({})'.format(
            args.profile_step_start, args.profile_step_end))
    if args.use_pytorch_profiler:
        assert args.tensorboard_dir, (
            '--use-pytorch-profiler writes its traces into --tensorboard-dir; set it')
    elif not _cuda_visible():
        raise ValueError('--profile without --use-pytorch-profiler starts the CUDA profiler API '
                         '(for nsys), which needs CUDA; on CPU add --use-pytorch-profiler '
                         '--tensorboard-dir DIR')


def _cuda_visible():
    # Without importing torch (arguments answer fast): a CUDA device is only possible when the
    # NVIDIA driver has created its device nodes.
    return os.path.exists('/dev/nvidiactl')


def validate_args(args):
    """Derives sizes and checks Megatron's constraints; raises on a bad configuration."""
    _validate_parallel_sizes(args)
    _validate_batch(args)
    _validate_model(args)
    _validate_recompute(args)
    _validate_logging(args)
    _validate_profiling(args)
    args.params_dtype = 'torch.bfloat16' if args.bf16 else 'torch.float32'
    if args.bf16:
        print_rank_0(args, 'accumulate and all-reduce gradients in fp32 for bfloat16 data type.')
    _print_args(args)


def _print_args(args):
    """Megatron's argument dump: sorted, dotted to width 48, between two rule lines."""
    if args.rank != 0:
        return
    lines = ['------------------------ arguments ------------------------']
    for name in sorted(vars(args), key=lambda s: s.lower()):
        dots = '.' * (_SEPARATOR_WIDTH - len(name))
        lines.append('  {} {} {}'.format(name, dots, getattr(args, name)))
    lines.append('-------------------- end of arguments ---------------------')
    sys.stdout.write('\n'.join(lines) + '\n')
    sys.stdout.flush()
