"""Helpers for the `attune data` tests: a small SentencePiece model trained here with Debian's
spm_train, an independent reader of Megatron's indexed dataset (numpy, after the layout documented
in megatron/core/datasets/indexed_dataset.py, not attune's code), and running attune."""

import json
import os
import subprocess
import sys

import numpy as np

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

HEADER = b"MMIDIDX\x00\x00"
DTYPES = {1: np.uint8, 2: np.int8, 3: np.int16, 4: np.int32, 5: np.int64, 6: np.float64,
          7: np.float32, 8: np.uint16}


def fail(message):
    print("FAIL: " + message)
    sys.exit(1)


def check(cond, message):
    if not cond:
        fail(message)


def run(cmd, expect=0):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != expect:
        fail(f"{' '.join(cmd)} exited {proc.returncode} (expected {expect}):\n"
             f"{proc.stdout[-2000:]}\n{proc.stderr[-3000:]}")
    return proc


def train_sentencepiece(tmp, vocab_size=320):
    """A BPE SentencePiece model over single-line texts of the corpus (bos 1, eos 2, pad 3)."""
    text = os.path.join(tmp, "sp_corpus.txt")
    with open(text, "w", encoding="utf-8") as f:
        for line in corpus.lines(1500, seed=7):
            f.write(" ".join(line.split()) + "\n")
    prefix = os.path.join(tmp, "tiny")
    run(["spm_train", f"--input={text}", f"--model_prefix={prefix}", f"--vocab_size={vocab_size}",
         "--model_type=bpe", "--character_coverage=0.995", "--pad_id=3", "--minloglevel=2"])
    return prefix + ".model"


def read_indexed(prefix):
    """(dtype, sequences as a list of arrays, document_indices) of PREFIX.bin/PREFIX.idx."""
    with open(prefix + ".idx", "rb") as f:
        idx = f.read()
    check(idx[:9] == HEADER, f"{prefix}.idx: header {idx[:9]!r}")
    version = int.from_bytes(idx[9:17], "little")
    check(version == 1, f"{prefix}.idx: version {version}")
    dtype = DTYPES[idx[17]]
    count = int.from_bytes(idx[18:26], "little")
    doc_count = int.from_bytes(idx[26:34], "little")
    off = 34
    lengths = np.frombuffer(idx, dtype="<i4", count=count, offset=off)
    off += 4 * count
    pointers = np.frombuffer(idx, dtype="<i8", count=count, offset=off)
    off += 8 * count
    documents = np.frombuffer(idx, dtype="<i8", count=doc_count, offset=off)
    off += 8 * doc_count
    check(off == len(idx), f"{prefix}.idx: {len(idx) - off} bytes after the document indices")
    data = np.fromfile(prefix + ".bin", dtype=np.dtype(dtype).newbyteorder("<"))
    size = np.dtype(dtype).itemsize
    check(int(lengths.sum()) * size == os.path.getsize(prefix + ".bin"),
          f"{prefix}.bin: size does not match the lengths")
    expected_pointers = np.concatenate([[0], np.cumsum(lengths.astype(np.int64))[:-1]]) * size
    check(np.array_equal(pointers, expected_pointers), f"{prefix}.idx: pointers are not contiguous")
    sequences = [data[p // size:p // size + n] for p, n in zip(pointers, lengths)]
    return dtype, sequences, documents


def encode(attune, tokenizer, data, *extra):
    """{line: (ids, mask)} from `attune data encode`."""
    out = run([attune, "data", "encode", "--no-progress", "--tokenizer", tokenizer, data, *extra])
    rows = {}
    for line in out.stdout.splitlines():
        j = json.loads(line)
        rows[j["line"]] = (j["ids"], j.get("mask", [1] * len(j["ids"])))
    return rows
