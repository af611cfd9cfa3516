"""Tool results as people read them (:func:`bothost.agent.tools.readable`)."""

from __future__ import annotations

import json

from bothost.agent.tools import readable


def test_data_reads_as_indented_lines():
    value = {
        "city": "Bern",
        "now": {"temp": 21.5, "dry": True, "wind": None},
        "days": [{"day": "Mon", "high": 23}, {"day": "Tue", "high": 19}],
        "tags": ["warm", "clear"],
        "empty": {},
    }
    assert readable(json.dumps(value, indent=1)) == "\n".join(
        [
            "city: Bern",
            "now:",
            "  temp: 21.5",
            "  dry: yes",
            "  wind: (none)",
            "days:",
            "  - day: Mon",
            "    high: 23",
            "  - day: Tue",
            "    high: 19",
            "tags: warm, clear",
            "empty: (none)",
        ]
    )


def test_text_and_what_is_not_json_stay_as_they_are():
    for text in ("wiped sdc", "{not json", '"a string"', "[1, 2" + "]" * 2, "[" * 200 + "]" * 200):
        assert readable(text) == text
    assert readable("[]") == "(none)" and readable('["a", "b"]') == "- a\n- b"
