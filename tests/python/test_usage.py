"""Per-turn usage with the official OpenAI SDK: a streaming client that does not ask for usage
(`stream_options.include_usage`) gets no usage chunk and no `usage` field, exactly as from a
provider, while MetaClaw asks the provider for it and records the turn with its tokens. The
`proxy` fixture runs once per upstream protocol."""

import openai

from conftest import PROXY_KEY


def test_openai_stream_without_include_usage_sees_no_usage_and_the_turn_has_tokens(proxy):
    session = f"usage-unasked-{proxy.upstream_api}"
    client = openai.OpenAI(base_url=proxy.base + "/v1", api_key=PROXY_KEY, max_retries=0)
    request = dict(
        model="any",
        messages=[{"role": "user", "content": "count my tokens please"}],
        stream=True,
        extra_headers={"X-Session-Id": session},
    )

    chunks = list(client.chat.completions.create(**request))
    assert chunks, "the stream was empty"
    assert all(c.usage is None for c in chunks)
    assert all(c.choices for c in chunks), "a usage-only chunk reached the client"
    text = "".join(c.choices[0].delta.content or "" for c in chunks)
    assert text == "Echo: count my tokens please"

    with client.chat.completions.with_streaming_response.create(**request) as raw:
        lines = [line for line in raw.iter_lines() if line]
    assert lines[-1] == "data: [DONE]"
    assert not [line for line in lines if "usage" in line], lines

    proxy.admin("POST", "/api/recorder/flush")
    turns = proxy.admin("GET", f"/api/turns/usage?session={session}")["turns"]
    assert len(turns) == 2
    for turn in turns:
        assert turn["input_tokens"] > 0, turn
        assert turn["output_tokens"] > 0, turn
    # The fake provider reports no cache: OpenAI says nothing, Anthropic says zero.
    expected_read = None if proxy.upstream_api == "openai" else 0
    assert [t["cache_read_tokens"] for t in turns] == [expected_read, expected_read]
