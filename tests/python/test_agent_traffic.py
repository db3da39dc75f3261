"""Multi-turn traffic shaped like OpenClaw's and Claude Code's (SPEC §2, "Facts about real
clients' traffic"): nothing is rejected, sessions are detected, unknown fields survive."""

import json

import anthropic
import openai

from conftest import PROXY_KEY

SYSTEM = "You are OpenClaw. " + "Follow the workspace rules carefully. " * 900  # ~34 K chars
TOOLS = [
    {
        "type": "function",
        "function": {
            "name": "exec",
            "description": "Run a shell command",
            "parameters": {"type": "object", "properties": {"command": {"type": "string"}}},
        },
    }
]


def openclaw_turn(client, messages):
    """OpenClaw always streams, asks for usage, sends tools with tool_choice auto."""
    stream = client.chat.completions.create(
        model="metaclaw/fake-model",
        messages=messages,
        stream=True,
        stream_options={"include_usage": True},
        tools=TOOLS,
        tool_choice="auto",
        max_completion_tokens=8192,
    )
    text, calls = "", {}
    for c in stream:
        if not c.choices:
            continue
        d = c.choices[0].delta
        text += d.content or ""
        for tc in d.tool_calls or []:
            slot = calls.setdefault(tc.index, {"id": "", "name": "", "args": ""})
            slot["id"] += tc.id or ""
            if tc.function:
                slot["name"] += tc.function.name or ""
                slot["args"] += tc.function.arguments or ""
    return text, calls


def test_openclaw_conversation(proxy):
    client = openai.OpenAI(base_url=proxy.base + "/v1", api_key=PROXY_KEY, max_retries=0)
    first_user = "Conversation info (untrusted metadata):\n```json\n{\"chat\":\"dm\"}\n```\nplease call tool to list files"
    messages = [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": "[Queued message 1] hi"},
        {"role": "user", "content": [{"type": "text", "text": first_user}]},
    ]
    text, calls = openclaw_turn(client, messages)
    assert calls and calls[0]["name"] == "exec"
    # OpenClaw rewrites tool-call ids (call_abc -> callabc) when it replays history.
    rewritten = calls[0]["id"].replace("_", "")
    messages += [
        {
            "role": "assistant",
            "content": None,
            "tool_calls": [{"id": rewritten, "type": "function", "function": {"name": "exec", "arguments": calls[0]["args"]}}],
        },
        {"role": "tool", "tool_call_id": rewritten, "content": "a.txt b.txt"},
    ]
    text, _ = openclaw_turn(client, messages)
    assert text == "Tool said: a.txt b.txt"
    messages += [{"role": "assistant", "content": text}, {"role": "user", "content": "thanks"}]
    text, _ = openclaw_turn(client, messages)
    assert text == "Echo: thanks"

    # A different conversation (new first user message) is a different session.
    other = [{"role": "system", "content": SYSTEM}, {"role": "user", "content": "something else entirely"}]
    openclaw_turn(client, other)

    turns = [t for t in proxy.turns() if "Follow the workspace rules" in t["request_json"]]
    turns.sort(key=lambda t: t["id"])  # /api/turns lists newest first
    assert len(turns) == 4 and all(t["status"] == 200 for t in turns)
    sessions = [t["session_id"] for t in turns]
    assert sessions[0] == sessions[1] == sessions[2], "fingerprint is stable within a conversation"
    assert sessions[3] != sessions[0], "and differs between conversations"
    assert sessions[0].startswith("fp-")


def test_claude_code_conversation(proxy, fake):
    client = anthropic.Anthropic(base_url=proxy.base, api_key=PROXY_KEY, max_retries=0)
    session = f"cc-{proxy.upstream_api}-0001"
    fake.clear()
    kwargs = dict(
        model="claude-sonnet-4-5",
        max_tokens=2048,
        system=[
            {"type": "text", "text": "You are Claude Code."},
            {"type": "text", "text": "Project rules.", "cache_control": {"type": "ephemeral"}},
        ],
        metadata={"user_id": json.dumps({"device_id": "d1", "session_id": "meta-ignored-when-header-present"})},
        extra_headers={"X-Claude-Code-Session-Id": session, "anthropic-beta": "context-management-2025-06-27"},
        extra_body={"context_management": {"edits": []}, "output_config": {"effort": "medium"}},
        thinking={"type": "enabled", "budget_tokens": 1024},
        betas=["context-management-2025-06-27"],
    )
    messages = [
        {"role": "system", "content": "<system-reminder>todo list is empty</system-reminder>"},
        {"role": "user", "content": "hello from claude code"},
    ]
    m = client.beta.messages.create(messages=messages, **kwargs)  # POST /v1/messages?beta=true
    assert m.content[-1].text == "Echo: hello from claude code"
    messages += [{"role": "assistant", "content": m.content[-1].text}, {"role": "user", "content": "second turn"}]
    with client.beta.messages.stream(messages=messages, **kwargs) as s:
        final = s.get_final_message()
    assert final.content[-1].text == "Echo: second turn"

    turns = proxy.turns(session)
    assert len(turns) == 2 and all(t["status"] == 200 for t in turns)
    forwarded = [r["body"] for r in fake.requests()]
    if proxy.upstream_api == "anthropic":
        for body in forwarded:
            assert body["context_management"] == {"edits": []}
            assert body["output_config"] == {"effort": "medium"}
            assert body["thinking"]["type"] == "enabled"
            assert body["system"][1]["cache_control"] == {"type": "ephemeral"}
    else:
        for body in forwarded:
            assert body["messages"][0]["role"] == "system"
            assert any(m["role"] == "system" and "todo list" in str(m["content"]) for m in body["messages"])
