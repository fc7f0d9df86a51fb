#!/usr/bin/python3
"""`attune serve` over HTTP: the API against `attune status --json`, pages and assets, the token,
path traversal, the Host check, oversized requests, connection and event-stream limits, live
updates of a resumed campaign, and that serving never changes a campaign.

    serve_http_test.py --attune BIN --plugins DIR --source SRC
"""
import argparse
import fcntl
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import time

from serve_util import FAILURES, Env, Server, check, open_stream, read_until


def api_matches_status(env, server, root):
    status, listing = server.json('/api/campaigns')
    check(status == 200, f'GET /api/campaigns answers 200 ({status})')
    names = sorted(c['name'] for c in listing['campaigns'])
    check(names == ['done', 'group/half', 'paused'], f'every campaign found, a nested one by its relative path: {names}')
    row = next(c for c in listing['campaigns'] if c['name'] == 'done')
    st = env.status(os.path.join(root, 'done'))
    check(row['state'] == 'finished', f'finished campaign listed as finished: {row["state"]}')
    check(row['leader'] == st['leader'] and row['stack'] == st['stack'] and row['agent'] == st['agent'],
          f'list row agrees with attune status: {row["leader"]} vs {st["leader"]}')
    check(abs(row['speedup'] - st['speedup']) < 1e-9, 'speedup equals attune status')
    check(abs(row['budget']['charged_gpu_hours'] - st['budget']['charged_gpu_hours']) < 1e-9, 'budget equals attune status')
    half = next(c for c in listing['campaigns'] if c['name'] == 'group/half')
    check(half['state'] == 'interrupted', f'a killed campaign shows as interrupted: {half["state"]}')

    status, page = server.json('/api/campaigns/done')
    check(status == 200 and page['seq'] == st['events'], f'campaign page at the last seq {st["events"]}')
    board = page['leaderboard']
    check(len(board) == st['candidates'] + 1, f'leaderboard has baseline + {st["candidates"]} candidates: {len(board)}')
    leaders = [r['candidate'] for r in board if r['leader']]
    check(leaders == [st['leader']], f'the leaderboard marks the leader of attune status: {leaders}')
    finished = [j for j in page['runs']]
    check(len(finished) >= 2 and all(r['job'] for r in finished), f'{len(finished)} runs to plot')
    tree_ids = {n['id'] for n in page['tree']}
    check(len(tree_ids) == st['candidates'] + 1, 'candidate tree has every candidate and the baseline')
    check(all(n['parent'] in tree_ids for n in page['tree'] if n['parent']), 'every tree parent is a node')
    check(page['burn_down'][-1]['charged_gpu_hours'] <= st['budget']['total_gpu_hours'] + 1e-9, 'burn-down within the budget')

    cand = board[1]['candidate'] if board[0]['candidate'] == 'baseline' else board[0]['candidate']
    status, detail = server.json('/api/campaigns/done/candidates/' + cand)
    check(status == 200 and detail['candidate'] == cand and 'gate' in detail and 'changes_vs_parent' in detail,
          f'candidate detail of {cand} has gate and diffs')
    job = detail['jobs'][0]['job'] if detail['jobs'] else None
    if job:
        status, log = server.json(f'/api/campaigns/done/jobs/{job}/log?bytes=2000')
        check(status in (200, 403), f'job log tail answers ({status})')
        if status == 200:
            check(0 < len(log['text']) <= 2000, f'log tail is at most the bytes asked ({len(log["text"])})')
    status, _ = server.json('/api/campaigns/done/candidates/c999')
    check(status == 404, 'unknown candidate is 404')
    status, ev = server.json('/api/campaigns/done/events?from=3')
    check(status == 200 and ev['events'][0]['seq'] == 3 and ev['events'][-1]['seq'] == st['events'], 'events from seq 3 to the end')


