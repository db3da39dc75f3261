"""OpenClaw, the real one from npm, connected by `metaclaw agent connect`: set up with its own
`onboard` against the fake upstream directly (the user's own provider, with the user's own key),
connected, one real `openclaw agent --local` turn that must reach the upstream through MetaClaw
(MetaClaw's upstream key, its block, its recorded turn; never the user's key), and disconnected
back to the original bytes of every file connect touched; connect and disconnect each take < 10 s.
Once per MetaClaw upstream protocol: `llm.api: openai` gives OpenClaw an `openai-completions`
provider, `anthropic` an `anthropic-messages` one.

scripts/agents.sh installs OpenClaw (pinned, with Node 24) into $METACLAW_AGENTS_DIR. A missing
agent fails the test, as in test_real_agents.py: nothing here is skipped."""

import json
import os
import subprocess
import tempfile
import time
from pathlib import Path

import pytest

from conftest import METACLAW, PROXY_KEY, UPSTREAM_KEY, MetaClaw

AGENTS = Path(os.environ.get("METACLAW_AGENTS_DIR", Path(__file__).resolve().parents[2] / "target/agents"))
BIN = AGENTS / "node_modules/.bin"
NODE = AGENTS / "node_modules/node/bin"
OPENCLAW_VERSION = "2026.9.6"
# The user's own key for their provider: a request carrying it did not go through MetaClaw.
USER_KEY = "sk-user-own-provider-0123456789abcdef"
BLOCK = "<metaclaw-context>"
# A question MetaClaw's built-in skills answer, so its block fits this turn.
QUESTION = "how should I write a good git commit message?"
BOUND_S = 10
PROVIDER_API = {"openai": "openai-completions", "anthropic": "anthropic-messages"}


def installed():
    # Missing is a failure, never a skip: CI must run this.
    package = AGENTS / "node_modules/openclaw/package.json"
    assert (BIN / "openclaw").exists() and package.exists(), "OpenClaw is missing: run scripts/agents.sh"
    version = json.loads(package.read_text())["version"]
    assert version == OPENCLAW_VERSION, f"OpenClaw {version}, want {OPENCLAW_VERSION}: run scripts/agents.sh"


def agent_env(home: Path) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("OPENCLAW_")}
    env.update(HOME=str(home), PATH=f"{NODE}:{BIN}:{env['PATH']}", NO_COLOR="1")
    return env


def run(args, env, timeout=180):
    out = subprocess.run([str(a) for a in args], env=env, cwd=env["HOME"], capture_output=True,
                         text=True, timeout=timeout, stdin=subprocess.DEVNULL)
    assert out.returncode == 0, f"{args[0]} failed ({out.returncode}):\n{out.stdout[-3000:]}\n{out.stderr[-3000:]}"
    return out


def metaclaw(mc: MetaClaw, env: dict, *args):
    """`metaclaw ARGS` against the running MetaClaw's home, as the user runs it; returns (output,
    seconds)."""
    e = dict(env)
    e.update(METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file", METACLAW_PROXY_API_KEY=PROXY_KEY)
    started = time.monotonic()
    out = run([METACLAW, *args], e, timeout=60)
    took = time.monotonic() - started
    assert PROXY_KEY not in out.stdout + out.stderr
    return out.stdout + out.stderr, took


def connected(mc: MetaClaw, env: dict) -> bool:
    out, _ = metaclaw(mc, env, "agent", "status", "openclaw", "--json")
    return json.loads(out)["connected"]


def files(root: Path) -> dict:
    """Every file OpenClaw keeps under `root`, by path: its bytes."""
    return {p: p.read_bytes() for p in sorted(root.rglob("*")) if p.is_file()}


def key_of(request) -> str:
    headers = {k: v for k, v in request["headers"]}
    return headers.get("x-api-key") or headers.get("authorization", "").removeprefix("Bearer ")


def chats(fake) -> list:
    return [r for r in fake.requests()
            if r["path"].startswith(("/v1/chat/completions", "/v1/messages")) and "count_tokens" not in r["path"]]


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_openclaw_connects_runs_a_turn_through_metaclaw_and_disconnects(fake, protocol):
    installed()
    mc = MetaClaw(fake, protocol)
    home = Path(tempfile.mkdtemp(prefix=f"oc-connect-{protocol}-"))
    env = agent_env(home)
    state = home / ".openclaw"
    try:
        # The user's own provider, set up by OpenClaw's own onboarding.
        base = fake.base + "/v1" if protocol == "openai" else fake.base
        run([BIN / "openclaw", "onboard", "--non-interactive", "--accept-risk",
             "--auth-choice", "custom-api-key", "--custom-base-url", base,
             "--custom-compatibility", protocol, "--custom-api-key", USER_KEY,
             "--custom-model-id", "fake-model", "--skip-health"], env)
        assert not connected(mc, env)
        before = files(state)

        out, took = metaclaw(mc, env, "agent", "connect", "openclaw")
        print(f"openclaw ({protocol}) connect: {took:.2f} s")
        assert took < BOUND_S, f"connect took {took:.1f} s:\n{out}"
        assert "Connected openclaw" in out and "Verified" in out, out
        # Nothing to restart here (no gateway service): nothing is claimed restarted.
        assert "Restarted" not in out and "warning" not in out, out
        assert connected(mc, env)
        after = files(state)
        touched = {p for p in before.keys() | after.keys() if before.get(p) != after.get(p)}
        config = state / "openclaw.json"
        assert touched == {config}, sorted(map(str, touched))
        provider = json.loads(config.read_text())["models"]["providers"]["metaclaw"]
        assert provider["api"] == PROVIDER_API[protocol], provider

        # One real turn: it reaches the upstream only through MetaClaw.
        fake.clear()
        turn = run([BIN / "openclaw", "agent", "--local", "--session-id", "c1", "--message", QUESTION],
                   env, timeout=240)
        sent = chats(fake)
        assert sent, f"no chat request reached the upstream:\n{turn.stdout[-2000:]}\n{turn.stderr[-2000:]}"
        keys = {key_of(r) for r in sent}
        assert keys == {UPSTREAM_KEY}, f"OpenClaw reached the upstream without MetaClaw: {keys}"
        assert all(r["path"].startswith("/v1/messages" if protocol == "anthropic" else "/v1/chat") for r in sent)
        assert any(BLOCK in r["raw"] and QUESTION in r["raw"] for r in sent), "no MetaClaw block in what the upstream got"
        turns = [t for t in mc.turns() if t["turn_type"] == "main" and QUESTION in t["request_json"]]
        assert turns, "MetaClaw recorded no turn of this question"
        assert all(t["status"] == 200 and not t["error"] for t in turns), turns

        out, took = metaclaw(mc, env, "agent", "disconnect", "openclaw")
        print(f"openclaw ({protocol}) disconnect: {took:.2f} s")
        assert took < BOUND_S, f"disconnect took {took:.1f} s:\n{out}"
        assert "Disconnected openclaw" in out and "warning" not in out, out
        assert not connected(mc, env)
        restored = files(state)
        for p in touched:
            assert restored.get(p) == before.get(p), f"{p} differs after disconnect"
    finally:
        mc.stop()
