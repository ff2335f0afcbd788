"""The SwitchVM Geneve options: header option, code options and stack options.

Contract: a :class:`SwitchVMHeader` (what a packet says: app id, pointers, gas, stack,
in-packet code) has exactly one encoding as SwitchVM Geneve options (docs/encoding.md §2,
§3). :func:`encode_options` writes it, checking every limit first (code legality, pointers,
stack, field widths, option counts, the Geneve size) and raising
:class:`~dpfc.encoding.errors.EncodingError` on the first one broken;
:func:`decode_options` reads it back and accepts nothing else (strict, every error a
:class:`~dpfc.encoding.errors.DecodeError` with its byte offset and code, canonical
encodings only). Positions and widths come from the tables of :mod:`dpfc.encoding.layouts`.

Modules:

* :mod:`.format`: the constants, :class:`SwitchVMHeader`, :class:`EncodedOptions`, the
  option framing (:func:`split_options`) and the pointer rule (:func:`pointer_problem`);
* :mod:`.encode`: :func:`encode_options`, :func:`pack_checked`, :func:`restack`;
* :mod:`.decode`: :func:`decode_options`.

Not responsible for the in-packet code inside the code options (:mod:`dpfc.encoding.code`)
nor for the outer headers of a packet (:mod:`dpfc.packet`).
"""

from dpfc.encoding.header.decode import decode_options
from dpfc.encoding.header.encode import encode_options, pack_checked, restack
from dpfc.encoding.header.format import (
    HEADER_DATA_LEN,
    HEADER_OPTION_BYTES,
    OPTION_CLASS,
    OPTION_TYPE_NAMES,
    PTR_NONE,
    TYPE_CODE,
    TYPE_HEADER,
    TYPE_STACK,
    EncodedOptions,
    Option,
    SwitchVMHeader,
    pointer_problem,
    split_options,
)

__all__ = [
    "HEADER_DATA_LEN",
    "HEADER_OPTION_BYTES",
    "OPTION_CLASS",
    "OPTION_TYPE_NAMES",
    "PTR_NONE",
    "TYPE_CODE",
    "TYPE_HEADER",
    "TYPE_STACK",
    "EncodedOptions",
    "Option",
    "SwitchVMHeader",
    "decode_options",
    "encode_options",
    "pack_checked",
    "pointer_problem",
    "restack",
    "split_options",
]