def states(env, server, root, paused_ok):
    """A writer's lock makes a campaign "running"; a campaign paused by Ctrl-C is "paused"."""
    log_dir = os.path.join(root, 'group', 'half', 'log')
    fd = os.open(log_dir, os.O_RDONLY | os.O_DIRECTORY)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)  # what `attune run` holds (log/dir_lock.h)
        time.sleep(0.6)
        _, listing = server.json('/api/campaigns')
        state = next(c['state'] for c in listing['campaigns'] if c['name'] == 'group/half')
        check(state == 'running', f'an interrupted campaign whose lock is taken shows as running ({state})')
    finally:
        os.close(fd)
    time.sleep(0.6)
    _, listing = server.json('/api/campaigns')
    state = next(c['state'] for c in listing['campaigns'] if c['name'] == 'group/half')
    check(state == 'interrupted', f'and as interrupted again once the lock is gone ({state})')
    if paused_ok:
        row = next(c for c in listing['campaigns'] if c['name'] == 'paused')
        check(row['state'] == 'paused' and row['paused'], f'a campaign paused by Ctrl-C shows as paused ({row["state"]})')
    else:
        print('  note: the campaign finished before Ctrl-C reached it; the paused state was not checked', flush=True)


def pages(server):
    status, headers, body = server.get('/')
    check(status == 200 and b'<main id="app">' in body, 'GET / is the page')
    check("default-src 'self'" in headers.get('Content-Security-Policy', ''), 'pages load nothing from elsewhere (CSP)')
    status, _, body = server.get('/campaign?name=done')
    check(status == 200 and b'app.js' in body, 'GET /campaign is the page')
    for path in ('/static/app.js', '/static/app.css', '/static/uPlot.iife.min.js', '/static/uPlot.min.css'):
        status, _, body = server.get(path)
        check(status == 200 and len(body) > 100, f'{path} served by attune itself ({status}, {len(body)} bytes)')
    status, headers, body = server.get('/', method='HEAD')
    check(status == 200 and body == b'', 'HEAD answers without a body')


def traversal_and_methods(server):
    for path in ('/../../../../etc/passwd', '/static/../../../etc/passwd', '/static/..%2f..%2fetc%2fpasswd',
                 '/api/campaigns/..%2F..%2F..%2Fetc', '/api/campaigns/%2Fetc', '/api/campaigns/..',
                 '/api/campaigns/done/jobs/..%2F..%2F..%2Fetc%2Fpasswd/log', '/api/campaigns/group',
                 '/api/campaigns/outside', '/api/campaigns/link', '/api/campaigns/link%2Foutside', '/etc/passwd',
                 '/api/campaigns/done%00', '/api/campaigns/%zz'):
        status, _, body = server.get(path)
        check(status in (400, 404) and b'root:' not in body, f'{path} -> {status}')
    for method in ('POST', 'PUT', 'DELETE', 'PATCH'):
        status, headers, _ = server.get('/api/campaigns/done', method=method, body=b'{}' if method != 'DELETE' else None)
        check(status in (405, 413), f'{method} refused ({status})')
    for host in ('attacker.example:8080', '127.0.0.1.attacker.example', '127.attacker.example:80'):
        status, _, _ = server.get('/api/campaigns', headers={'Host': host})
        check(status == 403, f'Host {host} is not the loopback: refused (DNS rebinding) ({status})')
    for host in ('localhost:8080', '127.0.0.1', '[::1]:8080'):
        status, _, _ = server.get('/api/campaigns', headers={'Host': host})
        check(status == 200, f'Host {host} is the loopback: answered ({status})')


def oversized(server):
    big = b'GET /api/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: ' + b'a' * 20000 + b'\r\n\r\n'
    check(server.raw(big) == 431, 'a 20 KB header is refused with 431')
    body = b'POST /api/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 100000\r\n\r\n' + b'x' * 1000
    check(server.raw(body) in (405, 413), 'a request with a body is refused')
    body = b'GET /api/campaigns HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 5\r\n\r\nhello'
    check(server.raw(body) == 413, 'a GET with a body is refused with 413')
    check(server.raw(b'NONSENSE\r\n\r\n') == 400, 'a malformed request is 400')
    status, _ = server.json('/api/health')
    check(status == 200, 'the server still answers after all that')


