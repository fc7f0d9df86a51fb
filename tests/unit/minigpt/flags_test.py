"""minigpt refuses flags and configurations the way Megatron-LM does, before importing torch."""

from minigpt_testlib import TINY, check, run


def expect_refusal(flags, exit_code, substring, env=None):
    proc = run(flags, env=env, check=False)
    check(proc.returncode == exit_code,
          'flags {} exited {} (expected {}):\n{}'.format(flags, proc.returncode, exit_code,
                                                         proc.stdout))
    check(substring in proc.stdout,
          'flags {}: expected "{}" in output:\n{}'.format(flags, substring, proc.stdout))


def main():
    expect_refusal(['--no-such-flag', '3'], 2, 'error: unrecognized arguments: --no-such-flag 3')
    expect_refusal(['--micro-batch'], 2, 'error: unrecognized arguments: --micro-batch')
    expect_refusal(['--recompute-granularity', 'some'], 2, "invalid choice: 'some'")
    expect_refusal(TINY + ['--tensor-model-parallel-size', '2'], 1,
                   'world size (1) is not divisible by total_model_size (2)')
    expect_refusal(TINY + ['--tensor-model-parallel-size', '2'], 1,
                   'tensor_model_parallel_size is 2 but minigpt implements data parallelism only',
                   env={'WORLD_SIZE': '2', 'RANK': '0'})
    expect_refusal(TINY + ['--global-batch-size', '6', '--micro-batch-size', '4'], 1,
                   'global batch size (6) is not divisible by micro batch size (4) times data '
                   'parallel size (1)')
    expect_refusal(TINY + ['--recompute-granularity', 'full'], 1,
                   'recompute_method must be "block" or "uniform"')
    expect_refusal(TINY + ['--recompute-granularity', 'selective', '--recompute-method', 'block'],
                   1, 'recompute method is not yet supported for selective recomputing granularity')
    expect_refusal(TINY + ['--max-position-embeddings', '16'], 1,
                   'max_position_embeddings (16) must be greater than or equal to seq_length (32)')
    help_text = run(['--help']).stdout
    for flag in ('--micro-batch-size', '--global-batch-size', '--recompute-granularity',
                 '--recompute-method', '--recompute-num-layers', '--bf16', '--log-throughput',
                 '--calculate-per-token-loss', '--tensor-model-parallel-size'):
        check(flag in help_text, '--help does not list {}'.format(flag))
    print('ok')


if __name__ == '__main__':
    main()
