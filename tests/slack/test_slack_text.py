"""Model text for Slack: mrkdwn conversion, sanitising, splitting, pacing."""

from __future__ import annotations

import asyncio

from bothost.plugins.slack.mrkdwn import MESSAGE_LIMIT, StreamCleaner, sanitize, split, to_mrkdwn
from bothost.plugins.slack.pacing import Pacer
from hypothesis import given
from hypothesis import strategies as st


def test_markdown_becomes_mrkdwn():
    text = to_mrkdwn("# Plan\n**bold**, *italic*, ~~gone~~ and `a<b`\n- one\n* two")
    assert text == "*Plan*\n*bold*, _italic_, ~gone~ and `a&lt;b`\n• one\n• two"


def test_code_blocks_are_kept_verbatim():
    text = to_mrkdwn("before\n```python\nif a < b and **x**:\n    pass\n```\nafter")
    assert "```\nif a &lt; b and **x**:\n    pass\n```" in text


def test_pings_and_disguised_links_are_removed():
    text = to_mrkdwn(
        "<!channel> <!here> <!everyone|everyone> <!subteam^S1|@ops> hi "
        "<https://evil.example/login|https://bank.example> and "
        "[your bank](https://evil.example/x) and <@U123> and <#C42|ops> and "
        "<https://ok.example>"
    )
    for banned in ("<!", "|https", "]("):
        assert banned not in text
    assert "https://bank.example (https://evil.example/login)" in text
    assert "your bank (<https://evil.example/x>)" in text
    assert sanitize("<!<!here>channel>") == ""  # removal cannot assemble a new ping
    assert "<@U123>" in text and "<#C42|ops>" in text and "<https://ok.example>" in text


def test_plain_angle_brackets_and_ampersands_are_escaped():
    assert to_mrkdwn("1 < 2 & 3 > 2 <script>") == "1 &lt; 2 &amp; 3 &gt; 2 &lt;script&gt;"


def test_stream_cleaner_holds_back_unfinished_markup():
    cleaner = StreamCleaner()
    deltas = ["hi <!chan", "nel> see [do", "cs](https://x.", "io) <https://e.v|", "fine> ok"]
    out = "".join(cleaner.feed(d) for d in deltas)
    out += cleaner.flush()
    assert out == "hi  see docs (https://x.io) fine (https://e.v) ok"


def test_long_text_is_split_at_breaks_and_code_fences_reopened():
    text = ("word " * 700 + "\n\n") * 3 + "```\n" + "line of code\n" * 600 + "```\nend"
    parts = split(text)
    assert len(parts) > 2 and all(len(p) <= MESSAGE_LIMIT for p in parts)
    assert all(p.count("```") % 2 == 0 for p in parts)
    assert parts[0].endswith("word")


PIECES = [*"ab <>|!&*_~`[]()\n:/.@#", "channel", "here", "https://x.y", "```", "<!"]


@given(st.lists(st.sampled_from(PIECES), max_size=120).map("".join))
def test_no_ping_survives_any_text(text):
    out = to_mrkdwn(text)
    assert "<!" not in out
    assert all(len(p) <= MESSAGE_LIMIT for p in split(out * 40))
    assert not any(f"<!{word}>" in sanitize(text) for word in ("channel", "here", "everyone"))


async def test_pacer_spaces_posts_per_channel():
    pacer = Pacer(interval=0.2)
    loop = asyncio.get_running_loop()
    start = loop.time()
    await asyncio.gather(*(pacer.wait("C1") for _ in range(3)))
    assert loop.time() - start >= 0.39
    before = loop.time()
    await pacer.wait("C2")  # another channel is not held up
    assert loop.time() - before < 0.1
