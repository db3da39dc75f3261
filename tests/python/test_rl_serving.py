"""The trained model (mode rl) through the official OpenAI and Anthropic SDKs.

A real `metaclaw` runs in mode rl against the `fake-tinker` backend with the toy tokenizer
installed; the backend's next completion is scripted token by token. The reply carries
thinking, text and a Qwen-style `<tool_call>`, which MetaClaw parses into the client's own
shapes: `reasoning_content` and `tool_calls` for OpenAI clients, `thinking`, `text` and
`tool_use` blocks for Anthropic clients, streamed or not.
"""

import json
import os
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import anthropic
import openai
import pytest

from conftest import (
    PROXY_KEY,
    ROOT,
    TOOLS_ANTHROPIC,
    TOOLS_OPENAI,
    Fake,
    MetaClaw,
)

FAKE_TINKER = os.environ.get("FAKE_TINKER_BIN", str(ROOT / "target/debug/fake-tinker"))
TOY_MODEL = os.environ.get("TOY_MODEL_BIN", str(ROOT / "target/debug/toy-model"))
TINKER_KEY = "tml-py-fake-key-0123456789"
MODEL = "Toy/toy-model"

REASONING = "The user wants the weather in Paris."
TEXT = "Let me check."
ARGS = {"query": "Paris weather"}
SCRIPT = (
    f"<think>\n{REASONING}\n</think>\n\n{TEXT}\n"
    f'<tool_call>\n{{"name": "lookup", "arguments": {json.dumps(ARGS)}}}\n</tool_call><|im_end|>'
)

QUESTION = [{"role": "user", "content": "What's the weather in Paris?"}]


def toy(*args):
    out = subprocess.run([TOY_MODEL, *args], check=True, capture_output=True, text=True)
    return json.loads(out.stdout)


