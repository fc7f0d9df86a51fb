"""Megatron-LM's stdout formats (training_log, report_memory, print_datetime), reproduced exactly.

See reference section 3.2/3.3. The iteration line starts with a space and a bracketed timestamp, and
every field ends with ' |'.
"""

import datetime
import os
import resource
import sys

_MEGA_BYTES = 1024.0 * 1024.0


def emit(text):
    """Writes text and its newline with one write: under PYTHONUNBUFFERED, print() issues two, and
    lines of two data-parallel ranks sharing a pipe would interleave."""
    sys.stdout.write(text + '\n')
    sys.stdout.flush()


def timestamp_prefix():
    return ' [{}]'.format(datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S.%f'))


def iteration_line(fields):
    """fields: dict with iteration, train_iters, consumed, elapsed_ms, tflops (None when throughput
    is not logged), lr, batch_size, losses (ordered dict name->value), loss_scale, grad_norm
    (None to omit), skipped, nan."""
    out = timestamp_prefix()
    out += ' iteration {:8d}/{:8d} |'.format(fields['iteration'], fields['train_iters'])
    out += ' consumed samples: {:12d} |'.format(fields['consumed'])
    out += ' elapsed time per iteration (ms): {:.1f} |'.format(fields['elapsed_ms'])
    if fields['tflops'] is not None:
        out += ' throughput per GPU (TFLOP/s/GPU): {:.1f} |'.format(fields['tflops'])
    out += ' learning rate: {:.6E} |'.format(fields['lr'])
    out += ' global batch size: {:5d} |'.format(fields['batch_size'])
    for key, value in fields['losses'].items():
        if value >= 0.0:
            out += ' {}: {:.6E} |'.format(key, value)
    out += ' loss scale: {:.1f} |'.format(fields['loss_scale'])
    if fields['grad_norm'] is not None:
        out += ' grad norm: {:.3f} |'.format(fields['grad_norm'])
    out += ' number of skipped iterations: {:3d} |'.format(fields['skipped'])
    out += ' number of nan iterations: {:3d} |'.format(fields['nan'])
    return out


def _cpu_memory_mb():
    """(current RSS, peak RSS) of this process in MB (1 MB = 2**20 bytes)."""
    with open('/proc/self/statm') as f:
        resident_pages = int(f.read().split()[1])
    current = resident_pages * os.sysconf('SC_PAGE_SIZE') / _MEGA_BYTES
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024.0  # because Linux gives KB
    return current, max(peak, current)  # because ru_maxrss is only updated now and then


def memory_line(rank, name, cuda):
    """Megatron's report_memory line. On CPU, allocated/reserved are the current RSS and
    max allocated/max reserved the peak RSS of the process (there is no caching allocator)."""
    if cuda:
        import torch
        values = (torch.cuda.memory_allocated() / _MEGA_BYTES,
                  torch.cuda.max_memory_allocated() / _MEGA_BYTES,
                  torch.cuda.memory_reserved() / _MEGA_BYTES,
                  torch.cuda.max_memory_reserved() / _MEGA_BYTES)
    else:
        current, peak = _cpu_memory_mb()
        values = (current, peak, current, peak)
    text = name + ' memory (MB)'
    text += ' | allocated: {:.2f} | max allocated: {:.2f} | reserved: {:.2f} | ' \
            'max reserved: {:.2f}'.format(*values)
    return '[Rank {}] {}'.format(rank, text)


def datetime_line(marker):
    """Megatron's print_datetime: '[marker] datetime: YYYY-MM-DD HH:MM:SS.ffffff '."""
    return '[' + marker + '] datetime: {} '.format(
        datetime.datetime.now().strftime('%Y-%m-%d %H:%M:%S.%f'))
