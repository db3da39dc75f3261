"""The official OpenAI and Anthropic SDKs through MetaClaw, for both upstream protocols.

The `proxy` fixture runs once per upstream protocol, so every test here covers all four
client × upstream pairs.
"""

import json

import anthropic
import openai
import pytest

from conftest import PROXY_KEY, TOOLS_ANTHROPIC, TOOLS_OPENAI, UPSTREAM_KEY



def oa(proxy, **kw):
    return openai.OpenAI(base_url=proxy.base + "/v1", api_key=PROXY_KEY, max_retries=0, **kw)


def an(proxy, **kw):
    return anthropic.Anthropic(base_url=proxy.base, api_key=PROXY_KEY, max_retries=0, **kw)


def test_openai_text(proxy):
    r = oa(proxy).chat.completions.create(
        model="any", messages=[{"role": "user", "content": "hello there"}]
    )
    assert r.choices[0].message.content == "Echo: hello there"
    assert r.choices[0].finish_reason == "stop"
    assert r.usage.completion_tokens > 0


def test_openai_stream_with_usage(proxy):
    chunks = list(
        oa(proxy).chat.completions.create(
            model="any",
            messages=[{"role": "user", "content": "stream me please"}],
            stream=True,
            stream_options={"include_usage": True},
        )
    )
    text = "".join(c.choices[0].delta.content or "" for c in chunks if c.choices)
    assert text == "Echo: stream me please"
    assert len([c for c in chunks if c.choices and c.choices[0].delta.content]) >= 2, "really streamed"
    assert chunks[-1].usage is not None and chunks[-1].usage.completion_tokens > 0
    finishes = [c.choices[0].finish_reason for c in chunks if c.choices and c.choices[0].finish_reason]
    assert finishes == ["stop"]


def test_openai_tool_round_trip(proxy):
    client = oa(proxy)
    messages = [{"role": "user", "content": "please call tool for weather"}]
    r = client.chat.completions.create(model="any", messages=messages, tools=TOOLS_OPENAI)
    call = r.choices[0].message.tool_calls[0]
    assert r.choices[0].finish_reason == "tool_calls"
    assert call.function.name == "lookup"
    assert json.loads(call.function.arguments)["query"] == "please call tool for weather"
    messages += [
        r.choices[0].message.model_dump(exclude_none=True),
        {"role": "tool", "tool_call_id": call.id, "content": "sunny, 21C"},
    ]
    r2 = client.chat.completions.create(model="any", messages=messages, tools=TOOLS_OPENAI)
    assert r2.choices[0].message.content == "Tool said: sunny, 21C"


def test_openai_tool_stream(proxy):
    stream = oa(proxy).chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "call tool streaming"}],
        tools=TOOLS_OPENAI,
        stream=True,
    )
    name, args, finish = "", "", None
    for c in stream:
        if not c.choices:
            continue
        for tc in c.choices[0].delta.tool_calls or []:
            assert tc.index == 0
            name += tc.function.name or "" if tc.function else ""
            args += tc.function.arguments or "" if tc.function else ""
        finish = c.choices[0].finish_reason or finish
    assert name == "lookup"
    assert json.loads(args) == {"query": "call tool streaming"}
    assert finish == "tool_calls"


def test_anthropic_text(proxy):
    m = an(proxy).messages.create(
        model="any", max_tokens=64, messages=[{"role": "user", "content": "hello claude"}]
    )
    assert m.content[0].type == "text"
    assert m.content[0].text == "Echo: hello claude"
    assert m.stop_reason == "end_turn"
    assert m.usage.output_tokens > 0


def test_anthropic_stream(proxy):
    with an(proxy).messages.stream(
        model="any", max_tokens=64, messages=[{"role": "user", "content": "stream it"}]
    ) as s:
        text = "".join(s.text_stream)
        final = s.get_final_message()
    assert text == "Echo: stream it"
    assert final.stop_reason == "end_turn"
    assert final.usage.output_tokens > 0


def test_anthropic_tool_round_trip(proxy):
    client = an(proxy)
    messages = [{"role": "user", "content": "call tool about trains"}]
    m = client.messages.create(model="any", max_tokens=64, messages=messages, tools=TOOLS_ANTHROPIC)
    assert m.stop_reason == "tool_use"
    use = next(b for b in m.content if b.type == "tool_use")
    assert use.name == "lookup" and use.input == {"query": "call tool about trains"}
    messages += [
        {"role": "assistant", "content": [b.model_dump(exclude_none=True) for b in m.content]},
        {"role": "user", "content": [{"type": "tool_result", "tool_use_id": use.id, "content": "on time"}]},
    ]
    m2 = client.messages.create(model="any", max_tokens=64, messages=messages, tools=TOOLS_ANTHROPIC)
    assert m2.content[0].text == "Tool said: on time"


