"""Byte layouts as tables of bit fields, and the packing and unpacking derived from them.

Contract: a :class:`ByteLayout` is a fixed-size byte format given as a table of
:class:`Field` s, most significant first: a field's ``offset`` counts bits from bit 7 of
byte 0, so a field of width ``w`` at ``offset`` spans the bits ``offset .. offset+w-1`` of
the big-endian bit string. The tables themselves are in :mod:`dpfc.encoding.layouts`; every
encoder and decoder of the in-packet formats (and the P4 back end's generated decoder) takes
positions and widths from them, so a layout is stated once.

* :meth:`ByteLayout.pack` writes the bytes of given field values (reserved fields 0; a value
  that does not fit its field is a :class:`ValueError`), :meth:`ByteLayout.unpack` reads every
  field of some bytes, :meth:`ByteLayout.replace` rewrites some fields in place;
* :meth:`ByteLayout.read` reads the layout from a :class:`~dpfc.encoding.errors.ByteReader` one
  *unit* at a time (a unit: the bytes of a field, or of the fields that share a byte), naming
  the unit's ``what`` when the bytes run out, exactly as reading each unit with the reader's
  own ``take`` would;
* a :class:`Field` knows its bytes (``byte``, ``end``) and, within them, its bits (``high``,
  ``low``: bit numbers counted from the least significant bit of its last byte).

Not responsible for what the values mean (the codecs in :mod:`dpfc.encoding.code` and
:mod:`dpfc.encoding.header`) nor for variable-length parts (counts of repeated layouts).
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import cached_property

from dpfc.encoding.errors import ByteReader

RESERVED = "reserved"  # the name of a field that must be zero


@dataclass(frozen=True)
class Field:
    """One field of a layout: ``width`` bits from bit ``offset`` (0: bit 7 of byte 0)."""

    name: str
    offset: int
    width: int
    what: str  # what a reader names when the field's bytes are missing

    @property
    def reserved(self) -> bool:
        return self.name == RESERVED

    @property
    def byte(self) -> int:
        """The first byte holding the field."""
        return self.offset // 8

    @property
    def end(self) -> int:
        """The byte after the last byte holding the field."""
        return (self.offset + self.width + 7) // 8

    @property
    def nbytes(self) -> int:
        return self.end - self.byte

    @property
    def low(self) -> int:
        """The field's least significant bit, counted from bit 0 of its last byte."""
        return 8 * self.end - self.offset - self.width

    @property
    def high(self) -> int:
        """The field's most significant bit, counted like :attr:`low`."""
        return self.low + self.width - 1

    @property
    def mask(self) -> int:
        """The largest value of the field."""
        return (1 << self.width) - 1

    @property
    def whole_bytes(self) -> bool:
        """Whether the field is made of whole bytes (a byte-aligned u8, u16, u32...)."""
        return self.offset % 8 == 0 and self.width % 8 == 0

    def read(self, data: bytes, at: int = 0) -> int:
        """The field's value in a layout that starts at byte ``at`` of ``data``."""
        start = at + self.byte
        if self.nbytes == 1:
            return (data[start] >> self.low) & self.mask
        return (int.from_bytes(data[start : at + self.end], "big") >> self.low) & self.mask


@dataclass(frozen=True)
class Unit:
    """Bytes a reader takes in one step: a field's bytes or those of fields sharing bytes."""

    byte: int
    nbytes: int
    what: str
    fields: tuple[Field, ...]


