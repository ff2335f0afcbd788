"""bmv2 as a target: finding the toolchain, compiling, running simple_switch, packets in/out.

Contract:

* :func:`find_toolchain` finds ``p4c-bm2-ss``, ``simple_switch`` and ``simple_switch_CLI``
  on ``PATH`` or under ``$DPFC_P4_PREFIX`` (default ``/opt/p4``), or raises
  :class:`ToolchainMissing` saying what is missing (tests skip with that reason);
* :func:`compile_program` runs ``p4c-bm2-ss`` and returns the JSON's path and the warnings;
* :class:`Switch` starts one ``simple_switch`` with its packets on a nanomsg PAIR socket
  (``--packet-in``: no root, no interfaces, packets in and out in order, as bmv2's own
  ``dev_mgr_packet_in.cpp`` frames them) and its runtime on a loopback Thrift port, and
  gives :class:`~dpfc.backends.p4.simple_switch_cli.Cli` access to it. ``stop()`` ends the process;
* :class:`PacketSocket` is that socket, also of a simple_switch started by someone else
  (``--packet-in ADDRESS``), as ``dpfc test --switch bmv2://...`` reaches one.

dpfc ships none of these tools: docs/p4.md says where to get them.
"""

from __future__ import annotations

import ctypes
import os
import shutil
import socket
import struct
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

DEFAULT_PREFIX = "/opt/p4"
TOOLS = ("p4c-bm2-ss", "simple_switch", "simple_switch_CLI")
MSG_PACKET_IN, MSG_PACKET_OUT = 3, 4  # bmv2's packet-in message types
NN_PAIR, AF_SP, NN_SOL_SOCKET, NN_SNDTIMEO, NN_RCVTIMEO, NN_MSG = 16, 1, 0, 4, 5, -1
HEADER = struct.Struct("<iii")  # type, port, length (bmv2's packed native ints)


class ToolchainMissing(RuntimeError):
    """The P4 toolchain is not installed (the reason says what is missing and where)."""


class Bmv2Error(RuntimeError):
    """bmv2 or p4c failed (the message has their output)."""


@dataclass(frozen=True)
class Toolchain:
    p4c: Path
    switch: Path
    cli: Path
    site_packages: Path | None  # where simple_switch_CLI's Python modules are

    @property
    def prefix(self) -> Path:
        return self.switch.parent.parent


def find_tool(name: str, how: str) -> Path:
    """The program ``name`` under ``$DPFC_P4_PREFIX/bin`` (default /opt/p4), else on PATH;
    :class:`ToolchainMissing` says where it looked and ``how`` to get it."""
    prefix = Path(os.environ.get("DPFC_P4_PREFIX", DEFAULT_PREFIX))
    candidate = prefix / "bin" / name
    if candidate.exists():
        return candidate
    on_path = shutil.which(name)
    if on_path is not None:
        return Path(on_path)
    raise ToolchainMissing(
        f"{name} not found on PATH or under {prefix}/bin (set DPFC_P4_PREFIX; docs/p4.md "
        f"says how to {how})"
    )


def find_toolchain() -> Toolchain:
    prefix = Path(os.environ.get("DPFC_P4_PREFIX", DEFAULT_PREFIX))
    found: dict[str, Path] = {}
    for tool in TOOLS:
        candidate = prefix / "bin" / tool
        on_path = shutil.which(tool)
        if candidate.exists():
            found[tool] = candidate
        elif on_path is not None:
            found[tool] = Path(on_path)
    missing = [tool for tool in TOOLS if tool not in found]
    if missing:
        raise ToolchainMissing(
            f"{', '.join(missing)} not found on PATH or under {prefix}/bin (set "
            "DPFC_P4_PREFIX; docs/p4.md says how to install p4c and bmv2)"
        )
    switch = found["simple_switch"]
    sites = sorted((switch.resolve().parent.parent / "lib").glob("python3*/site-packages"))
    return Toolchain(
        found["p4c-bm2-ss"], switch, found["simple_switch_CLI"], sites[-1] if sites else None
    )


@dataclass(frozen=True)
class Compiled:
    json: Path
    seconds: float
    warnings: list[str]


