"""A headless Chromium driven over the DevTools protocol through a pipe (--remote-debugging-pipe:
the browser reads NUL-terminated JSON commands on fd 3 and writes replies and events on fd 4), so
the browser tests need nothing beyond the python3 standard library and Debian's chromium.

    with Browser() as b:
        b.open('http://127.0.0.1:8080/')
        b.wait_for('document.querySelectorAll("tr").length > 1', timeout=10)
        b.evaluate('document.title'); b.screenshot('page.png')
"""
import base64
import json
import os
import shutil
import subprocess
import tempfile
import time

CANDIDATES = ('chromium', 'chromium-browser')


def find_chromium():
    for name in CANDIDATES:
        path = shutil.which(name)
        if path:
            return path
    return None


class Browser:
    def __init__(self, width=1280, height=1400, offline=False):
        self.width, self.height, self.offline = width, height, offline
        self.next_id = 0
        self.buffer = b''
        self.session = None
        self.console = []
        self.exceptions = []

    def __enter__(self):
        exe = find_chromium()
        if not exe:
            raise RuntimeError('chromium is not installed (apt-get install chromium)')
        self.profile = tempfile.mkdtemp(prefix='attune-chromium-')
        to_browser_r, self.to_browser = os.pipe()
        self.from_browser, from_browser_w = os.pipe()
        # The child gets the pipe ends as fd 3 (commands in) and fd 4 (answers out).
        def child_fds():
            os.dup2(to_browser_r, 3)
            os.dup2(from_browser_w, 4)
        args = [exe, '--headless=new', '--no-sandbox', '--disable-gpu', '--remote-debugging-pipe',
                '--no-first-run', '--no-default-browser-check', '--disable-extensions',
                '--disable-background-networking', '--disable-component-update', '--disable-sync',
                '--user-data-dir=' + self.profile, f'--window-size={self.width},{self.height}',
                'about:blank']
        self.proc = subprocess.Popen(args, preexec_fn=child_fds, pass_fds=(3, 4),
                                     stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        os.close(to_browser_r)
        os.close(from_browser_w)
        targets = self.call('Target.getTargets')['targetInfos']
        page = next(t for t in targets if t['type'] == 'page')
        self.session = self.call('Target.attachToTarget', targetId=page['targetId'], flatten=True)['sessionId']
        self.call('Page.enable', session=True)
        self.call('Runtime.enable', session=True)
        if self.offline:
            self.call('Network.enable', session=True)
            self.call('Network.emulateNetworkConditions', session=True, offline=True, latency=0,
                      downloadThroughput=-1, uploadThroughput=-1)
        return self

    def __exit__(self, *exc):
        try:
            self.call('Browser.close', timeout=5)
        except Exception:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.to_browser)
        os.close(self.from_browser)
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b'\0' not in self.buffer:
            if time.time() > deadline:
                raise TimeoutError('no answer from chromium')
            chunk = os.read(self.from_browser, 1 << 20)
            if not chunk:
                raise RuntimeError('chromium closed its DevTools pipe')
            self.buffer += chunk
        message, self.buffer = self.buffer.split(b'\0', 1)
        return json.loads(message)

    def _note(self, msg):
        method = msg.get('method')
        if method == 'Runtime.consoleAPICalled':
            self.console.append(' '.join(str(a.get('value', a.get('description', ''))) for a in msg['params']['args']))
        elif method == 'Runtime.exceptionThrown':
            self.exceptions.append(msg['params']['exceptionDetails'].get('exception', {}).get('description', str(msg['params'])))

    def call(self, method, session=False, timeout=30, **params):
        self.next_id += 1
        msg = {'id': self.next_id, 'method': method, 'params': params}
        if session:
            msg['sessionId'] = self.session
        os.write(self.to_browser, json.dumps(msg).encode() + b'\0')
        deadline = time.time() + timeout
        while True:
            reply = self._read_message(deadline)
            if reply.get('id') == self.next_id:
                if 'error' in reply:
                    raise RuntimeError(f'{method}: {reply["error"]}')
                return reply.get('result', {})
            self._note(reply)

    def open(self, url, timeout=30):
        self.call('Page.navigate', session=True, url=url)
        self.wait_for('document.readyState === "complete"', timeout)

    def evaluate(self, expression):
        r = self.call('Runtime.evaluate', session=True, expression=expression, returnByValue=True)
        if 'exceptionDetails' in r:
            raise RuntimeError(f'{expression}: {r["exceptionDetails"]}')
        return r['result'].get('value')

    def wait_for(self, expression, timeout=10, interval=0.05):
        """Polls `expression` until it is truthy; returns the seconds waited, or None on timeout."""
        start = time.time()
        while time.time() - start < timeout:
            try:
                if self.evaluate(expression):
                    return time.time() - start
            except RuntimeError:
                pass
            time.sleep(interval)
        return None

    def screenshot(self, path, full_page=True):
        data = self.call('Page.captureScreenshot', session=True, format='png', captureBeyondViewport=full_page)['data']
        with open(path, 'wb') as f:
            f.write(base64.b64decode(data))
