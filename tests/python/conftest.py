"""Fixtures: a fake LLM provider and a real `metaclaw` process between it and the SDK clients."""

import json
import os
import socket
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
METACLAW = os.environ.get("METACLAW_BIN", str(ROOT / "target/debug/metaclaw"))
FAKE = os.environ.get("FAKE_UPSTREAM_BIN", str(ROOT / "target/debug/fake-upstream"))
UPSTREAM_KEY = "sk-upstream-test-0123456789"
PROXY_KEY = "mc-proxy-test-key-0123456789"

# One tool in each protocol's shape, for the tool-calling tests.
TOOLS_OPENAI = [
    {
        "type": "function",
        "function": {
            "name": "lookup",
            "description": "Look something up",
            "parameters": {"type": "object", "properties": {"query": {"type": "string"}}},
        },
    }
]
TOOLS_ANTHROPIC = [
    {
        "name": "lookup",
        "description": "Look something up",
        "input_schema": {"type": "object", "properties": {"query": {"type": "string"}}},
    }
]


def metaclaw_cli(args, env) -> str:
    """`metaclaw ARGS`, which must succeed; its standard output."""
    out = subprocess.run([METACLAW, *args], env=env, capture_output=True, text=True, timeout=60)
    assert out.returncode == 0, f"metaclaw {' '.join(args)} failed ({out.returncode}):\n{out.stdout}\n{out.stderr}"
    return out.stdout


def wait_for(what, check, seconds=60):
    """`check()`'s first truthy value, polled (bounded) until `seconds` have passed."""
    deadline = time.monotonic() + seconds
    while True:
        value = check()
        if value:
            return value
        assert time.monotonic() < deadline, f"timed out waiting for {what}"
        time.sleep(0.1)


def holders_of(root: Path, secret: bytes) -> list:
    """The files under `root` holding `secret`."""
    return [p for p in root.rglob("*") if p.is_file() and secret in p.read_bytes()]


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Fake:
    def __init__(self):
        self.proc = subprocess.Popen(
            [FAKE, "--port", "0", "--api-key", UPSTREAM_KEY],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            text=True,
        )
        line = self.proc.stdout.readline().strip()
        assert line.startswith("PORT="), f"fake upstream said {line!r}"
        self.port = int(line.split("=", 1)[1])
        self.base = f"http://127.0.0.1:{self.port}"

    def requests(self):
        with urllib.request.urlopen(self.base + "/_requests") as r:
            return json.load(r)

    def clear(self):
        req = urllib.request.Request(self.base + "/_requests", method="DELETE")
        urllib.request.urlopen(req).close()

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class MetaClaw:
    """A `metaclaw start` process with its own home, talking to the fake upstream."""

    def __init__(self, fake, api: str, extra_config: str = "", home=None, extra_env=None):
        """`fake` None: no provider at all, as for a user whose agent signs in by itself."""
        self.home = home or Path(tempfile.mkdtemp(prefix="metaclaw-py-"))
        self.port = free_port()
        llm = ""
        if fake is not None:
            base = fake.base + "/v1" if api == "openai" else fake.base
            llm = f"llm:\n  api: {api}\n  api_base: {base}\n  model_id: fake-model\n"
        (self.home / "config.yaml").write_text(llm + f"proxy:\n  port: {self.port}\n" + extra_config)
        env = dict(os.environ)
        env.update(
            METACLAW_HOME=str(self.home),
            METACLAW_SECRET_BACKEND="file",
            METACLAW_PROXY_API_KEY=PROXY_KEY,
        )
        if fake is not None:
            env["METACLAW_LLM_API_KEY"] = UPSTREAM_KEY
        env.update(extra_env or {})
        self.log = open(self.home / "stderr.log", "w")
        self.proc = subprocess.Popen(
            [METACLAW, "start", "--headless"], env=env, stdout=self.log, stderr=subprocess.STDOUT
        )
        self.base = f"http://127.0.0.1:{self.port}"
        deadline = time.monotonic() + 30
        while True:  # readiness poll, bounded
            assert self.proc.poll() is None, (self.home / "stderr.log").read_text()
            try:
                with urllib.request.urlopen(self.base + "/healthz", timeout=1) as r:
                    if json.load(r) == {"ok": True}:
                        break
            except OSError:
                pass
            assert time.monotonic() < deadline, "metaclaw did not become healthy"
            time.sleep(0.05)

    def admin(self, method: str, path: str):
        token = (self.home / "run" / "admin_token").read_text().strip()
        req = urllib.request.Request(
            self.base + path, method=method, headers={"Authorization": f"Bearer {token}"}
        )
        with urllib.request.urlopen(req, timeout=5) as r:
            return json.load(r)

    def turns(self, session=None):
        self.admin("POST", "/api/recorder/flush")
        q = f"?session={session}" if session else "?limit=1000"
        return self.admin("GET", "/api/turns" + q)["turns"]

    def stop(self):
        self.proc.terminate()
        self.proc.wait(timeout=20)
        self.log.close()


@pytest.fixture(scope="module")
def fake():
    f = Fake()
    yield f
    f.stop()


@pytest.fixture(scope="module", params=["openai", "anthropic"])
def proxy(request, fake):
    m = MetaClaw(fake, request.param)
    m.upstream_api = request.param
    yield m
    m.stop()
