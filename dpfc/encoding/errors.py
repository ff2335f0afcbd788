"""Errors of the encoders and decoders (user errors: malformed input or over-limit code)."""

from __future__ import annotations

from dpfc.catalog import codes


class EncodingError(Exception):
    """Code or a packet cannot be encoded (e.g. over the Geneve size limits); ``bundle`` is
    the (stage, index in the stage) of the in-packet bundle at fault, when one is."""

    def __init__(
        self,
        message: str,
        code: str = codes.ENCODE_BUNDLE_TOO_LARGE,
        bundle: tuple[int, int] | None = None,
    ) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.bundle = bundle


class DecodeError(Exception):
    """Bytes are not a valid SwitchVM header; ``offset`` is where decoding stopped."""

    def __init__(self, message: str, offset: int, code: str = codes.DECODE_ERROR) -> None:
        super().__init__(f"byte {offset}: {message}")
        self.message = message
        self.offset = offset
        self.code = code


class ByteReader:
    """Bounds-checked reading of a byte string; every read past the end is a DecodeError."""

    def __init__(self, data: bytes, base_offset: int = 0) -> None:
        self.data = data
        self.pos = 0
        self.base = base_offset

    @property
    def offset(self) -> int:
        return self.base + self.pos

    def remaining(self) -> int:
        return len(self.data) - self.pos

    def take(self, count: int, what: str) -> bytes:
        if count > self.remaining():
            raise DecodeError(
                f"truncated {what}: need {count} bytes, {self.remaining()} left",
                self.offset,
                codes.DECODE_TRUNCATED,
            )
        chunk = self.data[self.pos : self.pos + count]
        self.pos += count
        return chunk

    def uint(self, size: int, what: str) -> int:
        """A big-endian unsigned number of ``size`` bytes."""
        return int.from_bytes(self.take(size, what), "big")

    def u8(self, what: str) -> int:
        return self.take(1, what)[0]

    def u16(self, what: str) -> int:
        return int.from_bytes(self.take(2, what), "big")

    def u32(self, what: str) -> int:
        return int.from_bytes(self.take(4, what), "big")