@dataclass(frozen=True)
class ByteLayout:
    """A byte format: its fields, most significant first, covering whole bytes."""

    name: str
    fields: tuple[Field, ...]

    @staticmethod
    def of(name: str, *rows: tuple[str, int] | tuple[str, int, str]) -> ByteLayout:
        """The layout of ``rows`` (``(name, width)`` or ``(name, width, what)``) in order; a
        row's ``what`` (for truncation errors) defaults to the layout's name."""
        fields = []
        offset = 0
        for row in rows:
            what = row[2] if len(row) == 3 else name
            fields.append(Field(row[0], offset, row[1], what))
            offset += row[1]
        assert offset % 8 == 0, f"{name}: {offset} bits are not whole bytes"
        return ByteLayout(name, tuple(fields))

    @cached_property
    def size(self) -> int:
        """Bytes of the layout."""
        return self.fields[-1].end if self.fields else 0

    @cached_property
    def _by_name(self) -> dict[str, Field]:
        return {f.name: f for f in self.fields}

    @cached_property
    def names(self) -> tuple[str, ...]:
        return tuple(f.name for f in self.fields)

    def field(self, name: str) -> Field:
        return self._by_name[name]

    def shift(self, name: str) -> int:
        """Bits from the field's least significant bit to the end of the layout."""
        f = self._by_name[name]
        return 8 * self.size - f.offset - f.width

    def placed(self, name: str, value: int) -> int:
        """``value`` in field ``name`` of the layout read as one big-endian integer."""
        return value << self.shift(name)

    def pack_int(self, **values: int) -> int:
        """The layout, as one big-endian integer, with the given values (every field that is
        not reserved must be given; reserved fields are 0)."""
        word = 0
        given = 0
        for f in self.fields:
            if f.reserved:
                continue
            value = values[f.name]
            if not 0 <= value <= f.mask:
                raise ValueError(f"{self.name}: {f.name} = {value} does not fit in {f.width} bits")
            word |= value << (8 * self.size - f.offset - f.width)
            given += 1
        if given != len(values):
            settable = {f.name for f in self.fields if not f.reserved}
            unknown = sorted(set(values) - settable)
            raise KeyError(f"{self.name} has no field to set named {', '.join(unknown)}")
        return word

    def pack(self, **values: int) -> bytes:
        """The bytes of the layout with the given values (see :meth:`pack_int`)."""
        return self.pack_int(**values).to_bytes(self.size, "big")

    def unpack(self, data: bytes, at: int = 0) -> dict[str, int]:
        """Every field (reserved ones too) of the layout at byte ``at`` of ``data``."""
        word = int.from_bytes(data[at : at + self.size], "big")
        return self.unpack_int(word)

    def unpack_int(self, word: int) -> dict[str, int]:
        """Every field of the layout held in the big-endian integer ``word``."""
        bits = 8 * self.size
        return {f.name: (word >> (bits - f.offset - f.width)) & f.mask for f in self.fields}

    def replace(self, data: bytes, at: int = 0, **values: int) -> bytes:
        """``data`` with the given fields of the layout at byte ``at`` set to new values."""
        word = int.from_bytes(data[at : at + self.size], "big")
        for name, value in values.items():
            f = self._by_name[name]
            if not 0 <= value <= f.mask:
                raise ValueError(f"{self.name}: {f.name} = {value} does not fit in {f.width} bits")
            shift = self.shift(name)
            word = (word & ~(f.mask << shift)) | (value << shift)
        return data[:at] + word.to_bytes(self.size, "big") + data[at + self.size :]

    @cached_property
    def units(self) -> tuple[Unit, ...]:
        """The layout's read steps, in order (a unit ends where a field ends on a byte)."""
        out: list[Unit] = []
        group: list[Field] = []
        for f in self.fields:
            group.append(f)
            if (f.offset + f.width) % 8 == 0:
                first = group[0]
                out.append(Unit(first.byte, f.end - first.byte, first.what, tuple(group)))
                group = []
        return tuple(out)

    def read(
        self, reader: ByteReader, start: str | None = None, stop: str | None = None
    ) -> dict[str, int]:
        """Read the units of the fields from ``start`` up to (not including) ``stop`` (default:
        the whole layout) and return those fields' values. A decoder that checks the first
        bytes before it reads on (its errors come first) reads the layout in two parts."""
        first = self.names.index(start) if start is not None else 0
        last = self.names.index(stop) if stop is not None else len(self.fields)
        out: dict[str, int] = {}
        for unit in self.units:
            index = self.fields.index(unit.fields[0])
            if not first <= index < last:
                continue
            assert index + len(unit.fields) <= last, f"{self.name}: {stop} splits a unit"
            chunk = reader.take(unit.nbytes, unit.what)
            for f in unit.fields:
                out[f.name] = f.read(chunk, -unit.byte)
        return out
