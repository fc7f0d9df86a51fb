"""minigpt trains from data packed by `attune data pack` (--data-path, as Megatron's flag), and on
fixed-length unmasked rows the micro-batch size leaves the losses unchanged even without
--calculate-per-token-loss (every micro-batch has the same number of loss tokens), while the data
itself does matter (the losses differ from minigpt's synthetic data)."""

import os
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "minigpt"))
import minigpt_testlib as mg  # noqa: E402
from datatest import check, corpus, run, train_sentencepiece  # noqa: E402

SEQ = 32
VOCAB = 320
COMMON = ["--num-layers", "2", "--hidden-size", "64", "--num-attention-heads", "2",
          "--seq-length", str(SEQ), "--max-position-embeddings", str(SEQ), "--vocab-size", str(VOCAB),
          "--global-batch-size", "8", "--train-iters", "4", "--log-interval", "1", "--lr", "3e-3"]
TOLERANCE = 1e-4  # relative, fp32 (tools/minigpt/README.md)


def losses(flags):
    out = mg.run(COMMON + flags).stdout
    got = mg.losses(out)
    check(len(got) == 4, f"expected 4 loss lines, got {len(got)}:\n{out[-1500:]}")
    return got, out


def main():
    attune = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        model = train_sentencepiece(tmp, VOCAB)
        data = os.path.join(tmp, "d.jsonl")
        corpus.write_jsonl(data, 400, seed=3)
        prefix = os.path.join(tmp, "packed")
        run([attune, "data", "pack", "--no-progress", "--tokenizer", model, data,
             "--seq-length", str(SEQ), "-o", prefix])
        base, out = losses(["--data-path", prefix, "--micro-batch-size", "1"])
        check("indexed dataset:" in out, "minigpt did not say it read the indexed dataset")
        for mbs in (2, 4):
            other, _ = losses(["--data-path", prefix, "--micro-batch-size", str(mbs)])
            worst = max(abs(a - b) / abs(a) for a, b in zip(base, other))
            check(worst <= TOLERANCE, f"mbs {mbs}: losses {other} vs {base} (rel {worst:.2e})")
            print(f"ok packed data, micro-batch 1 vs {mbs} without per-token loss: rel diff {worst:.1e}")
        synthetic, _ = losses(["--micro-batch-size", "1"])
        check(max(abs(a - b) for a, b in zip(base, synthetic)) > 1e-3,
              f"packed and synthetic data give the same losses: {base} {synthetic}")
        refused = mg.run(COMMON + ["--data-path", prefix, "--vocab-size", "100"], check=False)
        check(refused.returncode != 0 and "--vocab-size" in refused.stdout,
              "a token id above --vocab-size must be refused")
        print("ok the data changes the losses; ids beyond --vocab-size are refused")
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main()
