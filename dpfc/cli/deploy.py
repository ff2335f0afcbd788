"""``dpfc deploy IMAGE --switch URL``: install a linked image through a switch's control.

Contract: the image (``dpfc link -o``) is read strictly and applied by
:class:`~dpfc.deploy.Deployment` — memory, permissions, code, prologs last, rolled back when
the switch refuses a step — through the control protocol of the switch the URL names:

* ``bmv2://HOST:PORT`` — a running simple_switch with the program ``dpfc p4`` generated for
  the image's target, reached on its Thrift port through simple_switch_CLI's own Python
  modules, the only part of bmv2's or p4c's tools the deploying host needs
  (:func:`~dpfc.backends.p4.find_cli_modules`), with that program's control
  (:func:`~dpfc.backends.p4.control_for`: the stage-structured program's for a profile of
  code format 2, which first writes the program's fixed entries, else
  :class:`~dpfc.backends.p4.bmv2_control.Bmv2Control`): the table and register names are
  dpfc's own, the program's JSON comes from the switch. The switch must hold nothing
  deployed since it started (``--reset`` empties it first): which table entries an earlier
  ``dpfc deploy`` made is not yet kept anywhere (persistent control-plane state is a later
  issue). ``--script FILE`` writes the simple_switch_CLI commands sent, replayable with
  ``simple_switch_CLI < FILE``.
* ``sim://[PIPES]`` — a fresh simulated switch with that many pipes (default: the image's):
  the same steps, checked by the simulator's control plane (the same ledger as bmv2's),
  then forgotten (a dry run).

Each step is printed, then a summary (``--no-steps``: the summary only; ``-q``: nothing);
a refused step exits 1 with the switch's DPF4xxx code, the switch left as it was.
"""

from __future__ import annotations

import ipaddress
from urllib.parse import urlparse

import click

from dpfc.backends.p4 import (
    Cli,
    StagedControl,
    ToolchainMissing,
    control_for,
    find_cli_modules,
)
from dpfc.backends.sim import SimControl, Switch
from dpfc.cli.conventions import TARGET
from dpfc.cli.errors import UserError, handle_errors, quiet
from dpfc.cli.files import OutputPath, read_bytes, write_file
from dpfc.deploy import Deployment, describe
from dpfc.link import image_id, read_image
from dpfc.switch import SwitchControl, SwitchRefused
from dpfc.target import load_profile

BMV2_PORTS = 512  # simple_switch's default port count


def _route(text: str) -> tuple[bytes, int]:
    address, _, port = text.partition("=")
    try:
        return ipaddress.IPv4Address(address).packed, int(port, 0)
    except ValueError:
        raise UserError(f"--route takes IPV4=PORT, got `{text}`") from None


@click.command("deploy")
@click.argument("image_path", metavar="IMAGE")
@click.option("--switch", "url", required=True, help="bmv2://HOST:PORT or sim://[PIPES]")
@click.option("--target", type=TARGET, default=None, help="target profile the image must be for")
@click.option("--reset", is_flag=True, help="bmv2: empty the switch's tables and registers first")
@click.option(
    "--script",
    type=OutputPath(allow_dash=False),
    default=None,
    help="bmv2: write the CLI commands sent to this file",
)
@click.option("--default-port", type=int, default=None, help="where unrouted frames leave")
@click.option("--route", multiple=True, help="IPV4=PORT: outer destination -> port")
@click.option(
    "--steps/--no-steps",
    "show_steps",
    default=True,
    help="list each step before the summary (--no-steps: the summary only)",
)
@handle_errors
def deploy_command(
    image_path: str,
    url: str,
    target: str | None,
    reset: bool,
    script: str | None,
    default_port: int | None,
    route: tuple[str, ...],
    show_steps: bool,
) -> None:
    """Install a linked image on a switch (bmv2 or the simulator), prologs last."""
    data = read_bytes(image_path)
    profile = load_profile(target) if target is not None else None
    image = read_image(data, image_path, profile)
    routes = [_route(text) for text in route]
    where = urlparse(url)
    close: Cli | None = None
    switch: SwitchControl
    if where.scheme == "sim":
        pipes = int(where.netloc or where.path or image.pipes)
        control = Switch("deploy", image.profile, pipes=pipes).control
        switch = SimControl(control)
        if default_port is not None:
            control.set_default_port(default_port)
        for address, port in routes:
            control.set_route(address, port)
    elif where.scheme == "bmv2":
        if where.hostname is None or where.port is None:
            raise UserError(f"--switch bmv2://HOST:PORT, got `{url}`")
        try:
            cli = Cli(find_cli_modules(), where.port, host=where.hostname)
        except ToolchainMissing as missing:
            raise UserError(str(missing)) from None
        except Exception as exc:  # Thrift: connection refused, not a simple_switch
            raise UserError(f"cannot reach simple_switch at {where.netloc}: {exc}") from None
        if reset:
            cli.run("reset_state")
        try:
            bmv2 = control_for(cli, image.profile, cli.program_json())
        except SwitchRefused as refused:
            cli.close()
            hint = " (deploy with --reset?)" if "DUPLICATE" in refused.message else ""
            raise UserError(
                f"the switch refused the program's fixed entries{hint}: {refused}"
            ) from None
        if isinstance(bmv2, StagedControl) or default_port is not None:
            bmv2.configure(switch_id=0, ports=BMV2_PORTS)
        if default_port is not None:
            bmv2.set_default_port(default_port)
        for address, port in routes:
            bmv2.set_route(address, port)
        switch, close = bmv2, cli
    else:
        raise UserError(f"--switch takes bmv2://HOST:PORT or sim://[PIPES], got `{url}`")
    try:
        steps = Deployment(switch).apply(image)
    except SwitchRefused as refused:
        hint = " (an entry exists: deploy with --reset?)" if "DUPLICATE" in refused.message else ""
        raise UserError(f"the switch refused the image (rolled back){hint}: {refused}") from None
    finally:
        if close is not None:
            if script is not None:
                write_file(script, close.script().encode())
            close.close()
    if quiet():
        return
    if show_steps:
        for step in steps:
            click.echo(describe(step))
    click.echo(f"deployed image {image_id(data)} to {url}: {len(steps)} steps")
