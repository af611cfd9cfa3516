"""The estimate of a call the provider reported no usage for: the whole request's figure,
counted from what each session's request added since its last (bothost.usage.estimate)."""

from __future__ import annotations

import json

from hypothesis import given, settings
from hypothesis import strategies as st

from bothost.config import UsageConfig
from bothost.llm.base import ChatRequest, ChatResponse, ToolCallRequest
from bothost.usage import estimate as estimate_module
from bothost.usage.attribution import Attribution, attributed
from bothost.usage.estimate import Estimator, estimate
from bothost.usage.meter import Metered

TEXT = st.text(max_size=40)  # non-ASCII, quotes and control characters included
VALUE = st.one_of(TEXT, st.booleans(), st.none(), st.integers(-5, 5))
MESSAGE = st.fixed_dictionaries(
    {"role": st.sampled_from(["user", "assistant", "tool"]), "content": TEXT},
    optional={
        "tool_calls": st.lists(
            st.fixed_dictionaries(
                {"id": TEXT, "name": TEXT, "arguments": st.dictionaries(TEXT, VALUE)}
            ),
            max_size=2,
        ),
        "tool_call_id": TEXT,
        "is_error": st.just(True),
        "untrusted": st.just(True),
    },
)
# What happens to a session's messages between two calls: some added (a round), the oldest
# ones dropped (a summary), one replaced (another conversation's call in the same session)
STEP = st.one_of(
    st.tuples(st.just("add"), st.lists(MESSAGE, max_size=3)),
    st.tuples(st.just("cut"), st.integers(1, 4)),
    st.tuples(st.just("replace"), MESSAGE),
)
TOOLS = st.lists(st.fixed_dictionaries({"name": TEXT, "description": TEXT}), max_size=3)


def copies(messages):
    """As the turn builds each round's request: fresh dicts over the same values."""
    return [dict(m) for m in messages]


@settings(max_examples=80, deadline=None)
@given(
    start=st.lists(MESSAGE, max_size=6),
    steps=st.lists(STEP, max_size=6),
    system=TEXT,
    tools=TOOLS,
    reply=TEXT,
)
def test_the_figure_equals_the_whole_requests_over_a_conversation(
    start, steps, system, tools, reply
):
    estimator = Estimator()
    messages = list(start)
    response = ChatResponse(text=reply, tool_calls=[ToolCallRequest("c1", "t", {"a": reply})])
    for step in [("add", []), *steps]:
        kind, what = step
        if kind == "add":
            messages += what
        elif kind == "cut":
            messages = messages[what:]
        elif messages:
            messages[-1] = what
        request = ChatRequest(system=system, messages=copies(messages), tools=tools)
        assert estimator.estimate(request, response, "s1") == estimate(request, response)
        assert estimator.estimate(request, response, None) == estimate(request, response)


def test_sessions_beyond_those_kept_are_counted_whole_and_alike():
    estimator = Estimator(kept=2)
    requests = {
        s: ChatRequest(system="s", messages=[{"role": "user", "content": s * n} for n in range(5)])
        for s in "abcd"
    }
    for _ in range(2):
        for session, request in requests.items():
            expected = estimate(request, ChatResponse(text="ok"))
            assert estimator.estimate(request, ChatResponse(text="ok"), session) == expected
    assert list(estimator.seen) == ["c", "d"]


class Silent:
    """A provider that reports no usage (as some OpenAI-compatible servers do)."""

    model = "m"

    async def complete(self, request):
        return ChatResponse(text="ok")


class Recording:
    def __init__(self, rows):
        self.rows = rows

    def execute(self, sql, row):
        self.rows.append(row)


class Posting:
    def __init__(self):
        self.jobs = []

    def post(self, job, what):
        self.jobs.append(job)


async def test_a_long_conversations_next_call_encodes_only_its_new_messages(monkeypatch):
    encoded = []
    encode = estimate_module.ENCODE
    monkeypatch.setattr(estimate_module, "ENCODE", lambda v: encoded.append(v) or encode(v))
    store = Posting()
    metered = Metered(Silent(), store, config=UsageConfig())
    history = [{"role": "user" if i % 2 else "assistant", "content": f"m{i}"} for i in range(1000)]
    with attributed(Attribution("turn", "t1", "s1", "web:u")):
        await metered.complete(ChatRequest(system="s", messages=copies(history)))
        encoded.clear()
        added = [{"role": "user", "content": "one more"}]
        request = ChatRequest(system="s", messages=copies(history + added))
        await metered.complete(request)
    assert [v for v in encoded if isinstance(v, dict)] == added
    rows = []
    store.jobs[-1](Recording(rows))
    whole = len(json.dumps(["s", request.messages, []], ensure_ascii=False)) // 4 + 1
    assert rows[0][5:7] == (whole, 1)  # input_tokens: the whole request's; output: "ok"