def test_anthropic_tool_stream(proxy):
    with an(proxy).messages.stream(
        model="any",
        max_tokens=64,
        messages=[{"role": "user", "content": "call tool in a stream"}],
        tools=TOOLS_ANTHROPIC,
    ) as s:
        final = s.get_final_message()
    use = next(b for b in final.content if b.type == "tool_use")
    assert use.name == "lookup" and use.input == {"query": "call tool in a stream"}
    assert final.stop_reason == "tool_use"


def test_upstream_rate_limit_passes_through_with_retry_after(proxy):
    with pytest.raises(openai.RateLimitError) as e:
        oa(proxy).chat.completions.create(model="any", messages=[{"role": "user", "content": "[[fault:429]] hi"}])
    assert e.value.response.headers.get("retry-after") == "7"
    with pytest.raises(anthropic.RateLimitError) as e:
        an(proxy).messages.create(model="any", max_tokens=8, messages=[{"role": "user", "content": "[[fault:429]] hi"}])
    assert e.value.response.headers.get("retry-after") == "7"


def test_upstream_dying_mid_stream_is_an_error_not_a_short_reply(proxy):
    with pytest.raises(openai.APIError):
        for _ in oa(proxy).chat.completions.create(
            model="any", messages=[{"role": "user", "content": "[[fault:disconnect_mid_stream]] go"}], stream=True
        ):
            pass
    with pytest.raises(anthropic.APIError):
        with an(proxy).messages.stream(
            model="any", max_tokens=64, messages=[{"role": "user", "content": "[[fault:disconnect_mid_stream]] go"}]
        ) as s:
            for _ in s.text_stream:
                pass
    # MetaClaw itself keeps serving.
    r = oa(proxy).chat.completions.create(model="any", messages=[{"role": "user", "content": "still there?"}])
    assert r.choices[0].message.content == "Echo: still there?"


def test_stream_closed_before_its_final_event_is_an_error_and_a_failed_turn(proxy):
    # The upstream closes cleanly after a few frames, without [DONE] / message_stop: a reply
    # cut short must not reach the client, nor the record, as a complete one.
    sid = f"cut-{proxy.upstream_api}"
    with pytest.raises(openai.APIError) as e:
        for _ in oa(proxy).chat.completions.create(
            model="any",
            messages=[{"role": "user", "content": "[[fault:end_early]] tell me a long story"}],
            stream=True,
            extra_headers={"X-Session-Id": sid},
        ):
            pass
    assert "final event" in str(e.value)
    with pytest.raises(anthropic.APIError) as e:
        with an(proxy).messages.stream(
            model="any",
            max_tokens=64,
            messages=[{"role": "user", "content": "[[fault:end_early]] and another one"}],
            extra_headers={"X-Session-Id": sid},
        ) as s:
            for _ in s.text_stream:
                pass
    assert "final event" in str(e.value)
    turns = proxy.turns(sid)
    assert len(turns) == 2
    assert all(t["error"] and "final event" in t["error"] for t in turns), turns


def test_an_upstream_error_echoing_the_key_never_shows_it(proxy):
    # The upstream's 401 quotes the credential header it got; the key must not reach the
    # client (either SDK, same protocol or translated), the recorded turn, or the status.
    sid = f"echo-{proxy.upstream_api}"
    with pytest.raises(openai.AuthenticationError) as e:
        oa(proxy).chat.completions.create(
            model="any",
            messages=[{"role": "user", "content": "[[fault:401_echo]] hi"}],
            extra_headers={"X-Session-Id": sid},
        )
    assert "[redacted]" in json.dumps(e.value.body)
    with pytest.raises(anthropic.AuthenticationError) as e:
        an(proxy).messages.create(
            model="any",
            max_tokens=8,
            messages=[{"role": "user", "content": "[[fault:401_echo]] hi"}],
            extra_headers={"X-Session-Id": sid},
        )
    assert "[redacted]" in json.dumps(e.value.body)
    seen = [json.dumps(e.value.body), json.dumps(proxy.turns(sid)), json.dumps(proxy.admin("GET", "/api/status"))]
    seen.append((proxy.home / "stderr.log").read_text())
    seen += [f.read_text(errors="replace") for f in (proxy.home / "logs").glob("*") if f.is_file()]
    for text in seen:
        assert UPSTREAM_KEY not in text
    assert len(proxy.turns(sid)) == 2


