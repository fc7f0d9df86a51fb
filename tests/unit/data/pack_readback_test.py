"""`attune data pack` writes what Megatron's indexed dataset reader expects, checked by an
independent numpy reader (datatest.read_indexed): header, version, dtype code, contiguous
pointers, one document per row; every row exactly --seq-length tokens; the tokens are the encoded
documents with their EOD token, in order (greedy) or each whole inside one row (best-fit, no
split); the loss mask marks assistant tokens only; bad rows are counted with their line numbers
and never stop the run; the manifest's counts match the files."""

import json
import os
import sys
import tempfile

import numpy as np

from datatest import check, corpus, encode, read_indexed, run, train_sentencepiece

SEQ = 64


def write_text_rows(path):
    """Text rows with bad rows at known lines: 5 (not JSON), 9 (no field), 13 (invalid UTF-8)."""
    texts = corpus.lines(300, seed=5)
    with open(path, "wb") as f:
        for i, t in enumerate(texts, start=1):
            if i == 5:
                f.write(b"{not json\n")
            elif i == 9:
                f.write(b'{"other": "x"}\n')
            elif i == 13:
                f.write(b'{"text": "bad \xff byte"}\n')
            else:
                f.write((json.dumps({"text": t}, ensure_ascii=False) + "\n").encode())
    return {5: "invalid_json", 9: "missing_field", 13: "invalid_utf8"}


def write_chat_rows(path):
    texts = [" ".join(t.split()) or "x" for t in corpus.lines(200, seed=11)]
    with open(path, "w", encoding="utf-8") as f:
        for i in range(0, len(texts) - 3, 3):
            msgs = [{"role": "system", "content": "be brief"},
                    {"role": "user", "content": texts[i]},
                    {"role": "assistant", "content": texts[i + 1]}]
            if i % 2:
                msgs += [{"role": "user", "content": texts[i + 2]},
                         {"role": "assistant", "content": [{"type": "text", "text": texts[i]}]}]
            f.write(json.dumps({"messages": msgs}, ensure_ascii=False) + "\n")
        f.write(json.dumps({"messages": [{"role": "narrator", "content": "?"}]}) + "\n")


def pack(attune, model, data, prefix, *extra, seq=SEQ):
    out = run([attune, "data", "pack", "--no-progress", "--json", "--tokenizer", model, data,
               "--seq-length", str(seq), "-o", prefix, *extra])
    return json.loads(out.stdout)["manifest"]


def check_layout(prefix, manifest, seq=SEQ):
    dtype, rows, docs = read_indexed(prefix)
    check(dtype == np.uint16, f"token dtype {dtype} (vocab < 65500 must be uint16, code 8)")
    check(all(len(r) == seq for r in rows), "a row is not --seq-length tokens")
    check(np.array_equal(docs, np.arange(len(rows) + 1)), "document indices are not 0..rows")
    mdtype, masks, mdocs = read_indexed(prefix + "_loss_mask")
    check(mdtype == np.uint8 and len(masks) == len(rows), "mask dataset: dtype or row count")
    check(np.array_equal(mdocs, docs), "mask dataset: document indices differ")
    check(manifest["counts"]["rows"] == len(rows), "manifest rows")
    mask = np.stack(masks)
    check(int(mask.sum()) == manifest["counts"]["loss_tokens"], "manifest loss tokens")
    per_row = mask.sum(axis=1)
    check(manifest["loss_tokens_per_row"]["min"] == per_row.min() and
          manifest["loss_tokens_per_row"]["max"] == per_row.max(), "manifest loss tokens per row")
    return np.stack(rows).astype(np.int64), mask


