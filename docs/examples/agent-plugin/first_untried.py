#!/usr/bin/env python3
"""A stand-in for a model, for the command agent: reads attune's question on stdin and answers
with the first legal move whose changes the history does not show, or done when there is none.
Standard library only; it keeps no state, so a restarted campaign gets the same answer."""
import json
import sys


def describe(change):
    def show(v):
        return '(absent)' if v is None else ('(set)' if v == '' else v)
    return f"{change['key']}: {show(change.get('from'))} -> {show(change.get('to'))}"


def main():
    question = sys.stdin.read()
    history, moves, section = [], [], None
    for line in question.splitlines():
        if line.startswith('## '):
            section = line[3:]
        elif section and section.startswith('History') and line.startswith('- #'):
            history.append(line)
        elif section and section.startswith('Legal moves') and line.startswith('- lever '):
            lever, _, rest = line[len('- lever '):].partition(': ')
            moves.append((lever, json.loads(rest.split('  // ')[0])))
    for lever, changes in moves:
        text = ', '.join(describe(c) for c in changes)
        if not any(text in h for h in history):
            print(json.dumps({'changes': changes, 'lever_id': lever,
                              'rationale': 'the first legal move not tried yet'}))
            return
    print(json.dumps({'done': True, 'rationale': 'every listed move has been tried'}))


if __name__ == '__main__':
    main()