def compile_program(toolchain: Toolchain, source: Path, output: Path) -> Compiled:
    """``p4c-bm2-ss`` on ``source``; raises :class:`Bmv2Error` with p4c's output on failure."""
    started = time.perf_counter()
    done = subprocess.run(
        [
            str(toolchain.p4c),
            "--std",
            "p4-16",
            "--target",
            "bmv2",
            "--arch",
            "v1model",
            "-o",
            str(output),
            str(source),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    seconds = time.perf_counter() - started
    messages = (done.stdout + done.stderr).strip()
    if done.returncode != 0:
        raise Bmv2Error(f"p4c-bm2-ss failed on {source}:\n{messages}")
    warnings = [line for line in messages.splitlines() if "warning" in line]
    return Compiled(output, seconds, warnings)


class _Nanomsg:
    """The few libnanomsg calls a PAIR socket needs (Debian's libnanomsg, as bmv2 uses)."""

    def __init__(self) -> None:
        try:
            self.lib = ctypes.CDLL("libnanomsg.so.5")
        except OSError:
            self.lib = ctypes.CDLL("libnanomsg.so")
        self.lib.nn_recv.restype = ctypes.c_int
        self.lib.nn_errno.restype = ctypes.c_int

    def pair(self, address: str, timeout_ms: int, send_timeout_ms: int | None = None) -> int:
        sock = self.lib.nn_socket(AF_SP, NN_PAIR)
        if sock < 0:
            raise Bmv2Error("nn_socket failed")
        options = [(NN_RCVTIMEO, timeout_ms)]
        if send_timeout_ms is not None:  # else a send with no peer waits for one
            options.append((NN_SNDTIMEO, send_timeout_ms))
        for option, milliseconds in options:
            value = ctypes.c_int(milliseconds)
            self.lib.nn_setsockopt(
                sock, NN_SOL_SOCKET, option, ctypes.byref(value), ctypes.sizeof(value)
            )
        if self.lib.nn_connect(sock, address.encode()) < 0:
            raise Bmv2Error(f"nn_connect {address} failed")
        return int(sock)

    def send(self, sock: int, data: bytes) -> None:
        if self.lib.nn_send(sock, data, len(data), 0) != len(data):
            raise Bmv2Error("nn_send failed")

    def recv(self, sock: int) -> bytes | None:
        buffer = ctypes.c_void_p()
        size = self.lib.nn_recv(sock, ctypes.byref(buffer), NN_MSG, 0)
        if size < 0:
            return None  # the receive timeout
        data = ctypes.string_at(buffer, size)
        self.lib.nn_freemsg(buffer)
        return data

    def close(self, sock: int) -> None:
        self.lib.nn_close(sock)


PORT_RANGE_VARIABLE = "DPFC_BMV2_PORTS"
_handed_out: set[int] = set()


def free_port() -> int:
    """A loopback TCP port nobody listens on, for a switch's Thrift server.

    With ``$DPFC_BMV2_PORTS`` set to ``LOW-HIGH``, the first port of that range this
    process has not handed out yet and can bind (test workers running in parallel each get
    a range of their own, so two switches never race for one port); otherwise whatever
    port the kernel picks."""
    bounds = os.environ.get(PORT_RANGE_VARIABLE)
    if not bounds:
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            probe.bind(("127.0.0.1", 0))
            return int(probe.getsockname()[1])
    low, _, high = bounds.partition("-")
    for port in range(int(low), int(high) + 1):
        if port in _handed_out:
            continue
        with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
            try:
                probe.bind(("127.0.0.1", port))
            except OSError:
                continue
        _handed_out.add(port)
        return port
    raise Bmv2Error(f"no free port left in {PORT_RANGE_VARIABLE}={bounds}")


class PacketSocket:
    """The packets of a running simple_switch: the nanomsg PAIR socket it was started with
    (``simple_switch --packet-in ADDRESS``), framed as bmv2's ``dev_mgr_packet_in.cpp``
    frames them."""

    def __init__(
        self, address: str, *, timeout_ms: int = 50, send_timeout_ms: int | None = None
    ) -> None:
        """``send_timeout_ms``: how long a send waits for the switch to take the packet
        (None: as long as it takes)."""
        self.address = address
        self.send_timeout_ms = send_timeout_ms
        self.nn = _Nanomsg()
        self.sock = self.nn.pair(address, timeout_ms, send_timeout_ms)

    def send(self, port: int, frame: bytes) -> None:
        try:
            self.nn.send(self.sock, HEADER.pack(MSG_PACKET_IN, port, len(frame)) + frame)
        except Bmv2Error:
            raise Bmv2Error(
                f"no simple_switch took the packet on {self.address} within "
                f"{self.send_timeout_ms} ms (the address its --packet-in names, one peer "
                "at a time?)"
            ) from None

    def receive(
        self, count: int, *, timeout: float = 3.0, grace: float = 0.05
    ) -> list[tuple[int, bytes]]:
        """Output packets: waits for ``count`` (at most ``timeout`` s), then ``grace`` s more
        for any beyond them; returns what came, in order."""
        out: list[tuple[int, bytes]] = []
        deadline = time.monotonic() + timeout
        while True:
            now = time.monotonic()
            if len(out) >= count:
                deadline = min(deadline, now + grace)
            # Checked before receiving: a receive blocks up to the socket's timeout (50 ms),
            # which a caller with no grace does not wait for.
            if now >= deadline:
                return out
            message = self.nn.recv(self.sock)
            if message is None:
                continue
            kind, port, length = HEADER.unpack_from(message)
            if kind == MSG_PACKET_OUT:
                out.append((port, message[HEADER.size : HEADER.size + length]))

    def close(self) -> None:
        self.nn.close(self.sock)


class Switch:
    """One running simple_switch (see the module docstring)."""

    _devices = 0

    def __init__(
        self, toolchain: Toolchain, program_json: Path, *, log: bool = False, packets: bool = True
    ) -> None:
        """``packets=False``: leave the packet socket to another process (a PAIR socket
        takes one peer, and simple_switch serves the first)."""
        self.toolchain = toolchain
        self.json = program_json
        self.workdir = Path(tempfile.mkdtemp(prefix="dpfc-bmv2-"))
        Switch._devices += 1
        self.device = os.getpid() % 10_000 * 10 + Switch._devices
        self.address = f"ipc://{self.workdir}/packets.ipc"
        self.thrift_port = free_port()
        command = [
            str(toolchain.switch),
            "--packet-in",
            self.address,
            "--thrift-port",
            str(self.thrift_port),
            "--device-id",
            str(self.device),
            "--notifications-addr",
            f"ipc://{self.workdir}/notifications.ipc",
        ]
        if log:
            command += ["--log-file", str(self.workdir / "switch"), "--log-flush"]
        command.append(str(program_json))
        self.log = open(self.workdir / "stderr.txt", "w")  # noqa: SIM115 (lives as long as the switch)
        self.process = subprocess.Popen(command, stdout=self.log, stderr=subprocess.STDOUT)
        self._wait_ready()
        self.packets = PacketSocket(self.address) if packets else None

    def _wait_ready(self) -> None:
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                raise Bmv2Error(
                    f"simple_switch exited: {(self.workdir / 'stderr.txt').read_text()}"
                )
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as probe:
                if probe.connect_ex(("127.0.0.1", self.thrift_port)) == 0:
                    return
            time.sleep(0.05)
        raise Bmv2Error("simple_switch did not open its Thrift port within 30 s")

    def send(self, port: int, frame: bytes) -> None:
        assert self.packets is not None, "this switch's packets are another process's"
        self.packets.send(port, frame)

    def receive(
        self, count: int, *, timeout: float = 3.0, grace: float = 0.05
    ) -> list[tuple[int, bytes]]:
        """Output packets: waits for ``count`` (at most ``timeout`` s), then ``grace`` s more
        for any beyond them; returns what came, in order."""
        assert self.packets is not None, "this switch's packets are another process's"
        return self.packets.receive(count, timeout=timeout, grace=grace)

    def stop(self) -> None:
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.packets is not None:
            self.packets.close()
        self.log.close()
        shutil.rmtree(self.workdir, ignore_errors=True)
