"""minigpt prints Megatron-LM's iteration, memory and marker lines exactly (reference section 3)."""

import os
import shutil
import tempfile

from minigpt_testlib import ITERATION_RE, MEMORY_RE, TINY, check, iteration_records, run


def main():
    flags = TINY + ['--train-iters', '5', '--log-interval', '2', '--log-throughput']
    out = run(flags).stdout
    lines = out.splitlines()
    iteration_lines = [line for line in lines if ' iteration ' in line and ' | ' in line]
    check(len(iteration_lines) == 3, 'expected lines for iterations 1, 2, 4:\n' + out)
    for line in iteration_lines:
        check(ITERATION_RE.match(line) is not None, 'not Megatron format: ' + line)
    records = iteration_records(out)
    check([int(r['it']) for r in records] == [1, 2, 4], 'iterations: {}'.format(records))
    check([int(r['consumed']) for r in records] == [8, 16, 32], 'consumed samples')
    check(all(int(r['total']) == 5 and int(r['gbs']) == 8 for r in records), 'totals')
    check(all(r['tflops'] is not None for r in records), 'throughput field missing')
    check(records[0]['scale'] == '1.0', 'loss scale')
    # Megatron reports memory on the first log line and the next one, then stops.
    memory = [line for line in lines if MEMORY_RE.match(line)]
    check([MEMORY_RE.match(m).group(2) for m in memory] == ['1', '2'], 'memory lines: {}'.format(
        memory))
    for marker in ('training ...', 'done with setup ...',
                   '------------------------ arguments ------------------------',
                   '-------------------- end of arguments ---------------------'):
        check(marker in lines, 'missing line: ' + marker)
    check(any(line.startswith('  micro_batch_size ') and line.endswith(' 1') for line in lines),
          'argument dump lacks micro_batch_size')
    check(any(line.startswith('[before the start of training step] datetime: ') for line in lines),
          'missing datetime marker')
    no_throughput = iteration_records(run(TINY + ['--train-iters', '1']).stdout)
    check(len(no_throughput) == 1 and no_throughput[0]['tflops'] is None,
          'throughput must only be printed with --log-throughput')
    # Two data-parallel ranks share one stdout: every line must still be whole (one write per
    # line, even under PYTHONUNBUFFERED=1).
    for _ in range(2):
        # In a temp directory of its own: torchrun_compat must leave nothing there (torch 1.13's
        # torchrun leaves a torchelastic_* folder per run without --log-dir).
        scratch = tempfile.mkdtemp(prefix='minigpt-tmp-')
        dp_out = run(TINY, env={'PYTHONUNBUFFERED': '1', 'TMPDIR': scratch}, nproc=2).stdout
        left = os.listdir(scratch)
        shutil.rmtree(scratch, ignore_errors=True)
        check(left == [], 'torchrun_compat left in the temp directory: {}'.format(left))
        dp_records = iteration_records(dp_out)
        check([int(r['it']) for r in dp_records] == [1, 2, 3, 4],
              'data-parallel run: iteration lines broken or missing:\n' + dp_out)
        check(all(MEMORY_RE.match(line) for line in dp_out.splitlines()
                  if line.startswith('[Rank ')), 'data-parallel run: broken memory line')
    print('ok')


if __name__ == '__main__':
    main()