def streams(server, max_streams):
    socks = []
    for i in range(max_streams):
        s, data = open_stream(server, '/api/campaigns/done/stream')
        socks.append(s)
        if i in (0, max_streams - 1):
            check(b'200 OK' in data and b'event: hello' in data, f'stream {i + 1} gets its hello')
    s, data = open_stream(server, '/api/campaigns/done/stream')
    check(b' 503 ' in data.split(b'\r\n')[0], f'stream {max_streams + 1} is refused with 503: {data[:40]!r}')
    s.close()
    socks.pop().close()
    time.sleep(0.6)  # the server notices the closed stream at its next poll
    s, data = open_stream(server, '/api/campaigns/done/stream')
    check(b'event: hello' in data, 'a closed stream frees its slot')
    socks.append(s)
    status, _ = server.json('/api/campaigns')
    check(status == 200, 'the API still answers with every stream open')
    for s in socks:
        s.close()


def removed(env, root):
    """A campaign directory deleted under the server leaves the list; its stream says so."""
    extra = os.path.join(root, 'extra')
    check(env.campaign(extra).returncode == 0, 'a third campaign finished')
    server = Server(env, root)
    try:
        s, data = open_stream(server, '/api/campaigns/extra/stream')
        check(b'event: hello' in data, 'its stream is open')
        shutil.rmtree(extra)
        data = read_until(s, b'"state":"removed"', timeout=3)
        check(b'"state":"removed"' in data, 'the stream says the campaign was removed')
        s.close()
        _, listing = server.json('/api/campaigns')
        check('extra' not in [c['name'] for c in listing['campaigns']], 'and it left the list')
        status, _ = server.json('/api/campaigns/extra')
        check(status == 404, 'its page is 404')
        # An open keep-alive connection must not hold Ctrl-C up.
        idle = server.raw(b'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n', read=False)
        time.sleep(0.2)
        t = time.time()
        code = server.stop()
        check(code == 0 and time.time() - t < 3, f'Ctrl-C stops it at once with a connection open ({time.time() - t:.1f} s)')
        idle.close()
    finally:
        server.stop()


def connections(env, root):
    server = Server(env, root, '--max-connections', '8')
    try:
        idle = [server.raw(b'', read=False) for _ in range(8)]
        time.sleep(0.3)
        status = server.raw(b'GET /api/health HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n')
        check(status == 503, f'connection 9 of 8 is refused with 503 ({status})')
        for s in idle:
            s.close()
        time.sleep(0.3)
        status, _ = server.json('/api/health')
        check(status == 200, 'closing connections frees them')
    finally:
        server.stop()


def live(env, root, server):
    half = os.path.join(root, 'group', 'half')
    before = env.event_count(half)
    s, data = open_stream(server, '/api/campaigns/group%2Fhalf/stream')
    check(b'"state":"interrupted"' in data, 'the stream says the campaign is interrupted')
    p = env.campaign(half)
    check(p.returncode == 0, f'the campaign resumes and finishes ({p.returncode}) {p.stderr[-300:]}')
    after = env.event_count(half)
    data = read_until(s, f'"seq":{after},'.encode(), timeout=3)
    check(f'"seq":{after},'.encode() in data, f'the stream carries the resumed events up to seq {after} (from {before})')
    check(b'"state":"finished"' in data, 'and says it finished')
    s.close()


