"""Properties of the byte-difference reasons: the offset is right and the escaping is injective."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from boundary_audit.tasks.diff import describe_difference, escape, first_difference


@given(st.binary(max_size=40), st.binary(max_size=40))
def test_first_difference_is_the_first_differing_offset(a: bytes, b: bytes) -> None:
    at = first_difference(a, b)
    if a == b:
        assert at is None and describe_difference(a, b) == ""
        return
    assert at is not None and a[:at] == b[:at]
    assert at == min(len(a), len(b)) or a[at] != b[at]
    assert describe_difference(a, b).startswith(f"first difference at byte {at}")


@given(st.binary(max_size=24), st.binary(max_size=24))
def test_escape_is_injective_and_one_line(a: bytes, b: bytes) -> None:
    assert "\n" not in escape(a) and "\r" not in escape(a)
    assert (escape(a) == escape(b)) == (a == b)
