"""The real agents, headless, through a real MetaClaw to a scripted model: what MetaClaw reads as
the user's words, where it puts its block, and that the agents' envelopes never become retrieval
queries, skill choices or learning material.

For each agent and protocol (OpenClaw on `openai-completions` and on `anthropic-messages`, set up
by its own `onboard`; Claude Code over several turns with `--continue`):
- a first conversation states a preference (and, for OpenClaw, makes the model call OpenClaw's
  real `read` tool and get its result back);
- what the upstream got in each request is resent unchanged, block included, at the start of the
  next request of that conversation;
- memory extraction and skill evolution, triggered through the admin API, are shown the user's
  words and none of the agent's envelopes;
- a new conversation asking about the weather gets the preference learned in the first one in
  its block, and no skill.

Claude Code and OpenClaw are installed from the npm registry by scripts/agents.sh (pinned
versions, Node 24 for OpenClaw); METACLAW_AGENTS_DIR points at them."""

import itertools
import json
import os
import re
import subprocess
import tempfile
import threading
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

from conftest import PROXY_KEY, MetaClaw

AGENTS = Path(os.environ.get("METACLAW_AGENTS_DIR", Path(__file__).resolve().parents[2] / "target/agents"))
BIN = AGENTS / "node_modules/.bin"
NODE = AGENTS / "node_modules/node/bin"
WEATHER = "what's the weather tomorrow in Rome?"
PREFERENCE = "From now on, when you tell me the weather, use Celsius."
BLOCK = "<metaclaw-context>"
OPENCLAW_CONTEXT = "<<<BEGIN_OPENCLAW_INTERNAL_CONTEXT>>>"
# What each agent wraps around the user's words; none of it may reach a learning call.
OPENCLAW_ENVELOPES = [
    OPENCLAW_CONTEXT,
    "Conversation data (data, not instructions)",
    "Active Subagents",
    "Runtime: agent=",
    "sessionId=",
    "running inside OpenClaw",
    BLOCK,
]
CLAUDE_ENVELOPES = [
    "<system-reminder>",
    "# Environment",
    "Primary working directory",
    "Attribution for git commits",
    "x-anthropic-billing-header",
    BLOCK,
]
# OpenClaw's arrival stamp: `[Fri 2026-12-04 01:57 UTC] `.
STAMP = re.compile(r"\[(Mon|Tue|Wed|Thu|Fri|Sat|Sun) \d{4}-\d{2}-\d{2} \d{2}:\d{2}")
RULE = re.compile(r"From now on[^.!?\"\\]*", re.IGNORECASE)
TURN_TIMEOUT_S = 120


def text_of(content) -> str:
    """The text of string-or-parts content, tool results included."""
    if isinstance(content, str):
        return content
    out = []
    for p in content or []:
        if p.get("type") == "text":
            out.append(p.get("text", ""))
        elif p.get("type") == "tool_result":
            out.append(text_of(p.get("content")))
    return "\n".join(out)


def is_tool_result(message) -> bool:
    c = message.get("content")
    return message.get("role") == "tool" or (
        isinstance(c, list) and any(p.get("type") == "tool_result" for p in c)
    )


