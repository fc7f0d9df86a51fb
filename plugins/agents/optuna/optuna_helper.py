#!/usr/bin/python3
"""The optuna agent's helper: one ask over a study rebuilt from the campaign's history.

attune's optuna agent (plugins/agents/optuna) runs this once per proposal, with one JSON object
on stdin, and reads one JSON object from stdout. Stateless: the study lives in memory for one
call, so a crash, a timeout or a restarted campaign loses nothing. The protocol is written down
in README.md beside this file.

Exit status: 0 with {"ok": true, ...}; 2 for a malformed request, 3 when optuna cannot be
imported, 4 for any other error, each with {"ok": false, "error": "..."} on stdout.
"""
import json
import sys

PROTOCOL = 1
SAMPLERS = ('tpe', 'random', 'nsga2')


def answer(code, **fields):
    json.dump(fields, sys.stdout, sort_keys=True)
    sys.stdout.write('\n')
    sys.exit(code)


def make_sampler(optuna, request):
    name = request['sampler']
    seed = int(request['seed'])
    if name == 'tpe':
        return optuna.samplers.TPESampler(seed=seed, n_startup_trials=int(request['startup_trials']))
    if name == 'random':
        return optuna.samplers.RandomSampler(seed=seed)
    return optuna.samplers.NSGAIISampler(seed=seed)


def rebuild(optuna, request, distributions):
    study = optuna.create_study(direction='maximize', sampler=make_sampler(optuna, request))
    for trial in request['trials']:
        if trial['state'] == 'complete':
            frozen = optuna.trial.create_trial(params=trial['params'], distributions=distributions,
                                               value=float(trial['value']))
        else:
            frozen = optuna.trial.create_trial(params=trial['params'], distributions=distributions,
                                               state=optuna.trial.TrialState.FAIL)
        study.add_trial(frozen)
    return study


def main():
    try:
        request = json.load(sys.stdin)
        if request.get('protocol') != PROTOCOL:
            raise ValueError(f'protocol {request.get("protocol")!r}, this helper speaks {PROTOCOL}')
        if request.get('sampler') not in SAMPLERS:
            raise ValueError(f'sampler {request.get("sampler")!r} is not one of {", ".join(SAMPLERS)}')
        space = request['space']
        if not space:
            raise ValueError('the search space is empty')
    except (ValueError, KeyError, TypeError) as e:
        answer(2, ok=False, error=f'malformed request: {e}')
    try:
        import optuna
    except ImportError as e:
        answer(3, ok=False, error=f'cannot import optuna ({e}); install it: apt-get install python3-optuna')
    try:
        optuna.logging.set_verbosity(optuna.logging.ERROR)
        distributions = {name: optuna.distributions.CategoricalDistribution(choices)
                         for name, choices in space.items()}
        study = rebuild(optuna, request, distributions)
        points = []
        for _ in range(int(request.get('asks', 1))):
            trial = study.ask(distributions)
            points.append({'number': trial.number, 'params': trial.params})
        answer(0, ok=True, optuna=optuna.__version__, points=points)
    except Exception as e:  # everything else is reported to the agent, which names the helper
        answer(4, ok=False, error=f'{type(e).__name__}: {e}')


if __name__ == '__main__':
    main()
