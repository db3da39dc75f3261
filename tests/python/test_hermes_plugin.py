"""MetaClaw inside Hermes Agent (the real one from PyPI) as its memory provider, with Hermes
talking to its provider directly and MetaClaw configured with no provider at all (a user who
pays by subscription): a rule said in one session is in the next session's prompt at the
provider, the turns are recorded with the user's words, and with MetaClaw stopped Hermes still
answers. The provider is the fake upstream, reached by Hermes alone.

The plugin is `integrations/hermes/metaclaw/`, installed by `metaclaw agent connect hermes
--plugin`: written under MetaClaw's home, linked where Hermes finds user plugins
(`$HERMES_HOME/plugins/metaclaw`) and selected as `memory.provider`; Hermes runs without
`METACLAW_HOME` (the plugin finds MetaClaw's home from where it is installed), and disconnect
gives `config.yaml` back byte for byte and removes the link."""

import json
import tempfile
from pathlib import Path

from conftest import UPSTREAM_KEY, MetaClaw, metaclaw_cli, wait_for
from test_real_agents_pypi import HERMES_BIN, HERMES_VERSION, agent_env, installed, run

RULE = "From now on, always write dates as YYYY-MM-DD."




def provider_prompts(fake) -> list:
    """The chat requests Hermes sent its provider, as text."""
    return [json.dumps(r["body"]) for r in fake.requests() if r["path"].startswith("/v1/chat/completions")]


def test_hermes_learns_through_metaclaw_as_its_memory_provider(fake):
    installed(HERMES_BIN / "hermes", "hermes-agent", HERMES_VERSION)
    mc = MetaClaw(None, "openai", "skills:\n  enabled: false\n")
    home = Path(tempfile.mkdtemp(prefix="hermes-plugin-"))
    env = agent_env(home, HERMES_BIN)
    env.pop("METACLAW_HOME", None)
    hermes = HERMES_BIN / "hermes"
    try:
        for key, value in [("model.provider", "custom"), ("model.base_url", fake.base + "/v1"),
                           ("model.default", "fake-model"), ("model.api_key", UPSTREAM_KEY)]:
            run([hermes, "config", "set", key, value], env)
        config = home / ".hermes/config.yaml"
        original = config.read_bytes()
        cli_env = dict(env, METACLAW_HOME=str(mc.home), METACLAW_SECRET_BACKEND="file")
        metaclaw_cli(["agent", "connect", "hermes", "--plugin"], cli_env)
        link = home / ".hermes/plugins/metaclaw"
        assert link.is_symlink() and link.resolve() == (mc.home / "integrations/hermes/metaclaw").resolve()
        assert "provider: metaclaw" in config.read_text()

        # Session one: the user states a rule; Hermes exits, the session ends, MetaClaw learns.
        fake.clear()
        run([hermes, "chat", "-Q", "-q", f"{RULE} What is two plus two?"], env, timeout=300)
        assert provider_prompts(fake), "Hermes reached its provider directly"
        turns = wait_for("the first turn", lambda: [t for t in mc.turns() if RULE in t["request_json"]])
        assert turns[0]["upstream"] == "plugin:hermes", turns[0]
        wait_for("the rule learned", lambda: mc.admin("GET", "/api/memory")["total"] > 0)

        # Session two shares no word with the rule: MetaClaw's block carries it to the provider.
        fake.clear()
        run([hermes, "chat", "-Q", "-q", "When did the last release go out?"], env, timeout=300)
        prompts = provider_prompts(fake)
        assert any("metaclaw-context" in p and "YYYY-MM-DD" in p for p in prompts), prompts[-1][-3000:]

        # MetaClaw stopped: Hermes answers as if the provider were absent.
        mc.stop()
        fake.clear()
        out = run([hermes, "chat", "-Q", "-q", "Say hello in one word."], env, timeout=300)
        assert provider_prompts(fake), out.stdout[-2000:]
        assert all("metaclaw-context" not in p for p in provider_prompts(fake))

        metaclaw_cli(["agent", "disconnect", "hermes"], cli_env)
        assert config.read_bytes() == original
        assert not link.exists() and not link.is_symlink()
    finally:
        if mc.proc.poll() is None:
            mc.stop()