def post_json(url, body):
    req = urllib.request.Request(
        url, data=json.dumps(body).encode(), method="POST",
        headers={"Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req) as r:
        return json.load(r)


class FakeTinker:
    def __init__(self, vocab_size: int, eos: int):
        self.proc = subprocess.Popen(
            [FAKE_TINKER, "--port", "0", "--api-key", TINKER_KEY,
             "--vocab-size", str(vocab_size), "--eos-token", str(eos)],
            stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True,
        )
        line = self.proc.stdout.readline().strip()
        assert line.startswith("PORT="), f"fake tinker said {line!r}"
        self.base = f"http://127.0.0.1:{int(line.split('=', 1)[1])}"

    def script(self, tokens):
        post_json(self.base + "/_fake/completions", {"tokens": tokens})

    def requests(self, path):
        with urllib.request.urlopen(self.base + "/_fake/requests") as r:
            return [q for q in json.load(r) if q["path"] == path]

    def stop(self):
        self.proc.kill()
        self.proc.wait()


class RlMetaClaw(MetaClaw):
    """`metaclaw start` in mode rl, in a home where the toy tokenizer is installed."""

    def __init__(self, home: Path, fake: Fake, tinker: FakeTinker):
        # No judge and a batch never full: serving only, no training step.
        super().__init__(
            fake,
            "openai",
            extra_config=(
                "mode: rl\nskills:\n  enabled: false\nmemory:\n  enabled: false\n"
                f"rl:\n  backend: tinker\n  base_url: {tinker.base}\n  model: {MODEL}\n"
                "  batch_size: 1000\n  prm_url: ''\n"
            ),
            home=home,
            extra_env=dict(METACLAW_RL_API_KEY=TINKER_KEY, HF_ENDPOINT=tinker.base + "/hf"),
        )
        deadline = time.monotonic() + 30
        while self.learning()["state"] != "ready":  # the backend connects in the background
            assert self.proc.poll() is None, (self.home / "stderr.log").read_text()
            assert time.monotonic() < deadline, (self.home / "stderr.log").read_text()
            time.sleep(0.05)

    def learning(self):
        return self.admin("GET", "/api/learning")


@pytest.fixture(scope="module")
def ids():
    return toy("--encode", SCRIPT)


@pytest.fixture(scope="module")
def rl():
    home = Path(tempfile.mkdtemp(prefix="metaclaw-rl-py-"))
    info = toy("--dir", str(home / "models" / MODEL))
    fake = Fake()
    tinker = FakeTinker(info["vocab_size"], info["im_end"])
    m = RlMetaClaw(home, fake, tinker)
    m.fake, m.tinker = fake, tinker
    yield m
    m.stop()
    tinker.stop()
    fake.stop()


@pytest.fixture
def served(rl, ids):
    """Scripts the next completion; after the test, checks the trained model answered."""
    before = rl.learning()["served"]
    samples = len(rl.tinker.requests("/api/v1/asample"))
    rl.tinker.script(ids)
    yield rl
    after = rl.learning()["served"]
    assert after["sampled"] == before["sampled"] + 1, after
    assert after["fallback"] == before["fallback"], after
    assert len(rl.tinker.requests("/api/v1/asample")) == samples + 1
    assert rl.fake.requests() == [], "nothing went to the upstream LLM"


def oa(rl):
    return openai.OpenAI(base_url=rl.base + "/v1", api_key=PROXY_KEY, max_retries=0)


def an(rl):
    return anthropic.Anthropic(base_url=rl.base, api_key=PROXY_KEY, max_retries=0)


def test_openai_non_streaming(served):
    r = oa(served).chat.completions.create(
        model="toy", messages=QUESTION, tools=TOOLS_OPENAI,
        extra_headers={"X-Session-Id": "py-oa-1"},
    )
    choice = r.choices[0]
    assert choice.finish_reason == "tool_calls"
    assert choice.message.content == TEXT
    assert choice.message.model_extra["reasoning_content"] == REASONING
    assert len(choice.message.tool_calls) == 1
    call = choice.message.tool_calls[0]
    assert call.type == "function" and call.id
    assert call.function.name == "lookup"
    assert json.loads(call.function.arguments) == ARGS
    assert r.usage.completion_tokens == len(toy("--encode", SCRIPT))
    turns = served.turns("py-oa-1")
    assert [t["upstream"] for t in turns] == ["trained-model"]


def test_openai_streaming(served):
    chunks = list(
        oa(served).chat.completions.create(
            model="toy", messages=QUESTION, tools=TOOLS_OPENAI, stream=True,
            extra_headers={"X-Session-Id": "py-oa-2"},
        )
    )
    deltas = [c.choices[0].delta for c in chunks if c.choices]
    content = "".join(d.content or "" for d in deltas)
    reasoning = "".join((d.model_extra or {}).get("reasoning_content") or "" for d in deltas)
    calls = [tc for d in deltas for tc in (d.tool_calls or [])]
    assert content == TEXT
    assert reasoning == REASONING
    assert len(calls) == 1 and calls[0].index == 0 and calls[0].id
    assert calls[0].function.name == "lookup"
    assert json.loads(calls[0].function.arguments) == ARGS
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["tool_calls"]
    assert [t["upstream"] for t in served.turns("py-oa-2")] == ["trained-model"]


def check_anthropic_message(m):
    assert m.stop_reason == "tool_use"
    assert [b.type for b in m.content] == ["thinking", "text", "tool_use"]
    thinking, text, tool = m.content
    assert thinking.thinking == REASONING
    assert text.text == TEXT
    assert tool.name == "lookup" and tool.id
    assert tool.input == ARGS


def test_anthropic_messages_create(served):
    m = an(served).messages.create(
        model="toy", max_tokens=256, messages=QUESTION, tools=TOOLS_ANTHROPIC,
        extra_headers={"X-Session-Id": "py-an-1"},
    )
    check_anthropic_message(m)
    assert [t["upstream"] for t in served.turns("py-an-1")] == ["trained-model"]


def test_anthropic_messages_stream(served):
    with an(served).messages.stream(
        model="toy", max_tokens=256, messages=QUESTION, tools=TOOLS_ANTHROPIC,
        extra_headers={"X-Session-Id": "py-an-2"},
    ) as stream:
        events = [e.type for e in stream]
        final = stream.get_final_message()
    assert "content_block_delta" in events and events[-1] == "message_stop"
    check_anthropic_message(final)
    assert [t["upstream"] for t in served.turns("py-an-2")] == ["trained-model"]
