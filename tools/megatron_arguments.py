#!/usr/bin/env python3
# Copyright attune authors.
"""Lists the command-line arguments Megatron-LM's training scripts accept, over its releases.

Writes stacks/megatron/arguments.txt, which the Megatron stack reads to tell a misspelt flag
(`--global-batch-sise`: Megatron-LM stops with "unrecognized arguments") from a real one, in any
release a user may run. Run it against a Megatron-LM clone when a new release comes out:

    tools/megatron_arguments.py /path/to/Megatron-LM > stacks/megatron/arguments.txt

Each release tag (core_v*, core_r*, no release candidates) and HEAD is read:
- up to core_v0.15 every argument is a literal `add_argument("--name", ...)` call in
  megatron/training/arguments.py (megatron/arguments.py before that), read from the source text;
- from core_v0.16 part of them are generated from configuration dataclasses
  (ArgumentGroupFactory), so the source text does not list them: that release's own parser is
  built (add_megatron_arguments) with torch, numpy and triton replaced by inert modules, and its
  option strings listed. Nothing is trained or run on a GPU.
pretrain_gpt.py and pretrain_hybrid.py add the ModelOpt arguments
(megatron/post_training/arguments.py) when nvidia-modelopt is installed; those are read too.
"""

import os
import re
import subprocess
import sys
import tempfile

from release_lists import git, print_list

ADD_ARGUMENT = re.compile(r"add_argument\(\s*((?:['\"]-[^'\"]*['\"]\s*,\s*)+)")
OPTION = re.compile(r"['\"](--[^'\"]+)['\"]")

# Builds a release's parser in a fresh interpreter: the modules a GPU stack needs are replaced by
# inert stand-ins whose attributes are classes, callables and containers that do nothing.
PARSER_PROBE = r"""
import abc, argparse, importlib.abc, importlib.machinery, sys, types, typing

STANDINS = set(sys.argv[2].split(","))

class _Meta(typing._ProtocolMeta):
    def __getattr__(cls, name):
        return Inert

class Inert(metaclass=_Meta):
    def __init_subclass__(cls, **k): pass
    def __init__(self, *a, **k): pass
    def __call__(self, *a, **k): return Inert()
    def __getattr__(self, name): return Inert()
    def __iter__(self): return iter(())
    def __len__(self): return 0
    def __getitem__(self, key): return Inert()
    def __mul__(self, other): return Inert()
    __rmul__ = __add__ = __radd__ = __sub__ = __rsub__ = __truediv__ = __floordiv__ = __mul__
    def __lt__(self, other): return False
    __le__ = __gt__ = __ge__ = __lt__
    def __hash__(self): return 0
    def __eq__(self, other): return self is other

class StandIns(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    def find_spec(self, name, path, target=None):
        if name.split(".")[0] not in STANDINS:
            return None
        return importlib.machinery.ModuleSpec(name, self, is_package=True)
    def create_module(self, spec):
        module = types.ModuleType(spec.name)
        module.__path__ = []
        module.__version__ = "2.9.0"
        module.__getattr__ = lambda name: Inert
        return module
    def exec_module(self, module):
        pass

if not hasattr(typing, "override"):
    typing.override = lambda f: f  # Python 3.12's; recent releases import it
sys.meta_path.insert(0, StandIns())
sys.path.insert(0, sys.argv[1])
from megatron.training.arguments import add_megatron_arguments
parser = add_megatron_arguments(argparse.ArgumentParser(allow_abbrev=False))
for action in parser._actions:
    for option in action.option_strings:
        if option.startswith("--"):
            print(option)
"""


def show(repo, rev, path):
    out = subprocess.run(["git", "-C", repo, "show", f"{rev}:{path}"], capture_output=True, text=True)
    return out.stdout if out.returncode == 0 else None


def literal_options(text):
    found = set()
    for group in ADD_ARGUMENT.finditer(text):
        found.update(OPTION.findall(group.group(1)))
    return found


def built_options(repo, rev):
    with tempfile.TemporaryDirectory() as tmp:
        archive = subprocess.run(["git", "-C", repo, "archive", rev, "megatron"], check=True, capture_output=True)
        subprocess.run(["tar", "-x", "-C", tmp], input=archive.stdout, check=True)
        # A module the release imports that this machine lacks joins the stand-ins.
        standins = {"torch", "triton", "numpy"}
        for _ in range(30):
            probe = subprocess.run([sys.executable, "-c", PARSER_PROBE, tmp, ",".join(sorted(standins))],
                                   capture_output=True, text=True, timeout=600)
            if probe.returncode == 0:
                return set(probe.stdout.split())
            missing = re.search(r"No module named '([^'.]+)", probe.stderr)
            if not missing or missing.group(1) in standins:
                break
            standins.add(missing.group(1))
        raise RuntimeError(f"{rev}: building the parser failed:\n{probe.stderr[-2000:]}")


def release_tags(repo):
    tags = [t for t in git(repo, "tag").split() if re.fullmatch(r"core_[rv]\d+\.\d+\.\d+", t)]
    return sorted(tags, key=lambda t: tuple(int(x) for x in t[6:].split(".")))


def options_of(repo, rev):
    text = show(repo, rev, "megatron/training/arguments.py") or show(repo, rev, "megatron/arguments.py")
    if text is None:
        return None
    options = built_options(repo, rev) if "ArgumentGroupFactory" in text else literal_options(text)
    modelopt = show(repo, rev, "megatron/post_training/arguments.py")
    if modelopt:
        options |= literal_options(modelopt)
    return options


def main():
    if len(sys.argv) != 2:
        sys.exit("usage: megatron_arguments.py MEGATRON_LM_CLONE > stacks/megatron/arguments.txt")
    repo = sys.argv[1]
    head = git(repo, "rev-parse", "--short=8", "HEAD").strip()
    revs = release_tags(repo) + ["HEAD"]
    union, read = set(), []
    for rev in revs:
        options = options_of(repo, rev)
        if options is None:
            continue
        print(f"{rev}: {len(options)} arguments", file=sys.stderr)
        union |= options
        read.append(head if rev == "HEAD" else rev)
    print_list(["The command-line arguments Megatron-LM's training scripts accept (pretrain_gpt.py and its",
                "siblings, with the ModelOpt arguments pretrain_gpt.py adds), in any of the revisions below.",
                "Generated by tools/megatron_arguments.py from NVIDIA/Megatron-LM; do not edit by hand."],
               read, sorted(union))


if __name__ == "__main__":
    os.environ.setdefault("PYTHONDONTWRITEBYTECODE", "1")
    main()
