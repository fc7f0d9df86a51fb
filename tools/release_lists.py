# Copyright attune authors.
"""What tools/megatron_arguments.py, tools/slime_arguments.py and tools/automodel_sections.py
share: git, the v* release tags of a clone (Megatron-LM's core_* tags are its own), and writing
the list format the stacks read (engine/support/include/attune/support/release_list.h)."""

import subprocess


def git(clone, *args):
    return subprocess.run(["git", "-C", clone, *args], check=True, capture_output=True,
                          text=True).stdout


def release_revisions(clone):
    """The v* release tags (no release candidates), oldest first, then HEAD's short hash."""
    tags = [t for t in git(clone, "tag", "--list", "v*").split() if "rc" not in t]
    tags.sort(key=lambda t: [int(p) if p.isdigit() else p
                             for p in t.lstrip("v").replace("post", ".").split(".") if p])
    head = git(clone, "rev-parse", "--short=8", "HEAD").strip()
    return tags + [head]


def print_list(header, revisions, entries):
    """The header's lines as comments, the revisions line, then one entry a line."""
    for line in header:
        print("# " + line)
    print("# Revisions read: " + " ".join(revisions))
    for entry in entries:
        print(entry)
