"""A deterministic corpus of varied text for tokenizer checks and benchmarks.

Every line is a JSON object {"text": ...}. The fragments cover what breaks tokenizers: code with
indentation and tabs, CRLF and runs of blank lines, CJK, kana, Hangul, right-to-left scripts,
combining marks (NFC and NFD forms), emoji with skin tones, ZWJ sequences and flags, unusual white
space (NBSP, em space, ideographic space, NEL, zero-width space, BOM), digit runs in several
scripts, contractions in any case, special tokens of several tokenizers (whole and partial), and
strings that look like escapes or byte tokens.
"""

import json
import random

_FRAGMENTS = [
    # prose and contractions
    "The quick brown fox jumps over the lazy dog.", "I'm sure they'll say it's fine, aren't they?",
    "DON'T SHOUT: WE'LL HEAR YOU'RE HERE", "she'S he'LL we'Re they'VE I'D", "O'Neill's  café",
    "Hello world", "  leading spaces", "trailing spaces   ", "mixed\tTabs\tand  spaces",
    # code
    "def f(x):\n    return x ** 2  # square\n", "for (int i = 0; i < n; ++i) {\n\tsum += a[i];\n}",
    '{"key": [1, 2.5e-3, null, true], "nested": {"a": "b"}}', "if [ -f \"$1\" ]; then echo ok; fi",
    "#include <vector>\r\nint main() { return 0; }\r\n", "x=1;y=2;z=x+y;;;", "a->b::c<<=d>>=e!==f",
    "    \n        \n\n\n\tindented\n", "SELECT * FROM t WHERE id IN (1,2,3);",
    # scripts
    "日本語のテキストです。カタカナもひらがなも。", "中文分词测试，包含标点符号！", "한국어 문장도 있습니다.",
    "العربية نص من اليمين إلى اليسار", "עברית גם כן", "हिन्दी में लिखा गया वाक्य", "ภาษาไทยไม่มีช่องว่าง",
    "Ελληνικά κείμενα", "Русский текст с ёлкой", "Tiếng Việt có dấu", "ﬁligature ﬀ",
    # normalization forms
    "e\u0301 versus \u00e9", "A\u030a and \u00c5 and \u212b", "\u0301leading combining mark",
    "n\u0303o\u0308\u0304", "\uff21\uff22\uff23 full width", "\u2460\u2461 circled",
    # emoji
    "😀👍🏽", "👨‍👩‍👧‍👦 family", "🏳️‍🌈 flag", "🇫🇷🇯🇵 flags", "1️⃣ keycap", "🤖🧪✨", "❤️‍🔥",
    # white space
    "\u00a0nbsp\u00a0", "em\u2003space", "ideo\u3000space", "nel\u0085line", "zero\u200bwidth",
    "\ufeffbom", "\r\n\r\n", "\n\n\n\n", "          ", "\t\t\t", " \n \n ", "\u2028\u2029",
    # numbers
    "1234567890", "3.14159265358979", "1,000,000", "١٢٣٤٥", "१२३", "０１２３", "2^64 = 18446744073709551616",
    # special tokens, whole and partial
    "<|begin_of_text|>", "<|end_of_text|>", "<|eot_id|>", "<|start_header_id|>user<|end_header_id|>",
    "<|im_start|>assistant\nhi<|im_end|>", "<|endoftext|>", "<s>", "</s>", "<unk>", "<s> </s>",
    "<｜User｜>", "<｜Assistant｜>", "<｜end▁of▁sentence｜>", "<|im_", "<|begin_of_text", "< s>",
    "<|reserved_special_token_5|>", "[INST] q [/INST]",
    # invalid-looking
    "\\xff\\xfe", "\ufffd replacement", "<0x41><0xFF>", "▁▁under", "Ġhello Ċ", "\u0001\u0002ctrl",
    "\\u0000", "%00%ff", "&#x1F600;", "💩" * 3, "a" * 40, "ab" * 25, "!!!???...", "—–-‒",
]

_SEPARATORS = ["", " ", "  ", "\n", "\t", " \n", "\r\n", "\u3000", ". ", ", "]


def lines(count, seed=20251203):
    """`count` texts, deterministic for a seed."""
    rng = random.Random(seed)
    out = []
    for i in range(count):
        if i < len(_FRAGMENTS):
            out.append(_FRAGMENTS[i])  # every fragment alone once
            continue
        parts = [rng.choice(_FRAGMENTS) for _ in range(rng.randint(1, 6))]
        text = ""
        for p in parts:
            text += p + rng.choice(_SEPARATORS)
        out.append(text)
    return out


def write_jsonl(path, count, seed=20251203):
    with open(path, "w", encoding="utf-8") as f:
        for text in lines(count, seed):
            f.write(json.dumps({"text": text}, ensure_ascii=False) + "\n")
