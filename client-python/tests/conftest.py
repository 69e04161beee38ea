"""Daemon processes for the tests: started from cli's distribution ($ARRAYD_DIST, with $ARRAYD_JAVA), on a free
loopback port and a Unix socket in a temporary folder, stopped at the end (by their own PID)."""
from __future__ import annotations

import os
import pathlib
import re
import subprocess
import tempfile
import threading

import pytest

import arrayd

LISTENING = re.compile(r"arrayd listening on 127\.0\.0\.1:(\d+)")


class Daemon:
    """One ``arrayd serve`` process; ``target`` is its TCP address, ``unix`` its socket's ``unix://`` target."""

    def __init__(self, *args: str):
        dist = pathlib.Path(os.environ.get("ARRAYD_DIST", pathlib.Path(__file__).parents[2] / "cli" / "target" / "dist"))
        if not (dist / "lib").is_dir():
            raise RuntimeError(f"no daemon distribution at {dist} (build the cli module first)")
        java = os.environ.get("ARRAYD_JAVA", "java")
        self._dir = tempfile.TemporaryDirectory(prefix="arrayd-py-")
        self.socket = os.path.join(self._dir.name, "arrayd.sock")
        cmd = [java, "--enable-native-access=ALL-UNNAMED", f"-Djava.io.tmpdir={self._dir.name}", "-cp", str(dist / "lib" / "*"),
               "dev.arrayd.cli.Main", "serve", "--port", "0", "--metrics-port", "-1", "--uds", self.socket, *args]
        self.process = subprocess.Popen(cmd, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
        self.output: list[str] = []
        found = threading.Event()
        self.port = 0

        def pump() -> None:
            for line in self.process.stdout:
                self.output.append(line)
                m = LISTENING.search(line)
                if m:
                    self.port = int(m.group(1))
                if "listening on unix://" in line:
                    found.set()
            found.set()

        threading.Thread(target=pump, daemon=True).start()
        if not found.wait(60) or self.port == 0 or self.process.poll() is not None:
            self.stop()
            raise RuntimeError("the daemon did not start:\n" + "".join(self.output))
        self.target = f"127.0.0.1:{self.port}"
        self.unix = f"unix://{self.socket}"

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(30)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        self._dir.cleanup()


@pytest.fixture(scope="session")
def daemon():
    """A daemon with two CPU devices, on TCP and on a Unix socket."""
    d = Daemon("--devices", "cpu:2")
    yield d
    d.stop()


@pytest.fixture(params=["tcp", "unix"])
def target(request, daemon):
    """The daemon's TCP and Unix-socket targets (each test that takes it runs over both)."""
    return daemon.target if request.param == "tcp" else daemon.unix


@pytest.fixture
def session(daemon):
    with arrayd.connect(daemon.target) as client, client.session("pytest") as s:
        yield s


@pytest.fixture
def unix_session(daemon):
    with arrayd.connect(daemon.unix) as client, client.session("pytest-unix") as s:
        yield s