def test_greedy_text(attune, model, tmp):
    data = os.path.join(tmp, "text.jsonl")
    bad = write_text_rows(data)
    prefix = os.path.join(tmp, "greedy")
    manifest = pack(attune, model, data, prefix)
    rows, mask = check_layout(prefix, manifest)
    docs = encode(attune, model, data)
    eod = manifest["eod_id"]
    check(eod == 2, f"eod id {eod} (the model's EOS is 2)")
    stream = np.concatenate([np.array(ids + [eod]) for _, (ids, _) in sorted(docs.items())])
    flat = rows.reshape(-1)
    check(np.array_equal(flat[:len(stream)], stream), "greedy rows are not the documents in order")
    check(np.all(flat[len(stream):] == manifest["pad_id"]), "the tail is not padding")
    check(np.all(mask.reshape(-1)[:len(stream)] == 1) and np.all(mask.reshape(-1)[len(stream):] == 0),
          "text rows: every token is a target, padding is not")
    check(manifest["counts"]["pad_tokens"] == rows.size - len(stream), "manifest pad tokens")
    check(manifest["counts"]["split_documents"] > 0 and manifest["documents_split"], "split count")
    got = {r["line"]: r["kind"] for r in manifest["bad_rows"]["first"]}
    check(got == bad, f"bad rows {got}, expected {bad}")
    check(manifest["counts"]["documents"] == 297 and manifest["counts"]["bad_rows"] == 3, "counts")
    check(manifest["tokenizer"]["kind"] == "sentencepiece" and len(manifest["tokenizer"]["sha256"]) == 64,
          "manifest tokenizer")
    print(f"ok greedy/split text: {len(rows)} rows, {len(stream)} tokens in order, bad rows {sorted(bad)}")


def test_best_fit_chat(attune, model, tmp):
    data = os.path.join(tmp, "chat.jsonl")
    write_chat_rows(data)
    prefix = os.path.join(tmp, "bestfit")
    seq = 4 * SEQ
    manifest = pack(attune, model, data, prefix, "--messages", "--strategy", "best-fit", "--no-split",
                    seq=seq)
    rows, mask = check_layout(prefix, manifest, seq)
    docs = encode(attune, model, data, "--messages")
    eod = manifest["eod_id"]
    check(manifest["rows_format"]["chat_template"] == "llama2", "auto template for a model with <s> </s>")
    placed = 0
    for line, (ids, m) in docs.items():
        if ids[-1] != eod:  # a template that ends with the EOD token gets no second one
            ids, m = ids + [eod], m + [m[-1]]
        n = min(len(ids), seq)
        found = False
        for r in range(len(rows)):
            for s in range(0, seq - n + 1):
                if rows[r, s] == ids[0] and np.array_equal(rows[r, s:s + n], ids[:n]) and \
                        np.array_equal(mask[r, s:s + n], m[:n]):
                    found = True
                    break
            if found:
                break
        check(found, f"line {line}: the document is not whole (with its mask) inside one row")
        placed += 1
    check(manifest["counts"]["split_documents"] == 0 and not manifest["documents_split"], "no split")
    user_only = sum(1 for _, (_, m) in docs.items() if sum(m) == 0)
    check(user_only == 0, "every chat has assistant tokens")
    check(0 < manifest["counts"]["loss_tokens"] < rows.size - manifest["counts"]["pad_tokens"],
          "only assistant tokens are targets")
    check(manifest["bad_rows"]["first"][0]["kind"] == "bad_messages", "unknown role is a bad row")
    check(manifest["padding_share"] < 0.5, f"best-fit padding {manifest['padding_share']}")
    check(len(rows) < placed, "best-fit put several documents into a row")
    print(f"ok best-fit/no-split chat: {placed} documents whole in {len(rows)} rows, "
          f"padding {manifest['padding_share']:.3f}")


def main():
    attune = sys.argv[1]
    with tempfile.TemporaryDirectory() as tmp:
        model = train_sentencepiece(tmp)
        test_greedy_text(attune, model, tmp)
        test_best_fit_chat(attune, model, tmp)
    print("2 passed, 0 failed")


if __name__ == "__main__":
    main()
