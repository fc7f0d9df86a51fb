// The reference side of tokenizer_reference_test.py: encodes the "text" of every line of a JSONL
// file with Tokenizers.js (@huggingface/tokenizers) and prints {"line", "ids"} per line, in the
// same form as `attune data encode`.
//   node reference_encode.mjs TOKENIZERS_DIR TOKENIZER_MODELS_DIR DATA.jsonl
import { createRequire } from "module";
import fs from "fs";

const [packagesDir, modelDir, dataPath] = process.argv.slice(2);
const require = createRequire(`${packagesDir}/package.json`);
const { Tokenizer } = require("@huggingface/tokenizers");
const read = (p) => JSON.parse(fs.readFileSync(p, "utf8"));
const tokenizer = new Tokenizer(read(`${modelDir}/tokenizer.json`),
                                read(`${modelDir}/tokenizer_config.json`));
const out = [];
const lines = fs.readFileSync(dataPath, "utf8").split("\n");
const started = process.hrtime.bigint();
let tokens = 0;
lines.forEach((line, i) => {
  if (line.trim() === "") return;
  const ids = tokenizer.encode(JSON.parse(line).text).ids;
  tokens += ids.length;
  out.push(JSON.stringify({ line: i + 1, ids }));
});
const seconds = Number(process.hrtime.bigint() - started) / 1e9;
if (process.env.ATTUNE_BENCH_ONLY) {
  process.stdout.write(JSON.stringify({ tokens, seconds }) + "\n");
} else {
  process.stdout.write(out.join("\n") + "\n");
}
