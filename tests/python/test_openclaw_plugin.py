"""The real OpenClaw with MetaClaw as its context engine: OpenClaw talks to its provider
directly (MetaClaw is configured with no provider at all, as for a user who pays by
subscription), and `metaclaw agent connect openclaw --plugin` has it load MetaClaw's plugin
(`integrations/openclaw/`, written under MetaClaw's home):

- a first session states a rule; the turn is recorded by MetaClaw in the user's words (no
  arrival stamp, no runtime line), marked `plugin:openclaw`, and learned when the session ends
  (`/new`);
- a second session asks something sharing no word with the rule: the request reaches the
  provider with MetaClaw's block in the system prompt, the rule in it, and OpenClaw's own
  memory section (`memory-core`) still there;
- the provider's key never reaches MetaClaw (only the 0600 backup of OpenClaw's own file has it);
- with MetaClaw stopped, OpenClaw still answers, and says so once in its log;
- `agent disconnect` gives `openclaw.json` back byte for byte.

OpenClaw is installed from the npm registry by scripts/agents.sh (pinned); METACLAW_AGENTS_DIR
points at it."""

import json
import re
import subprocess
import tempfile
import time
from pathlib import Path

from conftest import PROXY_KEY, MetaClaw, holders_of, metaclaw_cli, wait_for
from test_real_agents import BIN, BLOCK, agent_env, model, run  # noqa: F401 (fixture)

PROVIDER_KEY = "sk-provider-direct-0123456789abcdefghij"
RULE = "From now on, always write dates as YYYY-MM-DD."
QUESTION = "When did the last release go out?"
STAMP = re.compile(r"\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d{2}-\d{2}")






def system_prompts(model) -> list:
    """The system prompt of each agent request (they offer tools), oldest first."""
    out = []
    for r in model.requests():
        body = r["body"]
        if not body.get("tools"):
            continue
        system = [m for m in body.get("messages", []) if m.get("role") == "system"]
        out.append(json.dumps(system[0]["content"]) if system else "")
    return out




def test_openclaw_with_metaclaw_as_its_context_engine(model):
    mc = MetaClaw(None, "", extra_config="skills:\n  enabled: false\nsession:\n  idle_timeout_minutes: 0.2\n")
    home = Path(tempfile.mkdtemp(prefix="oc-plugin-home-"))
    env = agent_env(home)
    env.pop("METACLAW_HOME", None)
    cli_env = dict(env, METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file")
    oc = [str(BIN / "openclaw"), "agent", "--local", "--session-id"]
    try:
        # OpenClaw's own provider, as its onboarding writes it: straight to the model.
        run([str(BIN / "openclaw"), "onboard", "--non-interactive", "--accept-risk",
             "--auth-choice", "custom-api-key", "--custom-base-url", model.base + "/v1",
             "--custom-compatibility", "openai", "--custom-api-key", PROVIDER_KEY,
             "--custom-model-id", "fake-model", "--skip-health"], env, home)
        config = home / ".openclaw/openclaw.json"
        original = config.read_bytes()

        said = metaclaw_cli(["agent", "connect", "openclaw", "--plugin"], cli_env)
        assert "Connected openclaw" in said, said
        written = config.read_text()
        for secret in (PROXY_KEY, "admin_token"):
            assert secret not in written, secret
        plugins = json.loads(written)["plugins"]
        package = mc.home / "integrations/openclaw"
        assert plugins["slots"]["contextEngine"] == "metaclaw"
        assert plugins["load"]["paths"] == [str(package)]
        assert plugins["entries"]["metaclaw"] == {"enabled": True, "config": {"home": str(mc.home)}}
        assert (package / "openclaw.plugin.json").is_file() and (package / "index.ts").is_file()
        # The provider is still OpenClaw's own.
        assert json.loads(written)["models"] == json.loads(original)["models"]
        assert "connected (plugin)" in metaclaw_cli(["agent", "status", "openclaw"], cli_env)

        # Session one states the rule; its turn is MetaClaw's, in the user's words.
        model.clear()
        out = run(oc + ["p1", "--message", RULE], env, home)
        assert "Noted." in out, out[-2000:]
        assert all(r["authorization"] == f"Bearer {PROVIDER_KEY}" for r in model.requests())
        turns = wait_for("the first turn", lambda: [t for t in mc.turns() if RULE in t["request_json"]])
        assert [t["upstream"] for t in turns] == ["plugin:openclaw"], turns
        request = turns[0]["request_json"]
        assert not STAMP.search(request) and "Runtime:" not in request, request
        assert "Noted." in turns[0]["reply_json"]
        # The conversation goes quiet and ends: MetaClaw learns the rule.
        wait_for("the rule learned", lambda: mc.admin("GET", "/api/memory")["total"] > 0)

        # Session two shares no word with the rule: the rule reaches the provider in the
        # system prompt, beside OpenClaw's own memory section.
        model.clear()
        out = run(oc + ["p2", "--message", QUESTION], env, home)
        assert "Noted." in out, out[-2000:]
        prompts = system_prompts(model)
        assert prompts and all(BLOCK in p for p in prompts), prompts[-1][-3000:]
        block = re.search(r"<metaclaw-context>.*?</metaclaw-context>", prompts[0], re.DOTALL).group(0)
        assert "YYYY-MM-DD" in block, block
        assert "## Memory Recall" in prompts[0], "OpenClaw's memory section stays"
        wait_for("the second turn", lambda: [t for t in mc.turns() if QUESTION in t["request_json"]])

        # MetaClaw stopped: OpenClaw answers as before, and says why once.
        mc.stop()
        model.clear()
        started = time.monotonic()
        out = subprocess.run(oc + ["p3", "--message", "Anything new?"], env=env, cwd=home,
                             capture_output=True, text=True, timeout=180)
        assert out.returncode == 0, out.stderr[-2000:]
        assert "Noted." in out.stdout + out.stderr
        logged = out.stdout + out.stderr
        assert logged.count("[metaclaw] MetaClaw is not running") == 1, logged[-3000:]
        assert all(BLOCK not in p for p in system_prompts(model))
        assert time.monotonic() - started < 180

        # MetaClaw never saw the provider's key: only the backup of OpenClaw's own file (which
        # holds it) has it, readable by the user alone, for disconnect to restore byte for byte.
        holders = holders_of(mc.home, PROVIDER_KEY.encode())
        backups = mc.home / "agent-backup/openclaw"
        assert holders and all(p.parent == backups for p in holders), holders
        assert all(p.stat().st_mode & 0o077 == 0 for p in holders), [oct(p.stat().st_mode) for p in holders]

        said = metaclaw_cli(["agent", "disconnect", "openclaw"], cli_env)
        assert "restored" in said, said
        assert config.read_bytes() == original
    finally:
        if mc.proc.poll() is None:
            mc.stop()
