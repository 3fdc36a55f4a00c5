"""Real servers for the serving tests: `hierattn serve` started as a process on a free 127.0.0.1 port."""

import os
import re
import signal
import subprocess
import sys
import threading
import time

import httpx
import pytest

pytest.importorskip("fastapi", reason="the serve extra is not installed (pip install 'hierattn[serve]')")


class Server:
    """A `hierattn serve` process on a free loopback port: its `url`, a `client`, its log lines, and `stop`.

    Args:
        run_dir: The run to serve.
        *options: More `hierattn serve` options (e.g. `--no-explain`).
    """

    def __init__(self, run_dir, *options, timeout=60):
        command = [sys.executable, "-m", "hierattn", "serve", "--run", str(run_dir), "--port", "0", *options]
        env = {**os.environ, "PYTHONUNBUFFERED": "1"}
        self.process = subprocess.Popen(command, stderr=subprocess.PIPE, text=True, env=env)
        self.lines = []
        self._first = threading.Event()
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()
        self.client = None
        try:
            self.url = self._wait_for_url(timeout)
            self.client = httpx.Client(base_url=self.url, timeout=60)
            self.wait_until(lambda: self.client.get("/readyz").status_code == 200, timeout)
        except BaseException:
            self.stop()
            raise

    def _read(self):
        for line in self.process.stderr:
            self.lines.append(line.rstrip("\n"))
            if " on http://" in line:
                self._first.set()
        self._first.set()

    def _wait_for_url(self, timeout):
        self._first.wait(timeout)
        found = [re.search(r"on (http://\S+/)", line) for line in self.lines]
        urls = [match.group(1) for match in found if match]
        if not urls:
            raise AssertionError("the server did not start:\n" + "\n".join(self.lines))
        return urls[0]

    def wait_until(self, condition, timeout=120):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            try:
                if condition():
                    return
            except httpx.TransportError:
                pass
            time.sleep(0.05)
        raise AssertionError(f"timed out after {timeout} s; the server's log:\n" + "\n".join(self.lines))

    def queues(self):
        """`/v1/model`'s queue counts."""
        return self.client.get("/v1/model").json()["queues"]

    def wait_for_explanations(self, timeout=180):
        self.wait_until(lambda: self.client.get("/readyz").json()["explain"] == "ready", timeout)

    def log(self):
        return "\n".join(self.lines)

    def stop(self, sig=signal.SIGTERM, timeout=60):
        """Sends `sig`, waits for the process and its last log line, and returns the exit code."""
        if self.client is not None:
            self.client.close()
        if self.process.poll() is None:
            self.process.send_signal(sig)
        try:
            code = self.process.wait(timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait(timeout)
            raise
        self._reader.join(timeout)  # every line the process wrote is in `lines`
        return code


@pytest.fixture(scope="module")
def start_server():
    """Starts `Server`s for a test module (`start_server(run_dir, *options)`) and stops them when it ends."""
    started = []

    def start(run_dir, *options, timeout=60):
        started.append(Server(run_dir, *options, timeout=timeout))
        return started[-1]

    yield start
    for server in started:
        server.stop()
