"""Sorted byte-string tables in flat arrays: the cross-file pass's corpus-wide indexes.

A scan builds its cross-file tables (`crossfile.Corpus.prepare`) before it forks its
workers, and every worker holds them resident for its whole life. As Python dicts of bytes
keys (a 33-byte header per key, a dict slot, an int or a list per value) they were about
20 MiB on an 84 MB corpus, more than any table they index. Packed, a key costs its own bytes
and two array slots, and a value one slot.
"""

from __future__ import annotations

import bisect
from array import array
from collections.abc import Iterable, Mapping, Sequence
from itertools import accumulate, chain


def _offsets(lengths: Iterable[int]) -> array[int]:
    """0 and the running sums of `lengths`, in 4-byte slots where they fit."""
    out = list(accumulate(lengths, initial=0))
    return array("I" if out[-1] < 1 << 32 else "Q", out)


class Packed:
    """Distinct byte strings in sorted order, each with a sorted run of ints (its *ids*).

    Key `j` is `blob[starts[j]:starts[j + 1]]`; its ids are `ids[first[j]:first[j + 1]]`.
    Lookups bisect the keys: `find` an exact key, `prefixed` the keys a prefix begins.
    """

    __slots__ = ("_blob", "_first", "_ids", "_starts")

    def __init__(self, table: Mapping[bytes, Sequence[int]]) -> None:
        keys = sorted(table)
        values = [table[k] for k in keys]
        self._blob = b"".join(keys)
        self._starts = _offsets(map(len, keys))
        self._first = _offsets(map(len, values))
        self._ids = array("I", chain.from_iterable(values))

    @classmethod
    def of_keys(cls, keys: Iterable[bytes]) -> Packed:
        """A table of keys alone (no ids): a compact set."""
        return cls(dict.fromkeys(keys, ()))

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Packed):
            return NotImplemented
        return all(getattr(self, a) == getattr(other, a) for a in self.__slots__)

    __hash__ = None  # type: ignore[assignment]

    def __len__(self) -> int:
        return len(self._starts) - 1

    def key(self, j: int) -> bytes:
        return self._blob[self._starts[j] : self._starts[j + 1]]

    def ids(self, j: int) -> Sequence[int]:
        return self._ids[self._first[j] : self._first[j + 1]]

    def find(self, key: bytes) -> int | None:
        """The index of `key`, or None."""
        j = bisect.bisect_left(range(len(self)), key, key=self.key)
        return j if j < len(self) and self.key(j) == key else None

    def __contains__(self, key: object) -> bool:
        return isinstance(key, bytes) and self.find(key) is not None

    def get(self, key: bytes) -> Sequence[int]:
        """The ids of `key`, empty if it is absent."""
        j = self.find(key)
        return () if j is None else self.ids(j)

    def prefixed(self, prefix: bytes) -> range:
        """The indexes of the keys that begin with `prefix` (contiguous, being sorted).

        Cutting every key to `len(prefix)` bytes keeps them in order, so the run ends where
        the cut keys pass `prefix`."""
        keys = range(len(self))
        lo = bisect.bisect_left(keys, prefix, key=self.key)
        n = len(prefix)
        hi = bisect.bisect_right(keys, prefix, lo, key=lambda j: self.key(j)[:n])
        return range(lo, hi)

    def as_dict(self) -> dict[bytes, list[int]]:
        """Every key with its ids (for tests and debugging: this is the unpacked size)."""
        return {self.key(j): list(self.ids(j)) for j in range(len(self))}
