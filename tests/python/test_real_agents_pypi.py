"""CoPaw and Hermes Agent, the real ones from PyPI, connected by `metaclaw agent connect`: each is
set up with its own CLI against an "old" provider, connected, runs one real turn that must reach
the fake upstream through MetaClaw (and nothing must reach the old provider, not even a model
list), and is disconnected back to its original bytes; connect and disconnect each take < 10 s.

scripts/agents.sh installs them (pinned) into virtualenvs under $METACLAW_AGENTS_DIR/py. A
missing agent fails the test, as in test_real_agents.py: nothing here is skipped."""

import http.server
import json
import os
import subprocess
import tempfile
import threading
import time
from pathlib import Path

import pytest

from conftest import METACLAW, PROXY_KEY, UPSTREAM_KEY, MetaClaw

AGENTS = Path(os.environ.get("METACLAW_AGENTS_DIR", Path(__file__).resolve().parents[2] / "target/agents"))
COPAW_BIN = AGENTS / "py/copaw/bin"
HERMES_BIN = AGENTS / "py/hermes-agent/bin"
COPAW_VERSION = "1.0.2"
HERMES_VERSION = "0.19.0"
OLD_KEY = "sk-old-provider-0123456789abcdef"
BOUND_S = 10


class OldProvider:
    """The provider the agent used before MetaClaw: records every request it gets, answers 500."""

    def __init__(self):
        seen = self.seen = []

        class Handler(http.server.BaseHTTPRequestHandler):
            def _any(self):
                seen.append((self.command, self.path))
                self.send_response(500)
                self.send_header("Content-Length", "0")
                self.end_headers()

            do_GET = do_POST = do_PUT = do_HEAD = _any

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.base = f"http://127.0.0.1:{self.server.server_address[1]}/v1"
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()


def installed(binary: Path, package: str, version: str):
    # Missing is a failure, never a skip: CI must run this.
    assert binary.exists(), f"{binary} is missing: run scripts/agents.sh"
    python = binary.parent / "python"
    out = subprocess.run(
        [str(python), "-c", f"import importlib.metadata as m; print(m.version('{package}'))"],
        capture_output=True, text=True, timeout=60,
    )
    assert out.stdout.strip() == version, f"{package} {out.stdout.strip()!r}, want {version}: run scripts/agents.sh"


def agent_env(home: Path, bin_dir: Path) -> dict:
    env = dict(os.environ)
    for k in ("HERMES_HOME", "COPAW_WORKING_DIR", "COPAW_SECRET_DIR", "XDG_CONFIG_HOME"):
        env.pop(k, None)
    env.update(HOME=str(home), PATH=f"{bin_dir}:{env['PATH']}", NO_COLOR="1", PYTHONUNBUFFERED="1")
    return env


