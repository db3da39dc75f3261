"""The real agents, headless, through a real MetaClaw to the fake provider: what MetaClaw reads
as the user's words, where it puts its block, and that the agents' envelopes never become
retrieval queries, skill choices or learning material.

Claude Code and OpenClaw are installed from the npm registry by scripts/agents.sh (pinned
versions, Node 24 for OpenClaw); METACLAW_AGENTS_DIR points at them."""

import json
import os
import subprocess
import tempfile
import urllib.request
from pathlib import Path

import pytest

from conftest import PROXY_KEY, MetaClaw

AGENTS = Path(os.environ.get("METACLAW_AGENTS_DIR", Path(__file__).resolve().parents[2] / "target/agents"))
BIN = AGENTS / "node_modules/.bin"
NODE = AGENTS / "node_modules/node/bin"
WEATHER = "what's the weather tomorrow in Rome?"
ENVELOPES = ["<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>", "<system-reminder>", "Runtime: agent="]


def agent_env(home: Path) -> dict:
    env = dict(os.environ)
    env.update(
        HOME=str(home),
        PATH=f"{NODE}:{BIN}:{env['PATH']}",
        CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC="1",
        DISABLE_AUTOUPDATER="1",
        DISABLE_TELEMETRY="1",
        DISABLE_ERROR_REPORTING="1",
        CLAUDE_CODE_TMPDIR=str(home / "tmp"),
    )
    (home / "tmp").mkdir(exist_ok=True)
    return env


def run(args, env, cwd):
    out = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=180)
    assert out.returncode == 0, f"{args[0]} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return out.stdout


def chat_requests(fake, path):
    return [r for r in fake.requests() if r["path"].startswith(path)]


def main_turns(mc) -> list:
    turns = [t for t in mc.turns() if t["turn_type"] == "main"]
    return sorted(turns, key=lambda t: (t["created_at_ms"], t["turn_index"]))


def user_texts(message) -> list:
    c = message.get("content")
    if isinstance(c, str):
        return [c]
    return [p.get("text", "") for p in c if p.get("type") == "text"]


def test_claude_code_over_two_turns(fake):
    mc = MetaClaw(fake, "anthropic")
    home = Path(tempfile.mkdtemp(prefix="cc-home-"))
    work = home / "project"
    work.mkdir()
    env = agent_env(home)
    env.update(ANTHROPIC_BASE_URL=mc.base, ANTHROPIC_API_KEY=PROXY_KEY)
    try:
        fake.clear()
        claude = [str(BIN / "claude"), "-p", "--model", "fake-model", "--output-format", "json"]
        run(claude[:2] + [WEATHER] + claude[2:], env, work)
        first = chat_requests(fake, "/v1/messages")
        weather = main_turns(mc)
        run(claude[:2] + ["how should I write a good git commit message?", "--continue"] + claude[2:], env, work)
        second = chat_requests(fake, "/v1/messages")[len(first):]
        git = main_turns(mc)[len(weather):]
        assert first and second and weather and git
        # No skill fits the weather; Claude Code's reminders (git attribution, CLAUDE.md, its
        # environment) must not pull coding skills in. The git question gets one.
        assert all(not t["injected_skills"] for t in weather), [t["injected_skills"] for t in weather]
        assert any(t["injected_skills"] for t in git), [t["injected_skills"] for t in git]
        # The block sits on the user's own words, never inside a reminder.
        last = second[-1]["body"]
        user = [m for m in last["messages"] if m["role"] == "user"][-1]
        parts = user_texts(user)
        with_block = [p for p in parts if "<metaclaw-context>" in p]
        assert with_block, parts
        assert all("<system-reminder>" not in p for p in with_block)
        assert "git commit message" in "\n".join(parts)
        # What the first turn sent for the first question is resent unchanged.
        before = [m for m in first[-1]["body"]["messages"] if m["role"] == "user"][0]
        again = [m for m in last["messages"] if m["role"] == "user"][0]
        assert user_texts(before) == user_texts(again)
    finally:
        mc.stop()


def openclaw_onboard(env, base: str):
    run(
        [
            str(BIN / "openclaw"), "onboard", "--non-interactive", "--accept-risk",
            "--auth-choice", "custom-api-key", "--custom-base-url", base,
            "--custom-compatibility", "openai", "--custom-api-key", PROXY_KEY,
            "--custom-model-id", "fake-model", "--skip-health",
        ],
        env,
        env["HOME"],
    )


def test_openclaw_envelope_is_never_the_users_words(fake):
    mc = MetaClaw(fake, "openai", extra_config="memory:\n  enabled: true\n")
    home = Path(tempfile.mkdtemp(prefix="oc-home-"))
    env = agent_env(home)
    try:
        openclaw_onboard(env, mc.base + "/v1")
        fake.clear()
        oc = [str(BIN / "openclaw"), "agent", "--local", "--session-id", "pref-1", "--message"]
        run(oc + ["I prefer temperatures in Celsius, please remember that"], env, home)
        run(oc + [WEATHER], env, home)
        requests = chat_requests(fake, "/v1/chat/completions")
        assert len(requests) >= 2
        for r in requests:
            messages = r["body"]["messages"]
            envelope = messages[-1]
            assert "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>" in json.dumps(envelope)
            # The block never rides on the throwaway envelope message.
            assert "<metaclaw-context>" not in json.dumps(envelope)
        weather = [t for t in main_turns(mc) if WEATHER in t["request_json"]]
        assert weather
        assert all(not t["injected_skills"] for t in weather), [t["injected_skills"] for t in weather]

        # Learning reads the user's words: extraction on this conversation sends the preference
        # and none of the envelopes to the provider.
        session = weather[-1]["session_id"]
        fake.clear()
        token = (mc.home / "run" / "admin_token").read_text().strip()
        req = urllib.request.Request(
            mc.base + "/api/memory/extract",
            data=json.dumps({"session_id": session}).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            json.load(r)
        learning = [json.dumps(r["body"]) for r in fake.requests()]
        assert learning, "extraction asked the model"
        sent = "\n".join(learning)
        assert "Celsius" in sent
        for envelope in ENVELOPES:
            assert envelope not in sent, envelope
    finally:
        mc.stop()
