"""Numbers on the command line: stack lists and bounded integers (user errors, not tracebacks)."""

from __future__ import annotations

from dpfc.cli.errors import UserError


def parse_stack_text(text: str | None) -> tuple[int, ...]:
    if not text:
        return ()
    values = []
    for item in text.split(","):
        item = item.strip().replace("_", "")
        try:
            value = int(item, 0)
        except ValueError:
            raise UserError(
                f"stack values are comma-separated 32-bit numbers, got `{item}`"
            ) from None
        if not 0 <= value <= 0xFFFF_FFFF:
            raise UserError(f"stack value {item} does not fit in 32 bits")
        values.append(value)
    return tuple(values)


def number(text: str, what: str, limit: int) -> int:
    try:
        value = int(text.replace("_", ""), 0)
    except ValueError:
        raise UserError(f"{what} must be a number, got `{text}`") from None
    if not 0 <= value <= limit:
        raise UserError(f"{what} {text} out of range 0..{limit:#x}")
    return value
