"""A SentencePiece .model goes through libsentencepiece: `attune data encode` gives the ids of
Debian's spm_encode, with the model's BOS in front (add_special_tokens, as the Llama tokenizer)."""

import json
import os
import sys
import tempfile

from datatest import check, corpus, encode, run, train_sentencepiece


def main():
    attune = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        model = train_sentencepiece(tmp)
        texts = [" ".join(t.split()) for t in corpus.lines(800, seed=99)]
        texts = [t for t in texts if t]
        data = os.path.join(tmp, "d.jsonl")
        with open(data, "w", encoding="utf-8") as f:
            for t in texts:
                f.write(json.dumps({"text": t}, ensure_ascii=False) + "\n")
        plain = os.path.join(tmp, "d.txt")
        with open(plain, "w", encoding="utf-8") as f:
            f.write("\n".join(texts) + "\n")
        ref = run(["spm_encode", f"--model={model}", "--output_format=id", f"--input={plain}"])
        ref_ids = [[int(x) for x in l.split()] for l in ref.stdout.splitlines()]
        ours = encode(attune, model, data)
        check(len(ours) == len(texts) == len(ref_ids), f"rows: {len(ours)} {len(texts)} {len(ref_ids)}")
        for i, want in enumerate(ref_ids):
            ids, _ = ours[i + 1]
            check(ids[0] == 1, f"line {i + 1}: no BOS: {ids[:3]}")
            check(ids[1:] == want, f"line {i + 1}: {texts[i]!r}\n attune {ids[1:]}\n spm    {want}")
        print(f"ok: {len(texts)} lines, ids equal spm_encode's")
    print("1 passed, 0 failed")


if __name__ == "__main__":
    main()