def test_wrong_proxy_key_is_rejected_in_each_shape(proxy):
    with pytest.raises(openai.AuthenticationError) as e:
        openai.OpenAI(base_url=proxy.base + "/v1", api_key="wrong", max_retries=0).chat.completions.create(
            model="any", messages=[{"role": "user", "content": "hi"}]
        )
    assert e.value.body["type"] == "authentication_error"
    with pytest.raises(anthropic.AuthenticationError) as e:
        anthropic.Anthropic(base_url=proxy.base, api_key="wrong", max_retries=0).messages.create(
            model="any", max_tokens=8, messages=[{"role": "user", "content": "hi"}]
        )
    assert e.value.body["error"]["type"] == "authentication_error"


def test_upstream_gets_its_own_key_never_the_clients(proxy, fake):
    fake.clear()
    oa(proxy).chat.completions.create(model="any", messages=[{"role": "user", "content": "whose key"}])
    an(proxy).messages.create(model="any", max_tokens=8, messages=[{"role": "user", "content": "whose key"}])
    reqs = fake.requests()
    assert len(reqs) == 2
    for r in reqs:
        headers = {k.lower(): v for k, v in r["headers"]}
        presented = headers.get("authorization", "") + headers.get("x-api-key", "")
        assert UPSTREAM_KEY in presented
        assert PROXY_KEY not in json.dumps(r)
        assert r["body"]["model"] == "fake-model", "llm.model_id replaces the client's model"


def test_turns_are_recorded_with_the_reply_the_client_saw(proxy):
    client = oa(proxy)
    client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "record this one"}],
        extra_headers={"X-Session-Id": f"rec-{proxy.upstream_api}"},
    )
    list(
        client.chat.completions.create(
            model="any",
            messages=[{"role": "user", "content": "record this stream"}],
            stream=True,
            extra_headers={"X-Session-Id": f"rec-{proxy.upstream_api}"},
        )
    )
    turns = proxy.turns(f"rec-{proxy.upstream_api}")
    assert [t["turn_index"] for t in turns] == [0, 1]
    assert all(t["status"] == 200 and t["turn_type"] == "main" for t in turns)
    assert all(t["upstream_protocol"] == proxy.upstream_api for t in turns)
    replies = [json.loads(t["reply_json"]) for t in turns]
    assert replies[0]["choices"][0]["message"]["content"] == "Echo: record this one"
    assert replies[1]["choices"][0]["message"]["content"] == "Echo: record this stream"
    assert "X-Session-Id" not in turns[0]["request_json"]
    assert turns[1]["ttft_ms"] is not None and turns[1]["ttft_ms"] <= turns[1]["total_ms"]


def test_anthropic_sdk_bearer_auth_as_current_sdks_send_it(proxy):
    # Newer SDKs (and Claude Code with an auth token) send `Authorization: Bearer`, not x-api-key.
    client = anthropic.Anthropic(base_url=proxy.base, auth_token=PROXY_KEY, max_retries=0)
    m = client.messages.create(
        model="any",
        max_tokens=16,
        messages=[{"role": "user", "content": "bearer please"}],
        extra_headers={"anthropic-version": "2023-06-01"},
    )
    assert m.content[0].text == "Echo: bearer please"


def test_openai_side_turn_and_session_done(proxy):
    client = oa(proxy)
    sid = f"done-{proxy.upstream_api}"
    client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "side work"}],
        extra_headers={"X-Session-Id": sid, "X-Turn-Type": "side"},
    )
    client.chat.completions.create(
        model="any",
        messages=[{"role": "user", "content": "last one"}],
        extra_body={"session_id": sid, "session_done": True},
    )
    turns = proxy.turns(sid)
    assert [t["turn_type"] for t in turns] == ["side", "main"]
    assert all("session_done" not in t["request_json"] for t in turns)


def test_admin_api_needs_the_admin_token(proxy):
    import urllib.error
    import urllib.request

    for path in ["/api/status", "/api/config", "/api/turns"]:
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(proxy.base + path)
        assert e.value.code == 401
        req = urllib.request.Request(proxy.base + path, headers={"Authorization": f"Bearer {PROXY_KEY}"})
        with pytest.raises(urllib.error.HTTPError) as e:
            urllib.request.urlopen(req)
        assert e.value.code == 401, "the agent key is not the admin token"
    status = proxy.admin("GET", "/api/status")
    assert status["mode"] == "skills_only" and status["upstreams"][0]["protocol"] == proxy.upstream_api
    config = proxy.admin("GET", "/api/config")
    assert config["config"]["llm"]["model_id"] == "fake-model"
    assert UPSTREAM_KEY not in json.dumps(config) and PROXY_KEY not in json.dumps(config), "no secrets"