def tokens(env, root):
    p = env.run('serve', root, '--bind', '0.0.0.0', '--token', 'short')
    check(p.returncode == 2 and '--token' in p.stderr, f'a short token is refused: {p.stderr.strip()}')
    p = env.run('serve', root, '--port', '70000')
    check(p.returncode == 2 and 'not a TCP port' in p.stderr, f'a bad --port says what is expected: {p.stderr.strip()}')
    p = env.run('serve', os.path.join(root, 'missing'))
    check(p.returncode == 2 and 'is not a directory' in p.stderr, f'a missing ROOT is named: {p.stderr.strip()}')
    p = env.run('serve', root, '--bind', 'nowhere')
    check(p.returncode == 2 and 'IP address' in p.stderr, f'a bad --bind says what is expected: {p.stderr.strip()}')
    server = Server(env, root, '--bind', '0.0.0.0')
    try:
        check(server.token and len(server.token) == 32, f'binding 0.0.0.0 without --token prints a generated one')
        server.host = '127.0.0.1'
        status, _ = server.json('/api/campaigns')
        check(status == 401, f'no token: 401 ({status})')
        status, _ = server.json('/api/campaigns?token=wrong-token-123')
        check(status == 401, 'a wrong token: 401')
        status, _ = server.json('/api/campaigns?token=' + server.token)
        check(status == 200, 'the token in the query: 200')
        status, _ = server.json('/api/campaigns', {'Authorization': 'Bearer ' + server.token})
        check(status == 200, 'the token as a Bearer header: 200')
        status, headers, _ = server.get('/?token=' + server.token)
        check('attune_token=' in headers.get('Set-Cookie', '') and 'HttpOnly' in headers.get('Set-Cookie', ''),
              'the page sets an HttpOnly cookie for its own requests')
        status, _ = server.json('/api/campaigns', {'Cookie': 'attune_token=' + server.token})
        check(status == 200, 'the cookie: 200')
        s, data = open_stream(server, '/api/campaigns/done/stream')
        check(b' 401 ' in data.split(b'\r\n')[0], 'a stream without the token: 401')
        s.close()
        s, data = open_stream(server, '/api/campaigns/done/stream', token=server.token)
        check(b'event: hello' in data, 'a stream with the token: hello')
        s.close()
        status, _, _ = server.get('/api/campaigns?token=' + server.token, headers={'Host': 'example.com'})
        check(status == 200, 'with a token, any Host is fine (the token is the guard)')
    finally:
        server.stop()


def snapshot(root):
    out = {}
    for d, _, files in os.walk(root):
        for f in files:
            p = os.path.join(d, f)
            st = os.stat(p)
            out[p] = (st.st_size, st.st_mtime_ns)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--attune', required=True)
    ap.add_argument('--plugins', required=True)
    ap.add_argument('--source', required=True)
    args = ap.parse_args()
    env = Env(args.attune, args.plugins, args.source)
    scratch = tempfile.mkdtemp(prefix='attune-serve-')
    try:
        root = os.path.join(scratch, 'root')
        os.makedirs(os.path.join(root, 'group'))
        p = env.campaign(os.path.join(root, 'done'))
        check(p.returncode == 0, f'sim campaign finished: {p.stderr[-300:]}')
        p = env.campaign(os.path.join(root, 'group', 'half'), extra_env={'ATTUNE_CRASH_AT': 'log.append.after:25'})
        check(p.returncode != 0, 'second campaign killed half way')
        run = subprocess.Popen([env.attune, 'run', os.path.join(env.source, 'workflows/examples/sim-llama3-8b-h100x16.yaml'),
                                '--dir', os.path.join(root, 'paused')], env=env.env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        time.sleep(0.4)
        run.send_signal(signal.SIGINT)
        paused_ok = run.wait(timeout=60) == 3
        # A campaign outside the root, reachable only through a symbolic link: never served.
        p = env.campaign(os.path.join(scratch, 'outside'))
        os.symlink(scratch, os.path.join(root, 'link'))
        before = snapshot(root)
        server = Server(env, root, '--max-streams', '5')
        try:
            api_matches_status(env, server, root)
            states(env, server, root, paused_ok)
            pages(server)
            traversal_and_methods(server)
            oversized(server)
            streams(server, 5)
            after = snapshot(root)
            check(before == after, 'serving wrote nothing under the root')
            live(env, root, server)
        finally:
            code = server.stop()
            check(code == 0, f'Ctrl-C stops attune serve with exit 0 ({code})')
        removed(env, root)
        connections(env, root)
        tokens(env, root)
        p = env.run('verify', os.path.join(root, 'done'))
        check(p.returncode == 0, 'the served campaign verifies intact')
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    if FAILURES:
        print(f'{len(FAILURES)} check(s) failed', flush=True)
        return 1
    print('all checks passed')
    return 0


if __name__ == '__main__':
    sys.exit(main())
