#!/usr/bin/env python3
# Copyright attune authors.
"""Lists the top-level sections of NeMo AutoModel's recipe configs, over its releases.

Writes stacks/automodel/config_sections.txt. An AutoModel recipe reads the sections it knows
(step_scheduler, distributed, model, dataset, ...) and never looks at any other, so a misspelt
section (`step_schedular:`) is ignored without a word and the run goes on with that section's
defaults (a global batch of 32, a local batch of 1). The AutoModel stack reads this list to refuse
a top-level key that is not one of them but is near one. Run it against an AutoModel clone when a
new release comes out:

    tools/automodel_sections.py /path/to/Automodel > stacks/automodel/config_sections.txt

Each release tag (v*, no release candidates) and HEAD is read without running anything: the
top-level keys of every YAML file under examples/ (the recipes' configs), except keys that start
with '_' (YAML anchors and switched-off sections by the repository's convention), and the sections
the recipes' code asks the config for (`self.cfg.get("mlflow", ...)`, `cfg.get("step_scheduler.x")`
in nemo_automodel/recipes/), which no example may use.

One section is closed: the keys of `step_scheduler` are the keyword arguments of the
StepScheduler class (or the fields of the StepSchedulerConfig dataclass of later releases), the
keys a recipe reads itself (`cfg.get("step_scheduler.log_every")`) and those the examples give.
The LLM and VLM recipes pass the section to StepScheduler whole, so they stop at start on any
other key (TypeError: unexpected keyword argument); recipes that pick keys ignore it. Its keys are
listed as `step_scheduler.KEY` lines; step_scheduler.py is read with Python's ast module.
"""

import ast
import re
import sys

import yaml

from release_lists import git, print_list, release_revisions


class Loader(yaml.SafeLoader):
    """Reads the examples' custom tags (!!python/name, OmegaConf-style) as plain values."""


Loader.add_multi_constructor("", lambda loader, suffix, node: None)


def load(text):
    try:
        doc = yaml.load(text, Loader=Loader)
    except yaml.YAMLError:
        return {}
    return doc if isinstance(doc, dict) else {}


def sections(doc):
    return {k for k in doc if isinstance(k, str) and not k.startswith("_")}


def given_scheduler_keys(doc):
    section = doc.get("step_scheduler")
    return {k for k in section if isinstance(k, str)} if isinstance(section, dict) else set()


SCHEDULER_GET = re.compile(r"\.get\(\s*[\"']step_scheduler\.([a-z_][a-z0-9_]*)")
CODE_GET = re.compile(r"(?:self\.cfg|self\._raw|(?<![\w.])cfg)\.get\(\s*[\"']([a-z_][a-z0-9_]*)")


def code_sections(text):
    return set(CODE_GET.findall(text))


STEP_SCHEDULER = "nemo_automodel/components/training/step_scheduler.py"


def step_scheduler_keys(text):
    """StepScheduler.__init__'s keyword names and StepSchedulerConfig's fields."""
    keys = set()
    for node in ast.walk(ast.parse(text)):
        if not isinstance(node, ast.ClassDef):
            continue
        if node.name == "StepScheduler":
            for item in node.body:
                if isinstance(item, ast.FunctionDef) and item.name == "__init__":
                    args = item.args.args[1:] + item.args.kwonlyargs
                    keys |= {a.arg for a in args}
        elif node.name == "StepSchedulerConfig":
            keys |= {item.target.id for item in node.body
                     if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name)}
    return keys


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/automodel_sections.py AUTOMODEL_CLONE > stacks/automodel/config_sections.txt")
    clone = sys.argv[1]
    revs = release_revisions(clone)
    found = set()
    scheduler = set()
    for rev in revs:
        names = [n for n in git(clone, "ls-tree", "-r", "--name-only", rev, "examples").split()
                 if n.endswith((".yaml", ".yml"))]
        if not names:
            sys.exit(f"{rev}: no examples/*.yaml; is {clone} an AutoModel clone?")
        here = set()
        for name in names:
            doc = load(git(clone, "show", f"{rev}:{name}"))
            here |= sections(doc)
            scheduler |= given_scheduler_keys(doc)
        code = set()
        for name in git(clone, "ls-tree", "-r", "--name-only", rev, "nemo_automodel/recipes").split():
            if name.endswith(".py"):
                text = git(clone, "show", f"{rev}:{name}")
                code |= code_sections(text)
                scheduler |= set(SCHEDULER_GET.findall(text))
        found |= here | code
        keys = step_scheduler_keys(git(clone, "show", f"{rev}:{STEP_SCHEDULER}"))
        if not keys:
            sys.exit(f"{rev}: no StepScheduler keyword arguments in {STEP_SCHEDULER}")
        scheduler |= keys
        print(f"{rev}: {len(here)} sections in {len(names)} example configs, {len(code)} asked for "
              f"by the recipes' code", file=sys.stderr)
    print_list(["The top-level sections of NeMo AutoModel's recipe configs (examples/**/*.yaml, and those",
                "its recipes' code asks for) in any of the revisions below. Generated by",
                "tools/automodel_sections.py from",
                "NVIDIA-NeMo/Automodel; do not edit by hand. A 'section.key' line lists a key of a",
                "closed section (one whose every key AutoModel checks)."],
               revs, sorted(found) + ["step_scheduler." + key for key in sorted(scheduler)])


if __name__ == "__main__":
    main()
