"""The SwitchVM Geneve options: header option, code options and stack options.

The public module of the options format, re-exporting its three parts so that callers
need one import path:

* :mod:`dpfc.encoding.header_format`: the layout (documented there), its constants,
  :class:`SwitchVMHeader`, :class:`EncodedOptions`, the option framing
  (:func:`split_options`) and the pointer rule (:func:`pointer_problem`);
* :mod:`dpfc.encoding.header_encode`: :func:`encode_options` (every limit checked, the
  canonical bytes), :func:`pack_checked`, :func:`restack`;
* :mod:`dpfc.encoding.header_decode`: :func:`decode_options` (strict, located errors,
  canonical encodings only).

It defines nothing itself.
"""

from __future__ import annotations

from dpfc.encoding.header_decode import decode_options
from dpfc.encoding.header_encode import encode_options, pack_checked, restack
from dpfc.encoding.header_format import (
    FORMAT_VERSION,
    HEADER_DATA_LEN,
    OPTION_CLASS,
    OPTION_DATA_MAX,
    OPTION_TYPE_NAMES,
    OPTIONS_MAX,
    PTR_NONE,
    STACK_ENTRIES_PER_OPTION,
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
    "FORMAT_VERSION",
    "HEADER_DATA_LEN",
    "OPTIONS_MAX",
    "OPTION_CLASS",
    "OPTION_DATA_MAX",
    "OPTION_TYPE_NAMES",
    "PTR_NONE",
    "STACK_ENTRIES_PER_OPTION",
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
