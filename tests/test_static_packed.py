"""`Packed` answers exactly like the dict of sorted ids it packs (the cross-file tables)."""

from __future__ import annotations

from hypothesis import given, settings
from hypothesis import strategies as st

from boundary_audit.static.crossfile import Corpus
from boundary_audit.static.packed import Packed

KEYS = st.binary(max_size=5).map(lambda b: bytes(b"ab\x00\xff"[x % 4] for x in b))


@settings(max_examples=300, deadline=None)
@given(
    table=st.dictionaries(KEYS, st.lists(st.integers(0, 2**32 - 1), unique=True).map(sorted)),
    probes=st.lists(KEYS, min_size=1, max_size=8),
)
def test_find_and_prefixed_equal_a_scan_of_the_dict(
    table: dict[bytes, list[int]], probes: list[bytes]
) -> None:
    packed = Packed(table)
    assert len(packed) == len(table)
    assert packed.as_dict() == table
    assert [packed.key(j) for j in range(len(packed))] == sorted(table)
    for probe in probes:
        assert (probe in packed) == (probe in table)
        assert list(packed.get(probe)) == table.get(probe, [])
        run = packed.prefixed(probe)
        assert [packed.key(j) for j in run] == sorted(k for k in table if k.startswith(probe))


def test_an_empty_table_and_the_empty_key() -> None:
    empty = Packed({})
    assert len(empty) == 0
    assert empty.find(b"") is None and list(empty.prefixed(b"")) == []
    one = Packed({b"": [3], b"a": [1, 2]})
    assert one.find(b"") == 0 and list(one.get(b"a")) == [1, 2]
    assert list(one.prefixed(b"")) == [0, 1] and list(one.prefixed(b"a")) == [1]
    assert Packed.of_keys([b"y", b"x"]).as_dict() == {b"x": [], b"y": []}
    assert Packed({b"x": [1]}) == Packed({b"x": [1]}) != Packed({b"x": [2]})


def test_a_base_declared_without_bases_is_an_ancestor_and_an_undeclared_one_is_not() -> None:
    # `Root` is declared with no bases (kept only in the packed set of declared names),
    # `Missing` nowhere in the corpus
    files = {
        "a.py": ("python", b"class Root:\n    pass\n"),
        "b.py": ("python", b"class Mid(Root, Missing):\n    pass\n"),
        "c.py": ("python", b"class Leaf(Mid):\n    pass\n"),
    }
    corpus = Corpus(files)
    classes = corpus.class_bases("py")
    assert classes.bases == {"Mid": ("Missing", "Root"), "Leaf": ("Mid",)}
    assert classes.declares("Root") and not classes.declares("Missing")
    assert corpus.ancestors("py", "Leaf") == ["Mid", "Root"]
    assert corpus.derives("py", "Leaf", "Root") and not corpus.derives("py", "Root", "Leaf")
