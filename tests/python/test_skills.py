"""Skills through the official SDKs: the built-in skill that fits reaches the upstream inside
MetaClaw's block, streamed or not, and a resent message gets the same block back, so the
request prefix the provider caches does not change. Runs for both upstream protocols."""

import json

import anthropic
import openai

from conftest import PROXY_KEY

QUESTION = (
    "My pytest suite fails with an ImportError after I renamed a module. "
    "How do I debug this failing test?"
)
FOLLOW_UP = "Thanks. Now write a haiku about autumn."


def forwarded_blocks(fake):
    """The text of each forwarded request's messages, in order."""
    return [json.dumps(r["body"].get("messages", []), ensure_ascii=False) for r in fake.requests()]


def first_block(messages_json):
    start = messages_json.index("<metaclaw-context>")
    end = messages_json.index("</metaclaw-context>") + len("</metaclaw-context>")
    return messages_json[start:end]


def test_openai_sdk_gets_a_testing_skill_and_keeps_it_on_resend(proxy, fake):
    client = openai.OpenAI(base_url=proxy.base + "/v1", api_key=PROXY_KEY, max_retries=0)
    session = {"X-Session-Id": f"py-skills-oa-{proxy.upstream_api}"}
    fake.clear()
    messages = [{"role": "user", "content": QUESTION}]
    chunks = list(
        client.chat.completions.create(
            model="any", messages=messages, stream=True, extra_headers=session
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text.startswith("Echo: " + QUESTION)

    # The fake echoes the user's text, block included; a real model would not, so the
    # conversation goes on with a plain answer.
    messages += [
        {"role": "assistant", "content": "Run the failing test alone first."},
        {"role": "user", "content": FOLLOW_UP},
    ]
    r = client.chat.completions.create(model="any", messages=messages, extra_headers=session)
    assert r.choices[0].finish_reason == "stop"

    first, second = forwarded_blocks(fake)
    block = first_block(first)
    assert "## Skills" in block
    assert "### writing-tests-first" in block or "### flaky-test-triage" in block, block
    assert first_block(second) == block, "the resent question carries the same block"
    assert second.count("<metaclaw-context>") == 1, "nothing relevant for a haiku"

    turns = proxy.turns(session["X-Session-Id"])
    assert len(turns[0]["injected_skills"]) >= 1
    assert turns[0]["skill_generation"] >= 1


def test_anthropic_sdk_gets_the_block_on_its_user_message(proxy, fake):
    client = anthropic.Anthropic(base_url=proxy.base, api_key=PROXY_KEY, max_retries=0)
    fake.clear()
    with client.messages.stream(
        model="any",
        max_tokens=200,
        system="You are a careful engineer.",
        messages=[{"role": "user", "content": QUESTION}],
        extra_headers={"X-Session-Id": f"py-skills-an-{proxy.upstream_api}"},
    ) as stream:
        text = "".join(stream.text_stream)
    assert text.startswith("Echo: " + QUESTION)
    (sent,) = fake.requests()
    messages = json.dumps(sent["body"]["messages"], ensure_ascii=False)
    assert "### writing-tests-first" in first_block(messages) or "### flaky-test-triage" in messages
    system = json.dumps(sent["body"].get("system") or sent["body"]["messages"][0])
    assert "metaclaw-context" not in system, "user placement leaves the system prompt alone"