def run(args, env, timeout=180, ok=True):
    out = subprocess.run([str(a) for a in args], env=env, cwd=env["HOME"], capture_output=True,
                         text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    if ok:
        assert out.returncode == 0, f"{args[0]} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def metaclaw(mc: MetaClaw, env: dict, *args):
    """`metaclaw ARGS` against the running MetaClaw's home; returns (stdout, seconds)."""
    e = dict(env)
    e.update(METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file", METACLAW_PROXY_API_KEY=PROXY_KEY)
    started = time.monotonic()
    out = run([METACLAW, *args], e, timeout=120)
    took = time.monotonic() - started
    assert PROXY_KEY not in out.stdout + out.stderr
    return out.stdout + out.stderr, took


def snapshot(paths) -> dict:
    return {p: (p.read_bytes() if p.exists() else None) for p in paths}


def forwarded(fake) -> list:
    """Chat requests the upstream saw with MetaClaw's upstream key: MetaClaw forwarded them."""
    out = []
    for r in fake.requests():
        headers = {k: v for k, v in r["headers"]}
        if r["path"].startswith("/v1/chat/completions") and headers.get("authorization") == f"Bearer {UPSTREAM_KEY}":
            out.append(r)
    return out


def test_hermes_connects_runs_a_turn_through_metaclaw_and_disconnects(fake):
    installed(HERMES_BIN / "hermes", "hermes-agent", HERMES_VERSION)
    old = OldProvider()
    mc = MetaClaw(fake, "openai")
    home = Path(tempfile.mkdtemp(prefix="hermes-home-"))
    env = agent_env(home, HERMES_BIN)
    hermes = HERMES_BIN / "hermes"
    try:
        # As a user sets up a custom endpoint with Hermes' own CLI.
        for key, value in [("model.provider", "custom"), ("model.base_url", old.base),
                           ("model.default", "fake-model"), ("model.api_key", OLD_KEY)]:
            run([hermes, "config", "set", key, value], env)
        config = home / ".hermes/config.yaml"
        before = snapshot([config])

        out, took = metaclaw(mc, env, "agent", "connect", "hermes")
        assert took < BOUND_S, f"connect took {took:.1f} s:\n{out}"
        assert "Connected hermes" in out and "Verified" in out, out
        # No gateway service: nothing restarted, and it says so.
        assert "Restarted" not in out, out
        print(f"hermes connect: {took:.2f} s")

        fake.clear()
        old.seen.clear()
        turn = run([hermes, "chat", "-Q", "-q", "Say hello in one word."], env, timeout=300)
        sent = forwarded(fake)
        assert sent, f"no chat request reached the upstream through MetaClaw:\n{turn.stdout[-2000:]}\n{turn.stderr[-2000:]}"
        assert any(t["turn_type"] == "main" for t in mc.turns()), "MetaClaw recorded no main turn"
        assert old.seen == [], f"Hermes still called its old endpoint: {old.seen}"

        out, took = metaclaw(mc, env, "agent", "disconnect", "hermes")
        assert took < BOUND_S, f"disconnect took {took:.1f} s:\n{out}"
        print(f"hermes disconnect: {took:.2f} s")
        assert snapshot([config]) == before
    finally:
        mc.stop()
        old.stop()


COPAW_SETUP = """
import asyncio, sys
from copaw.providers.provider_manager import ProviderManager
m = ProviderManager.get_instance()
m.update_provider("old", {"api_key": sys.argv[1]})
asyncio.run(m.activate_model("old", "fake-model"))
"""


def test_copaw_connects_runs_a_task_through_metaclaw_and_disconnects(fake):
    installed(COPAW_BIN / "copaw", "copaw", COPAW_VERSION)
    old = OldProvider()
    mc = MetaClaw(fake, "openai")
    home = Path(tempfile.mkdtemp(prefix="copaw-home-"))
    env = agent_env(home, COPAW_BIN)
    copaw = COPAW_BIN / "copaw"
    try:
        # As a user sets CoPaw up: init, a custom provider with its model, its key, activated
        # (`copaw models config-key` / `set-llm` are interactive: the same calls, directly).
        run([copaw, "init", "--defaults", "--accept-security"], env)
        run([copaw, "models", "add-provider", "old", "--name", "Old", "--base-url", old.base], env)
        run([copaw, "models", "add-model", "old", "-m", "fake-model", "-n", "fake-model"], env)
        run([COPAW_BIN / "python", "-c", COPAW_SETUP, OLD_KEY], env)
        providers = home / ".copaw.secret/providers"
        ours = providers / "custom/metaclaw.json"
        touched = [providers / "active_model.json", providers / "custom/old.json",
                   home / ".copaw/workspaces/default/agent.json", ours]
        before = snapshot(touched)
        assert before[ours] is None and before[providers / "active_model.json"] is not None

        out, took = metaclaw(mc, env, "agent", "connect", "copaw")
        assert took < BOUND_S, f"connect took {took:.1f} s:\n{out}"
        assert "Connected copaw" in out and "Verified" in out, out
        # CoPaw has no reload command: nothing is claimed restarted; the note says what to do.
        assert "Restarted" not in out and "copaw app" in out, out
        print(f"copaw connect: {took:.2f} s")
        active = json.loads((providers / "active_model.json").read_text())
        assert active == {"provider_id": "metaclaw", "model": "fake-model"}, active

        fake.clear()
        old.seen.clear()
        task = run([copaw, "task", "-i", "Say hello in one word.", "--max-iters", "2", "-t", "240"],
                   env, timeout=300, ok=False)
        sent = forwarded(fake)
        assert sent, f"no chat request reached the upstream through MetaClaw:\n{task.stdout[-3000:]}\n{task.stderr[-3000:]}"
        assert any(t["turn_type"] == "main" for t in mc.turns()), "MetaClaw recorded no main turn"
        assert old.seen == [], f"CoPaw still called its old provider: {old.seen}"

        # CoPaw has re-encrypted the key MetaClaw wrote; the provider still goes on disconnect.
        out, took = metaclaw(mc, env, "agent", "disconnect", "copaw")
        assert took < BOUND_S, f"disconnect took {took:.1f} s:\n{out}"
        print(f"copaw disconnect: {took:.2f} s")
        after = snapshot(touched)
        for p in touched:
            assert after[p] == before[p], f"{p} differs after disconnect"
    finally:
        mc.stop()
        old.stop()