class ScriptedModel:
    """A model on a loopback port speaking OpenAI chat completions and Anthropic Messages (JSON
    and SSE), recording every request:
    - it calls a tool when the user's newest words (outside MetaClaw's block) name a file it was
      told about (`tools`), and answers a tool result with what the tool said;
    - asked for JSON holding `memories` (extraction), it writes one preference memory for every
      "From now on …" sentence of the conversation it was shown, in those words; asked for
      `skills` (evolution), it proposes none;
    - anything else it answers "Noted."."""

    def __init__(self):
        self._lock = threading.Lock()
        self._requests = []
        self._ids = itertools.count(1)
        self.tools = {}  # word in the user's newest text -> (tool name, arguments)
        model = self

        class Handler(BaseHTTPRequestHandler):
            def log_message(self, *args):
                pass

            def do_GET(self):
                self._json({"object": "list", "data": [{"id": "fake-model", "object": "model"}]})

            def do_POST(self):
                raw = self.rfile.read(int(self.headers.get("Content-Length", 0)))
                body = json.loads(raw or b"{}")
                with model._lock:
                    model._requests.append(
                        {"path": self.path, "body": body, "authorization": self.headers.get("Authorization")}
                    )
                if self.path.startswith("/v1/messages/count_tokens"):
                    return self._json({"input_tokens": len(raw) // 4})
                proto = "anthropic" if self.path.startswith("/v1/messages") else "openai"
                reply = model.decide(proto, body)
                n = next(model._ids)
                if not body.get("stream"):
                    return self._json(whole(proto, n, reply))
                self.send_response(200)
                self.send_header("Content-Type", "text/event-stream")
                self.end_headers()
                for event in events(proto, n, reply, body):
                    self.wfile.write(event.encode())
                    self.wfile.flush()

            def _json(self, value):
                data = json.dumps(value).encode()
                self.send_response(200)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self._server.daemon_threads = True
        self.base = f"http://127.0.0.1:{self._server.server_address[1]}"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def requests(self):
        with self._lock:
            return list(self._requests)

    def clear(self):
        with self._lock:
            self._requests.clear()

    def stop(self):
        self._server.shutdown()
        self._server.server_close()

    def decide(self, proto, body):
        learning = learning_answer(proto, body)
        if learning is not None:
            return ("text", learning)
        messages = body.get("messages") or []
        last_reply = max((i for i, m in enumerate(messages) if m.get("role") == "assistant"), default=-1)
        newest = messages[last_reply + 1:]
        results = [text_of(m.get("content")) for m in newest if is_tool_result(m)]
        if results:
            return ("text", "The tool said: " + " ".join(results)[:400])
        offered = {t.get("name") or t.get("function", {}).get("name") for t in body.get("tools") or []}
        said = "\n".join(text_of(m.get("content")) for m in newest if m.get("role") == "user")
        # What the user said, not what MetaClaw's block recalls of earlier conversations.
        said = re.sub(r"<metaclaw-context>.*?</metaclaw-context>", "", said, flags=re.DOTALL)
        for word, (name, arguments) in self.tools.items():
            if word in said and name in offered:
                return ("tool", name, arguments)
        return ("text", "Noted.")


def learning_answer(proto, body):
    """The answer to a learning call, or None for any other request."""
    name = ((body.get("response_format") or {}).get("json_schema") or {}).get("name", "")
    system = text_of(body.get("system")) if proto == "anthropic" else ""
    if not name and "Reply with one JSON object only" in system:
        name = "memories" if '{"memories"' in system else "skills" if '{"skills"' in system else ""
    if "memories" in name:
        shown = "\n".join(text_of(m.get("content")) for m in body.get("messages") or [] if m.get("role") == "user")
        rules = dict.fromkeys(r.strip() for r in RULE.findall(shown))
        memories = [
            {"kind": "preference", "content": f"{r}.", "fact_key": None, "importance": 0.8,
             "confidence": 0.9, "tags": [], "source_turn": None}
            for r in rules
        ]
        return json.dumps({"memories": memories})
    if "skills" in name:
        return json.dumps({"skills": []})
    return None


def whole(proto, n, reply):
    if proto == "openai":
        if reply[0] == "tool":
            call = {"id": f"call_{n}", "type": "function",
                    "function": {"name": reply[1], "arguments": json.dumps(reply[2])}}
            message, finish = {"role": "assistant", "content": None, "tool_calls": [call]}, "tool_calls"
        else:
            message, finish = {"role": "assistant", "content": reply[1]}, "stop"
        return {"id": f"chatcmpl-{n}", "object": "chat.completion", "created": 0, "model": "fake-model",
                "choices": [{"index": 0, "message": message, "finish_reason": finish}],
                "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}
    if reply[0] == "tool":
        content, stop = [{"type": "tool_use", "id": f"toolu_{n}", "name": reply[1], "input": reply[2]}], "tool_use"
    else:
        content, stop = [{"type": "text", "text": reply[1]}], "end_turn"
    return {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "fake-model", "content": content,
            "stop_reason": stop, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 5}}


def events(proto, n, reply, body):
    def sse(data, event=None):
        return (f"event: {event}\n" if event else "") + f"data: {json.dumps(data)}\n\n"

    if proto == "openai":
        def chunk(delta, finish=None):
            return sse({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0, "model": "fake-model",
                        "choices": [{"index": 0, "delta": delta, "finish_reason": finish}]})

        out = [chunk({"role": "assistant", "content": ""})]
        if reply[0] == "tool":
            start = {"index": 0, "id": f"call_{n}", "type": "function", "function": {"name": reply[1], "arguments": ""}}
            out += [chunk({"tool_calls": [start]}),
                    chunk({"tool_calls": [{"index": 0, "function": {"arguments": json.dumps(reply[2])}}]}),
                    chunk({}, "tool_calls")]
        else:
            out += [chunk({"content": reply[1]}), chunk({}, "stop")]
        if (body.get("stream_options") or {}).get("include_usage"):
            out.append(sse({"id": f"chatcmpl-{n}", "object": "chat.completion.chunk", "created": 0,
                            "model": "fake-model", "choices": [],
                            "usage": {"prompt_tokens": 10, "completion_tokens": 5, "total_tokens": 15}}))
        return out + ["data: [DONE]\n\n"]
    message = {"id": f"msg_{n}", "type": "message", "role": "assistant", "model": "fake-model", "content": [],
               "stop_reason": None, "stop_sequence": None, "usage": {"input_tokens": 10, "output_tokens": 1}}
    if reply[0] == "tool":
        block = {"type": "tool_use", "id": f"toolu_{n}", "name": reply[1], "input": {}}
        delta, stop = {"type": "input_json_delta", "partial_json": json.dumps(reply[2])}, "tool_use"
    else:
        block = {"type": "text", "text": ""}
        delta, stop = {"type": "text_delta", "text": reply[1]}, "end_turn"
    return [
        sse({"type": "message_start", "message": message}, "message_start"),
        sse({"type": "content_block_start", "index": 0, "content_block": block}, "content_block_start"),
        sse({"type": "content_block_delta", "index": 0, "delta": delta}, "content_block_delta"),
        sse({"type": "content_block_stop", "index": 0}, "content_block_stop"),
        sse({"type": "message_delta", "delta": {"stop_reason": stop, "stop_sequence": None},
             "usage": {"output_tokens": 5}}, "message_delta"),
        sse({"type": "message_stop"}, "message_stop"),
    ]


@pytest.fixture(scope="module")
def model():
    m = ScriptedModel()
    yield m
    m.stop()


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
    out = subprocess.run(args, env=env, cwd=cwd, capture_output=True, text=True, timeout=TURN_TIMEOUT_S)
    assert out.returncode == 0, f"{args[0]} failed ({out.returncode}):\n{out.stdout[-2000:]}\n{out.stderr[-2000:]}"
    return out.stdout


def start_metaclaw(model, api: str) -> MetaClaw:
    return MetaClaw(model, api, extra_config="memory:\n  enabled: true\n  auto_extract: false\n"
                    "skills:\n  auto_evolve: false\n")


def main_turns(mc) -> list:
    turns = [t for t in mc.turns() if t["turn_type"] == "main"]
    return sorted(turns, key=lambda t: (t["created_at_ms"], t["turn_index"]))


def agent_requests(model) -> list:
    """The agent's requests (they offer tools), oldest first; learning calls offer none."""
    return [r for r in model.requests() if r["body"].get("tools")]


def normalized(value, anthropic: bool):
    """For Anthropic, what the provider's prompt cache sees: `cache_control` is a marker the
    agents move to their newest message each turn, not prompt text, and string content is
    shorthand for one text block. OpenAI requests are compared exactly."""
    if not anthropic:
        return value
    if isinstance(value, list):
        return [normalized(v, anthropic) for v in value]
    if isinstance(value, dict):
        out = {k: normalized(v, anthropic) for k, v in value.items() if k != "cache_control"}
        if isinstance(out.get("content"), str) and "role" in out:
            out["content"] = [{"type": "text", "text": out["content"]}]
        return out
    return value


def assert_prefix_kept(requests, anthropic: bool):
    """Everything the upstream got in one request of a conversation, except OpenClaw's trailing
    internal-context message (dropped by OpenClaw itself on the next turn), is resent byte for byte
    at the start of the next: system, tools, and every message up to and including the user's
    message with its block. Returns how many of the kept prefixes carried a block."""
    assert len(requests) >= 2, len(requests)
    with_block = 0
    for before, after in zip(requests, requests[1:]):
        b, a = before["body"], after["body"]
        kept = list(b["messages"])
        while kept and kept[-1]["role"] == "user" and text_of(kept[-1]["content"]).startswith(OPENCLAW_CONTEXT):
            kept.pop()
        sent = json.dumps(normalized(kept, anthropic))
        resent = json.dumps(normalized(a["messages"][: len(kept)], anthropic))
        assert resent == sent, f"prefix changed:\n{sent[-3000:]}\n---\n{resent[-3000:]}"
        for key in ("system", "tools"):
            assert json.dumps(normalized(a.get(key), anthropic)) == json.dumps(normalized(b.get(key), anthropic)), key
        with_block += BLOCK in sent
    return with_block


def block_message(body):
    """The last message carrying a MetaClaw block: (index, its text)."""
    carrying = [(i, text_of(m["content"])) for i, m in enumerate(body["messages"]) if BLOCK in text_of(m["content"])]
    assert carrying, "no block in the request"
    return carrying[-1]


def assert_after_the_users_words(text: str, words: str):
    """The block follows the user's words in their message, outside any reminder."""
    before = text[: text.index(BLOCK)]
    assert words in before, text
    assert before.count("<system-reminder>") == before.count("</system-reminder>"), text


def learn(mc, model, session: str) -> list:
    """Extraction and evolution of `session`, through the admin API; the learning calls made."""
    model.clear()
    token = (mc.home / "run" / "admin_token").read_text().strip()
    for path in ("/api/memory/extract", "/api/skills/evolve"):
        req = urllib.request.Request(
            mc.base + path,
            data=json.dumps({"session_id": session}).encode(),
            method="POST",
            headers={"Authorization": f"Bearer {token}", "Content-Type": "application/json"},
        )
        with urllib.request.urlopen(req, timeout=60) as r:
            outcome = json.load(r)
        assert outcome.get("error") is None, (path, outcome)
        if path.endswith("extract"):
            assert outcome["added"], outcome
    calls = [json.dumps(r["body"]) for r in model.requests()]
    kinds = [("memory" if "memory extractor" in c else "skill" if "skill engineer" in c else "?") for c in calls]
    assert sorted(kinds) == ["memory", "skill"], kinds
    return calls


def assert_learning_reads_the_user(calls, words, envelopes):
    for call in calls:
        for w in words:
            assert w in call, (w, call[:3000])
        for e in envelopes:
            assert e not in call, (e, call[:3000])
        assert not STAMP.search(call), STAMP.search(call)


def assert_preference_comes_back(body, turns):
    """The weather question of a new conversation: the preference learned earlier is in the block
    on the user's own message, and no skill is."""
    index, text = block_message(body)
    assert_after_the_users_words(text, WEATHER)
    block = text[text.index(BLOCK):]
    assert "use Celsius" in block, block
    assert "## Skills" not in block, block
    assert index == max(i for i, m in enumerate(body["messages"]) if WEATHER in text_of(m["content"]))
    assert turns and all(not t["injected_skills"] for t in turns), [t["injected_skills"] for t in turns]


def assert_a_new_conversation_gets_it(model, mc, first_session: str, ask_weather):
    """`ask_weather()` asks the weather in a new conversation: one request, carrying the
    preference learned in `first_session`, and no skill."""
    model.clear()
    ask_weather()
    weather = agent_requests(model)
    assert len(weather) == 1, [json.dumps(r["body"]["messages"])[-2000:] for r in weather]
    later = [t for t in main_turns(mc) if t["session_id"] != first_session]
    assert_preference_comes_back(weather[0]["body"], later)


def assert_follow_ups_read_from_the_user(mc, say, answered: int):
    """`say(text)` sends the user's next message in the conversation so far, in which the
    user answered `answered` times without objecting, once with "thanks, that helps". Each
    answer is labelled by the user's next words inside the agent's envelope: they went on or
    thanked, then "No, …" corrects."""
    say("No, that's wrong: keep it under fifty characters.")
    base = mc.admin("GET", "/api/effect?days=1")["baseline"]
    assert (base["labelled"], base["corrections"], base["repeats"], base["thanks"]) == (answered, 1, 0, 1), base


def test_claude_code_over_several_turns(model):
    mc = start_metaclaw(model, "anthropic")
    home = Path(tempfile.mkdtemp(prefix="cc-home-"))
    work = home / "project"
    work.mkdir()
    env = agent_env(home)
    env.update(ANTHROPIC_BASE_URL=mc.base, ANTHROPIC_API_KEY=PROXY_KEY)
    claude = [str(BIN / "claude"), "-p"]
    opts = ["--model", "fake-model", "--output-format", "json"]
    try:
        model.tools = {}
        model.clear()
        questions = [PREFERENCE, "how should I write a good git commit message?", "thanks, that helps"]
        for i, q in enumerate(questions):
            out = run(claude + [q] + (["--continue"] if i else []) + opts, env, work)
            assert json.loads(out)["result"] == "Noted.", out[-1000:]
        first = agent_requests(model)
        assert len(first) == len(questions), [r["path"] for r in first]
        turns = main_turns(mc)
        assert len({t["session_id"] for t in turns}) == 1, turns
        # The git question gets a skill, on the user's own words, never inside a reminder.
        index, text = block_message(first[1]["body"])
        assert_after_the_users_words(text, "how should I write a good git commit message?")
        assert any(t["injected_skills"] for t in turns)
        assert assert_prefix_kept(first, anthropic=True) >= 1

        calls = learn(mc, model, turns[0]["session_id"])
        assert_learning_reads_the_user(calls, ["use Celsius", "git commit message"], CLAUDE_ENVELOPES)
        assert_follow_ups_read_from_the_user(mc, lambda text: run(claude + [text, "--continue"] + opts, env, work), 3)

        # A new conversation (no --continue): the preference is in its prompt.
        assert_a_new_conversation_gets_it(model, mc, turns[0]["session_id"], lambda: run(claude + [WEATHER] + opts, env, work))
    finally:
        mc.stop()


@pytest.mark.parametrize("protocol", ["openai", "anthropic"])
def test_openclaw_tool_round_trip_and_learning(model, protocol):
    mc = start_metaclaw(model, protocol)
    home = Path(tempfile.mkdtemp(prefix=f"oc-{protocol}-"))
    env = agent_env(home)
    anthropic = protocol == "anthropic"
    try:
        # The provider block is OpenClaw's own, as its onboarding writes it; the base URL is the
        # one `metaclaw agent connect openclaw` writes for that protocol.
        base = mc.base if anthropic else mc.base + "/v1"
        run(
            [
                str(BIN / "openclaw"), "onboard", "--non-interactive", "--accept-risk",
                "--auth-choice", "custom-api-key", "--custom-base-url", base,
                "--custom-compatibility", protocol, "--custom-api-key", PROXY_KEY,
                "--custom-model-id", "fake-model", "--skip-health",
            ],
            env,
            home,
        )
        config = (home / ".openclaw/openclaw.json").read_text()
        assert f'"{"anthropic-messages" if anthropic else "openai-completions"}"' in config, config
        notes = home / "notes.txt"
        notes.write_text("The secret word is pistachio.\n")
        model.tools = {"notes.txt": ("read", {"path": str(notes)})}
        model.clear()

        oc = [str(BIN / "openclaw"), "agent", "--local", "--session-id"]
        first = f"{PREFERENCE} Now read notes.txt and suggest a git commit message for it."
        out = run(oc + ["c1", "--message", first], env, home)
        assert "The tool said: The secret word is pistachio." in out, out[-2000:]
        run(oc + ["c1", "--message", "thanks, that helps"], env, home)
        requests = agent_requests(model)
        # The tool round trip: the call, then its result back in the next request.
        assert len(requests) == 3, [len(r["body"]["messages"]) for r in requests]
        call, result = requests[1]["body"]["messages"][-3:-1]
        assert "read" in json.dumps(call) and "pistachio" in text_of(result["content"]), (call, result)
        assert is_tool_result(result)
        for r in requests:
            envelope = r["body"]["messages"][-1]
            assert text_of(envelope["content"]).startswith(OPENCLAW_CONTEXT)
            assert BLOCK not in json.dumps(envelope), "the block never rides on the throwaway envelope"
        # The block sits on the user's stamped words, and stays there byte for byte.
        index, text = block_message(requests[0]["body"])
        assert_after_the_users_words(text, "suggest a git commit message for it.")
        assert assert_prefix_kept(requests, anthropic) >= 1

        # What MetaClaw recorded: one session; the tool call, then the turn carrying its result.
        turns = main_turns(mc)
        assert len(turns) == 3 and len({t["session_id"] for t in turns}) == 1, turns
        assert all(t["status"] == 200 and not t["error"] for t in turns), [(t["status"], t["error"]) for t in turns]
        assert '"read"' in turns[0]["reply_json"] and "notes.txt" in turns[0]["reply_json"]
        assert "pistachio" in turns[1]["request_json"] and "The tool said" in turns[1]["reply_json"]
        assert any(t["injected_skills"] for t in turns)

        calls = learn(mc, model, turns[0]["session_id"])
        assert_learning_reads_the_user(calls, ["use Celsius", "notes.txt", "thanks, that helps"], OPENCLAW_ENVELOPES)
        # The call and the turn carrying its result are one request of the user's: its words
        # reach each learning call once.
        for c in calls:
            assert c.count("suggest a git commit message for it") == 1, c[:3000]
        # The tool round is the agent at work: only the user's own messages are labelled.
        assert_follow_ups_read_from_the_user(mc, lambda text: run(oc + ["c1", "--message", text], env, home), 2)

        # A new conversation: the preference is in its prompt; no skill fits the weather.
        assert_a_new_conversation_gets_it(model, mc, turns[0]["session_id"], lambda: run(oc + ["c2", "--message", WEATHER], env, home))
    finally:
        mc.stop()
