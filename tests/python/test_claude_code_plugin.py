"""The real Claude Code with MetaClaw as its plugin: Claude Code talks to its provider directly
with an OAuth-shaped token (as a subscription login does), and `metaclaw agent connect
claude-code --plugin` has its hooks ask MetaClaw for context and tell it each turn.

- a first session states a rule; its turn is recorded by MetaClaw with the user's words,
  marked `plugin:claude-code`, and learned when the session ends (no model is configured in
  MetaClaw: memory's rule-based extractor learns);
- a second session asks something sharing no word with the rule: its request reaches the
  provider with MetaClaw's block, the rule in it;
- the token never reaches MetaClaw (its home, database and logs are searched for it);
- with MetaClaw stopped, Claude Code still answers;
- `agent disconnect` gives `settings.json` back byte for byte.

Claude Code is installed from the npm registry by scripts/agents.sh; METACLAW_AGENTS_DIR points
at it."""

import json
import os
import re
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import METACLAW, PROXY_KEY, MetaClaw, holders_of, metaclaw_cli, wait_for
from test_real_agents import BIN, BLOCK, agent_env, agent_requests, model  # noqa: F401 (fixture)

OAUTH = "sk-ant-oat01-plugin-test-0123456789abcdefghij"
RULE = "From now on, always write dates as YYYY-MM-DD."
QUESTION = "When did the last release go out?"
# The user's own settings, as they might have written them.
SETTINGS = """{
  "theme": "dark",
  "hooks": {
    "Notification": [
      {"hooks": [{"type": "command", "command": "true"}]}
    ]
  }
}
"""
DEADLINE_S = 20




def ask(prompt, env, cwd):
    """One `claude -p` session; its answer and session id."""
    out = subprocess.run(
        [str(BIN / "claude"), "-p", prompt, "--model", "fake-model", "--output-format", "json"],
        env=env, cwd=cwd, capture_output=True, text=True, timeout=60,
    )
    assert out.returncode == 0, f"claude failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    result = json.loads(out.stdout)
    assert not result.get("is_error"), result
    return result["result"], result["session_id"]






def test_claude_code_with_metaclaw_as_its_plugin(model):
    mc = MetaClaw(None, "", extra_config="skills:\n  enabled: false\n")
    home = Path(tempfile.mkdtemp(prefix="cc-plugin-home-"))
    work = home / "project"
    work.mkdir()
    settings = home / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(SETTINGS)
    original = settings.read_bytes()

    cli_env = dict(os.environ, HOME=str(home), METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file")
    env = agent_env(home)
    for name in ("METACLAW_HOME", "ANTHROPIC_API_KEY"):
        env.pop(name, None)
    # Straight to the provider, as a subscription login: MetaClaw is not in the way.
    env.update(ANTHROPIC_BASE_URL=model.base, ANTHROPIC_AUTH_TOKEN=OAUTH)
    try:
        plain = subprocess.run([METACLAW, "agent", "connect", "claude-code"], env=cli_env,
                               capture_output=True, text=True, timeout=30)
        assert plain.returncode == 2, plain
        assert "--plugin" in plain.stderr and "ANTHROPIC_BASE_URL" in plain.stderr, plain.stderr
        assert settings.read_bytes() == original

        metaclaw_cli(["agent", "connect", "claude-code", "--plugin"], cli_env)
        written = json.loads(settings.read_text())
        assert written["theme"] == "dark" and written["hooks"]["Notification"], written
        for event in ("UserPromptSubmit", "Stop", "SessionEnd"):
            (group,) = written["hooks"][event]
            (hook,) = group["hooks"]
            assert hook["type"] == "command" and hook["timeout"] > 0, hook
            # The binary by its absolute path, and the home, which is not the default one.
            assert hook["command"] == f"METACLAW_HOME={mc.home} {Path(METACLAW).resolve()} hook claude-code", hook
        text = settings.read_text()
        for secret in (PROXY_KEY, "ANTHROPIC", "api_key", "apiKey"):
            assert secret not in text, secret
        assert "plugin" in metaclaw_cli(["agent", "status", "claude-code"], cli_env)

        # Session one states the rule; its turn is MetaClaw's, in the user's words.
        model.clear()
        answer, first = ask(RULE, env, work)
        assert answer == "Noted."
        assert all(r["authorization"] == f"Bearer {OAUTH}" for r in model.requests())
        turns = wait_for("the first turn", lambda: mc.turns(first), DEADLINE_S)
        assert [t["upstream"] for t in turns] == ["plugin:claude-code"], turns
        assert RULE in turns[0]["request_json"], turns[0]["request_json"]
        assert "<system-reminder>" not in turns[0]["request_json"]
        # Claude Code ended the session on exit (SessionEnd): the rule is learned.
        wait_for("the rule learned", lambda: mc.admin("GET", "/api/memory")["total"] > 0, DEADLINE_S)

        # Session two shares no word with the rule: the rule reaches the provider in the block.
        model.clear()
        answer, second = ask(QUESTION, env, work)
        assert answer == "Noted." and second != first
        (request,) = agent_requests(model)
        sent = json.dumps(request["body"])
        assert BLOCK in sent, sent[-3000:]
        block = re.search(r"<metaclaw-context>.*?</metaclaw-context>", sent, re.DOTALL).group(0)
        assert "YYYY-MM-DD" in block, block
        assert request["authorization"] == f"Bearer {OAUTH}"
        wait_for("the second turn", lambda: mc.turns(second), DEADLINE_S)

        # MetaClaw stopped: Claude Code goes on as if the plugin were absent, without waiting.
        mc.stop()
        started = time.monotonic()
        answer, _ = ask("Anything new?", env, work)
        assert answer == "Noted."
        assert time.monotonic() - started < DEADLINE_S

        # MetaClaw never saw the provider's token.
        assert not holders_of(mc.home, OAUTH.encode()), holders_of(mc.home, OAUTH.encode())

        said = metaclaw_cli(["agent", "disconnect", "claude-code"], cli_env)
        assert "restored" in said, said
        assert settings.read_bytes() == original
    finally:
        if mc.proc.poll() is None:
            mc.stop()
