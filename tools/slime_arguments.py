#!/usr/bin/env python3
# Copyright attune authors.
"""Lists the command-line arguments slime's train.py adds to Megatron-LM's, over its releases.

Writes stacks/slime/arguments.txt. slime parses Megatron-LM's arguments and its own with
ignore_unknown_args=True (so that the --sglang-* flags pass through), so a misspelt flag
(`--rollout-batch-sise`) is dropped without a word and the run goes on with the default. The slime
stack reads this list, with stacks/megatron/arguments.txt, to refuse such a flag before a job runs.
Run it against a slime clone when a new release comes out:

    tools/slime_arguments.py /path/to/slime > stacks/slime/arguments.txt

Each release tag (v*) and HEAD is read, without running anything: the files that build train.py's
parser (slime/utils/arguments.py and slime/backends/*/arguments.py, not the servers' own parsers)
are parsed with Python's ast module, and every literal option string of an add_argument call and of
slime's reset_arg helper is listed. The FSDP backend of the 0.2 releases generates its flags from
the FSDPArgs dataclass: `--` and the field name with dashes. slime's Docker images patch
Megatron-LM (docker/*/megatron*.patch) and some of those patches add arguments (GLM-4's
--post-self-attn-layernorm): the option strings of the add_argument calls on the patches' added
lines are listed too. Two families come from other projects'
parsers at run time and are listed as prefixes (a line ending in '*'): sglang's server arguments,
which slime adds as --sglang-NAME, and sglang-router's, added as --router-NAME.
"""

import ast
import re
import sys

from release_lists import git, print_list, release_revisions

PREFIXES = ["--router-*", "--sglang-*"]
CALLS = {"add_argument", "reset_arg"}
PATCH_OPTION = re.compile(r"add_argument\(\s*((?:['\"]--[^'\"]+['\"]\s*,\s*)+)")
OPTION = re.compile(r"['\"](--[^'\"]+)['\"]")


def parser_files(clone, rev):
    names = git(clone, "ls-tree", "-r", "--name-only", rev, "slime").split()
    out = []
    for name in names:
        if name == "slime/utils/arguments.py":
            out.append(name)
        elif (name.startswith("slime/backends/") and name.endswith("/arguments.py") and
              "/server/" not in name):
            out.append(name)
    return out


def megatron_patches(clone, rev):
    names = git(clone, "ls-tree", "-r", "--name-only", rev, "docker").split()
    return [n for n in names if n.endswith(".patch") and n.rsplit("/", 1)[-1].startswith("megatron")]


def patch_options(text):
    added = "\n".join(line[1:] for line in text.splitlines()
                      if line.startswith("+") and not line.startswith("+++"))
    flags = set()
    for call in PATCH_OPTION.finditer(added):
        flags.update(OPTION.findall(call.group(1)))
    return flags


def call_name(node):
    f = node.func
    if isinstance(f, ast.Attribute):
        return f.attr
    if isinstance(f, ast.Name):
        return f.id
    return ""


def options(source):
    tree = ast.parse(source)
    flags = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Call) and call_name(node) in CALLS:
            for arg in node.args:
                if (isinstance(arg, ast.Constant) and isinstance(arg.value, str) and
                        arg.value.startswith("--") and len(arg.value) > 2):
                    flags.add(arg.value)
        # FSDPArgs-style dataclasses whose fields become --field-name flags.
        if isinstance(node, ast.ClassDef) and node.name.endswith("Args"):
            is_dataclass = any((isinstance(d, ast.Name) and d.id == "dataclass") or
                               (isinstance(d, ast.Call) and call_name(d) == "dataclass")
                               for d in node.decorator_list)
            if not is_dataclass:
                continue
            for item in node.body:
                if isinstance(item, ast.AnnAssign) and isinstance(item.target, ast.Name):
                    flags.add("--" + item.target.id.replace("_", "-"))
    return flags


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: tools/slime_arguments.py SLIME_CLONE > stacks/slime/arguments.txt")
    clone = sys.argv[1]
    revs = release_revisions(clone)
    flags = set()
    for rev in revs:
        files = parser_files(clone, rev)
        if not files:
            sys.exit(f"{rev}: no slime/utils/arguments.py; is {clone} a slime clone?")
        own, patched = set(), set()
        for name in files:
            own |= options(git(clone, "show", f"{rev}:{name}"))
        for name in megatron_patches(clone, rev):
            patched |= patch_options(git(clone, "show", f"{rev}:{name}"))
        flags |= own | patched
        print(f"{rev}: {len(own)} flags in {len(files)} parser files, {len(patched)} added by "
              f"Megatron-LM patches", file=sys.stderr)
    print_list(["The command-line arguments slime's train.py and train_async.py add to Megatron-LM's",
                "(stacks/megatron/arguments.txt), in any of the revisions below; a line ending in '*'",
                "is a prefix (flags slime builds from sglang's and sglang-router's own parsers).",
                "Generated by tools/slime_arguments.py from THUDM/slime; do not edit by hand."],
               revs, PREFIXES + sorted(flags))


if __name__ == "__main__":
    main()
