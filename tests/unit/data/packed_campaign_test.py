"""A campaign on packed data: minigpt reads rows written by `attune data pack` (--data-path), the
grid agent changes the micro-batch size, and the candidate's first losses equal the baseline's on
the same packed rows: through the engine's paired-loss check when the candidate leads, directly
from the recorded first losses when this machine's load made it no faster. Twice: with --calculate-per-token-loss, and
without it but with the recipe's data declaration (fixed_length: true, loss_mask: none), which is
what lets the gate allow the change. Real processes through the local launcher.

  python3 packed_campaign_test.py ATTUNE_BIN REPO
"""

import json
import os
import subprocess
import sys
import tempfile

from datatest import check, corpus, run, train_sentencepiece

SEQ = 32
VOCAB = 320

RECIPE = """stack: megatron
entry: [/usr/bin/python3, tools/minigpt/pretrain_gpt.py]
launcher_hint: python
args:
  - [--num-layers, "2"]
  - [--hidden-size, "64"]
  - [--num-attention-heads, "2"]
  - [--seq-length, "{seq}"]
  - [--max-position-embeddings, "{seq}"]
  - [--vocab-size, "{vocab}"]
  - [--data-path, "{prefix}"]
  - [--micro-batch-size, "1"]
  - [--global-batch-size, "16"]
  - [--train-iters, "8"]
  - [--lr, "3e-3"]
  - [--seed, "1234"]
{loss_flag}  - [--log-interval, "1"]
  - [--log-throughput]
env:
  OMP_NUM_THREADS: "1"
  OMP_WAIT_POLICY: PASSIVE
{data}topology: {{nodes: 1, gpus_per_node: 1, gpu_type: cpu}}
"""

# Two ways the micro-batch lever is allowed on packed data: per-token loss, or (without it) the
# recipe's declaration that every sample is full-length and unmasked (docs/recipes.md).
VARIANTS = {
    "per-token loss": {"loss_flag": "  - [--calculate-per-token-loss]\n", "data": ""},
    "data declaration": {"loss_flag": "", "data": "data: {{fixed_length: true, loss_mask: none}}\n"},
}

# The test is about the gate and the paired-loss check, not about speed: noise band 0, so that the
# micro-batch-4 candidate (one micro-batch instead of four) leads whenever it is faster at all,
# also on a CPU shared with other tests (a 5% band failed there once in several runs). With a
# single run the band still adapts to the run's own noise (2 cv / sqrt(iterations)), so the
# candidate must be clearly faster: a global batch of 16 is 16 micro-batches of 1 against 4 of 4
# (1.3-1.7x faster on a 2-core machine under load; with a batch of 4 the two were within 7% of
# each other, either way round). Under heavy load it may still not lead; the test then compares
# the recorded first losses itself.
WORKFLOW = """attune: 1
name: packed-data
stack: megatron
recipe: {recipe}
launcher: {{name: local, with: {{devices_per_node: 1, poll_interval_s: 0.2}}}}
agent: {{name: grid, with: {{space: {{--micro-batch-size: ["4"]}}}}}}
seed: 7
budget: {{gpu_hours: 0.5, max_candidates: 1, job_time_limit_s: 120}}
measure: {{noise_band: 0.0, repeats: 1}}
gate: {{loss_rel_tolerance: 0.0001, paired_losses: 4}}
steps:
  - {{id: baseline, uses: benchmark, with: {{repeats: 1}}}}
  - {{id: tune, uses: tune}}
  - {{id: report, uses: report}}
"""


def main():
    attune, repo = sys.argv[1], sys.argv[2]
    with tempfile.TemporaryDirectory() as tmp:
        model = train_sentencepiece(tmp, VOCAB)
        data = os.path.join(tmp, "d.jsonl")
        corpus.write_jsonl(data, 300, seed=21)
        prefix = os.path.join(tmp, "packed")
        run([attune, "data", "pack", "--no-progress", "--tokenizer", model, data,
             "--seq-length", str(SEQ), "-o", prefix])
        for name, variant in VARIANTS.items():
            sub = os.path.join(tmp, name.replace(" ", "-"))
            os.makedirs(sub)
            recipe = os.path.join(sub, "recipe.yaml")
            with open(recipe, "w") as f:
                f.write(RECIPE.format(seq=SEQ, vocab=VOCAB, prefix=prefix, loss_flag=variant["loss_flag"],
                                      data=variant["data"].format()))
            workflow = os.path.join(sub, "wf.yaml")
            with open(workflow, "w") as f:
                f.write(WORKFLOW.format(recipe=recipe))
            campaign = os.path.join(sub, "campaign")
            proc = subprocess.run([attune, "run", workflow, "--dir", campaign], cwd=repo,
                                  capture_output=True, text=True, timeout=600)
            check(proc.returncode == 0, f"{name}: attune run exited {proc.returncode}:\n{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}")
            events = run([attune, "events", campaign, "--json"]).stdout
            records = [json.loads(l) for l in events.splitlines() if l.strip()]
            if len(records) == 1 and isinstance(records[0], list):
                records = records[0]
            verdicts = [e["data"] for e in records if e.get("type") == "GateVerdict"]
            check(len(verdicts) == 1 and verdicts[0]["pass"] is True, f"{name}: gate verdicts {verdicts}")
            paired = [e for e in records if e.get("type") == "PairedLossChecked"]
            if paired:
                # The candidate led, so the engine's own paired-loss check ran before the leader moved.
                check(len(paired) == 1, f"{name}: expected one PairedLossChecked event, found {len(paired)}")
                data_ = paired[0]["data"]
                check(data_["pass"] is True, f"{name}: paired-loss check failed on packed data: {data_}")
                check(data_["compared"] == 4, f"{name}: compared {data_['compared']} losses")
                print(f"ok {name}: micro-batch 1 -> 4 on packed data: paired losses pass (max rel diff "
                      f"{data_['max_rel_diff']:.1e})")
            else:
                # The engine checks losses only for a candidate that would lead; on a loaded machine
                # micro-batch 4 is not always faster. The property under test does not depend on
                # speed: compare the first losses the two measured jobs recorded, with the gate's
                # tolerance.
                ranked = [e["data"] for e in records if e.get("type") == "CandidateRanked"]
                check(len(ranked) == 1 and ranked[0]["outcome"] in ("slower", "within_noise"),
                      f"{name}: the micro-batch 4 candidate neither led nor measured: {ranked}")
                owner = {e["data"]["job"]: e["data"]["candidate"] for e in records
                         if e.get("type") == "JobRequested"}
                losses = {}
                for e in records:
                    d = e["data"] if e.get("type") == "JobFinished" else None
                    if d and d.get("measurement"):
                        losses.setdefault(owner[d["job"]], d["measurement"]["first_losses"])
                base, cand = losses.get("baseline", []), losses.get("c001", [])
                check(len(base) >= 4 and len(cand) >= 4, f"{name}: first losses baseline {base}, c001 {cand}")
                diff = max((abs(c - b) / abs(b) for b, c in zip(base[:4], cand[:4])), default=1.0)
                check(diff <= 1e-4, f"{name}: micro-batch changed the first losses on packed data: "
                                    f"baseline {base[:4]}, candidate {cand[:4]} (max rel diff {diff:.1e})")
                print(f"ok {name}: micro-batch 1 -> 4 on packed data ({ranked[0]['outcome']} here, so "
                      f"compared directly): first losses equal (max rel diff {diff:.1e})")
    print(f"{len(VARIANTS)} variants run")


if __name__ == "__main__":
    main()
