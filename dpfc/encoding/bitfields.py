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

from dataclasses import dataclass, field
from functools import cached_property

from dpfc.encoding.errors import ByteReader

RESERVED = "reserved"  # the name of a field that must be zero


@dataclass(frozen=True)
class Field:
    """One field of a layout: ``width`` bits from bit ``offset`` (0: bit 7 of byte 0).

    The positions derived from them are plain attributes, computed once (the decoders read
    fields of every packet): ``byte`` (the first byte holding the field), ``end`` (the byte
    after its last), ``nbytes``, ``low`` and ``high`` (its least and most significant bits,
    counted from bit 0 of its last byte), ``mask`` (its largest value)."""

    name: str
    offset: int
    width: int
    what: str  # what a reader names when the field's bytes are missing
    byte: int = field(init=False, repr=False, compare=False)
    end: int = field(init=False, repr=False, compare=False)
    nbytes: int = field(init=False, repr=False, compare=False)
    low: int = field(init=False, repr=False, compare=False)
    high: int = field(init=False, repr=False, compare=False)
    mask: int = field(init=False, repr=False, compare=False)

    def __post_init__(self) -> None:
        byte, end = self.offset // 8, (self.offset + self.width + 7) // 8
        low = 8 * end - self.offset - self.width
        derived = {
            "byte": byte,
            "end": end,
            "nbytes": end - byte,
            "low": low,
            "high": low + self.width - 1,
            "mask": (1 << self.width) - 1,
        }
        for name, value in derived.items():
            object.__setattr__(self, name, value)

    @property
    def reserved(self) -> bool:
        return self.name == RESERVED

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

    @cached_property
    def _settable(self) -> tuple[tuple[str, int, int], ...]:
        """(name, shift, mask) of every field that is not reserved."""
        return tuple((f.name, self.shift(f.name), f.mask) for f in self.fields if not f.reserved)

    @cached_property
    def _positions(self) -> dict[str, tuple[int, int]]:
        """Every field's (shift, mask), by name."""
        return {name: (shift, mask) for name, shift, mask in self._every}

    @cached_property
    def _every(self) -> tuple[tuple[str, int, int], ...]:
        """(name, shift, mask) of every field."""
        return tuple((f.name, self.shift(f.name), f.mask) for f in self.fields)

    def pack_int(self, **values: int) -> int:
        """The layout, as one big-endian integer, with the given values (every field that is
        not reserved must be given; reserved fields are 0)."""
        word = 0
        settable = self._settable
        for name, shift, mask in settable:
            value = values[name]
            if not 0 <= value <= mask:
                width = mask.bit_length()
                raise ValueError(f"{self.name}: {name} = {value} does not fit in {width} bits")
            word |= value << shift
        if len(settable) != len(values):
            unknown = sorted(set(values) - {name for name, _, _ in settable})
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
        return {name: (word >> shift) & mask for name, shift, mask in self._every}

    def replace(self, data: bytes, at: int = 0, **values: int) -> bytes:
        """``data`` with the given fields of the layout at byte ``at`` set to new values."""
        size = self.size
        word = int.from_bytes(data[at : at + size], "big")
        positions = self._positions
        for name, value in values.items():
            shift, mask = positions[name]
            if not 0 <= value <= mask:
                width = mask.bit_length()
                raise ValueError(f"{self.name}: {name} = {value} does not fit in {width} bits")
            word = (word & ~(mask << shift)) | (value << shift)
        return b"".join((data[:at], word.to_bytes(size, "big"), data[at + size :]))

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
        units = self.units
        if start is not None or stop is not None:
            key = (start, stop)
            if key not in self._part_units:
                self._part_units[key] = self._units_between(start, stop)
            units = self._part_units[key]
        out: dict[str, int] = {}
        for unit in units:
            chunk = reader.take(unit.nbytes, unit.what)
            for f in unit.fields:
                out[f.name] = f.read(chunk, -unit.byte)
        return out

    @cached_property
    def _part_units(self) -> dict[tuple[str | None, str | None], tuple[Unit, ...]]:
        """The units of parts of the layout that :meth:`read` was asked for, by part."""
        return {}

    def _units_between(self, start: str | None, stop: str | None) -> tuple[Unit, ...]:
        """The units of the fields from ``start`` up to (not including) ``stop``."""
        first = self.names.index(start) if start is not None else 0
        last = self.names.index(stop) if stop is not None else len(self.fields)
        out = []
        for unit in self.units:
            index = self.fields.index(unit.fields[0])
            if first <= index < last:
                assert index + len(unit.fields) <= last, f"{self.name}: {stop} splits a unit"
                out.append(unit)
        return tuple(out)
