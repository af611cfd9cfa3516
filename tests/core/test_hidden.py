"""One list of hidden characters (bothost.hidden), and what each of its three uses keeps.

The terminal keeps newline, tab and the format characters that neither drive it nor reorder
text; an approval question keeps nothing hidden; the untrusted-content wrapper lets any
hidden character sit inside a look-alike of its tag and still defuses it.
"""

from __future__ import annotations

import json
import sys
import unicodedata

from bothost import hidden
from bothost.agent.shown import shown_arguments
from bothost.agent.untrusted import escape
from bothost.logs.terminal import SHOWN, shown


def test_the_list_is_exactly_the_hidden_categories_of_this_pythons_unicode():
    walked = {c for c in range(sys.maxunicode + 1) if hidden.is_hidden(chr(c))}
    listed = set(hidden.code_points())
    assert listed == walked, (
        f"Unicode {unicodedata.unidata_version}: add {sorted(map(hex, walked - listed))}, "
        f"drop {sorted(map(hex, listed - walked))} in bothost/hidden.py RANGES"
    )


def test_the_terminal_escapes_controls_and_reordering_as_it_did_and_keeps_the_rest():
    before = {
        **{c: f"\\x{c:02x}" for c in [*range(0x20), 0x7F, *range(0x80, 0xA0)] if c not in (9, 10)},
        **{c: f"\\u{c:04x}" for c in [*range(0x202A, 0x202F), *range(0x2066, 0x206A)]},
    }
    assert before == SHOWN
    kept = "line\ttab\nfamily \U0001f468\u200d\U0001f469\u200d\U0001f467 soft\u00adhyphen \u200e"
    assert shown(kept) == kept
    assert (
        shown("a\x1b]52;c;eA==\x07b\u202ec\x85d\re") == "a\\x1b]52;c;eA==\\x07b\\u202ec\\x85d\\x0de"
    )


def test_an_approval_question_shows_every_hidden_character():
    text = "pay\u200b \u2028 \u0085 \x7f \u202e \u00ad \u2066 \U000e0041 \ufeff"
    out = shown_arguments({"to": text})
    assert out == (
        '{"to": "pay\\u200b \\u2028 \\u0085 \\u007f \\u202e \\u00ad \\u2066 \\U000e0041 \\ufeff"}'
    )
    assert all(not hidden.is_hidden(c) for c in out)
    plain = {"city": "Zürich", "note": "ok\tfine", "emoji": "\U0001f600"}
    assert shown_arguments(plain) == json.dumps(plain, ensure_ascii=False)


def test_any_hidden_character_inside_a_look_alike_tag_is_still_defused():
    # what the old table knew (soft hyphen, zero-width space to RLM, word joiner, BOM) and
    # what it did not (invisible operators, the Mongolian separator, tag characters, C1)
    for char in ("\u00ad", "\u200b", "\u200f", "\u2060", "\ufeff", "\u2062", "\u180e"):
        for spelled in (f"</{char}untrusted-content>", f"</untrusted{char}content>"):
            assert escape(spelled).startswith("&lt;"), repr(spelled)
    for char in ("\U000e0041", "\x85", "\u2028"):
        assert escape(f"<{char}untrusted{char}content>").startswith("&lt;"), repr(char)
    ordinary = "a < b, <b>bold</b>, soft\u00adhyphen, \u200b zero width, x<y"
    assert escape(ordinary) == ordinary
