"""The field-by-field reading of an install image's body (:func:`dpfc.link.read_image`
calls it after the header checks): every value typed and in range, every reference
resolved (slots, users, entries, default DPFs), code words decoded by
:mod:`dpfc.encoding`, and the install order exactly the one :func:`install_order` gives.
A violation raises the failure the reader was given, with the JSON path."""

from __future__ import annotations

from dpfc.encoding import DecodeError, decode_options, decode_slot, stage_kind
from dpfc.isa import PROLOG_STAGE, stage_name
from dpfc.link.image import (
    ChainTarget,
    CodeSlot,
    ExternDPF,
    Image,
    InstallStep,
    LinkedDPF,
    MemoryRequest,
    PermissionEntry,
    PlacedLabel,
    SteeringRequest,
    dpf_key,
    install_order,
)
from dpfc.objfile import Fields, object_profile, parse_stage
from dpfc.target import TargetProfile

PIPELINES = ("ingress", "egress")


class ImageReader:
    def __init__(self, filename: str, profile: TargetProfile | None) -> None:
        self.filename = filename
        self.given = profile
        self.profile: TargetProfile | None = None
        self.pipes = 0

    def stage(self, item: Fields, key: str) -> int:
        assert self.profile is not None
        stage = parse_stage(item.string(key), self.profile)
        if stage is None:
            item.reject(f"`{item.at(key)}` names no stage of {self.profile.name}")
        return stage

    def pipe_list(self, item: Fields, key: str = "pipes") -> tuple[int, ...]:
        pipes = item.integers(key, 0, self.pipes - 1)
        if not pipes or pipes != sorted(set(pipes)):
            item.reject(f"`{item.at(key)}` must list pipes once each, in order, at least one")
        return tuple(pipes)

    def image(self, top: Fields) -> Image:
        top.exactly(
            "target", "target_fingerprint", "pipes", "base", "code", "dpfs", "externs",
            "memory", "permissions", "steering", "install",
        )  # fmt: skip
        self.profile = profile = object_profile(
            top.string("target"), top.string("target_fingerprint"), self.given, self.filename
        )
        self.pipes = top.integer("pipes", 1, 64)
        base = top.optional_string("base")
        code = tuple(self.code_slot(item) for item in top.objects("code"))
        taken: dict[tuple[int, int], set[int]] = {}
        for item, slot in zip(top.objects("code"), code, strict=True):
            pipes = taken.setdefault((slot.stage, slot.slot), set())
            if pipes & set(slot.pipes):
                item.reject(f"{stage_name(slot.stage)} slot {slot.slot} is given twice")
            pipes |= set(slot.pipes)
        # the users of each address: one (stage, slot) may hold other words on other pipes
        slots: dict[tuple[int, int], set[str]] = {}
        for c in code:
            slots.setdefault((c.stage, c.slot), set()).update(c.users)
        dpfs = tuple(self.dpf(item, slots) for item in top.objects("dpfs"))
        keys = {d.key for d in dpfs}
        if len(keys) != len(dpfs):
            top.reject("a DPF of a tenant is listed twice in `dpfs`")
        for item, slot in zip(top.objects("code"), code, strict=True):
            stray = [u for u in slot.users if u not in keys]
            if stray or not slot.users:
                item.reject(f"`{item.at('users')}` must name DPFs of the image, not {stray}")
        externs = tuple(self.extern(item) for item in top.objects("externs"))
        by_key = {d.key: d for d in dpfs}
        memory = tuple(self.memory(item, by_key) for item in top.objects("memory"))
        permissions = tuple(self.permission(item, dpfs) for item in top.objects("permissions"))
        steering = tuple(self.steering(item, keys) for item in top.objects("steering"))
        steps = []
        for i, step in enumerate(top.array("install")):
            if not _is_step(step):
                top.reject(f"`install[{i}]` must be [kind, index]")
            steps.append(InstallStep(step[0], step[1]))
        install = tuple(steps)
        if install != install_order(code, memory, permissions, profile.num_eus):
            top.reject(
                "`install` is not the install order (permissions, memory, code from the "
                "epilog back to the prologs, default DPFs) of the image's items"
            )
        return Image(
            profile, self.pipes, code, dpfs, externs, memory, permissions, steering, install, base
        )

    def code_slot(self, item: Fields) -> CodeSlot:
        assert self.profile is not None
        item.exactly("stage", "slot", "word", "pipes", "users")
        stage = self.stage(item, "stage")
        slot = item.integer("slot", 0, self.profile.code_slots_per_stage - 1)
        word = item.hex_bytes("word")
        try:
            decode_slot(stage_kind(stage), word, self.profile)
        except DecodeError as exc:
            item.reject(f"`{item.at('word')}`: [{exc.code}] {exc.message}")
        return CodeSlot(stage, slot, word, self.pipe_list(item), tuple(item.strings("users")))

    def dpf(self, item: Fields, slots: dict[tuple[int, int], set[str]]) -> LinkedDPF:
        assert self.profile is not None
        item.exactly(
            "symbol", "tenant", "module", "object", "placement", "pipeline", "pipes", "app_id",
            "params", "entry", "labels", "chains", "in_packet_options",
        )  # fmt: skip
        tenant = None if item.value("tenant") is None else item.integer("tenant", 0, (1 << 24) - 1)
        symbol = item.string("symbol")
        key = dpf_key(tenant, symbol)
        entry = None if item.value("entry") is None else item.integer("entry")
        if entry is not None and key not in slots.get((PROLOG_STAGE, entry), ()):
            item.reject(f"`{item.at('entry')}` is not a prolog slot of this DPF")
        labels = []
        for k, raw in enumerate(item.array("labels")):
            where = f"{item.at('labels')}[{k}]"
            if not (
                isinstance(raw, list)
                and len(raw) == 4
                and isinstance(raw[0], str)
                and isinstance(raw[1], str)
                and isinstance(raw[2], int)
                and isinstance(raw[3], bool)
            ):
                item.reject(f"`{where}` must be [label, stage, slot, in_packet]")
            stage = parse_stage(raw[1], self.profile)
            if stage is None:
                item.reject(f"`{where}` names no stage")
            if not raw[3] and key not in slots.get((stage, raw[2]), ()):
                item.reject(f"`{where}` names a slot that does not hold this DPF's code")
            labels.append(PlacedLabel(raw[0], stage, raw[2], raw[3]))
        chains = []
        for k, raw in enumerate(item.array("chains")):
            if not (
                isinstance(raw, list)
                and len(raw) == 3
                and all(isinstance(x, str) for x in raw[:2])
                and isinstance(raw[2], int)
            ):
                item.reject(f"`{item.at('chains')}[{k}]` must be [label, target, slot]")
            chains.append(ChainTarget(raw[0], raw[1], raw[2]))
        options = item.optional_hex("in_packet_options")
        pipeline = item.string("pipeline", choices=PIPELINES)
        if options is not None:
            header = decode_options(options, self.profile)
            # the options are the DPF's packets' header: its pipeline's pointer, only
            egress = pipeline == "egress"
            mine = header.egress_ptr if egress else header.dpf_ptr
            other = header.dpf_ptr if egress else header.egress_ptr
            if mine is None or other is not None:
                item.reject(
                    f"`{item.at('in_packet_options')}` must name the entry of this "
                    f"{pipeline} DPF in its {pipeline} pointer only"
                )
        return LinkedDPF(
            symbol=symbol,
            tenant=tenant,
            module=item.string("module"),
            object=item.string("object"),
            placement=item.string("placement", choices=("packet", "switch")),
            pipes=self.pipe_list(item),
            app_id=item.integer("app_id"),
            params=item.integer("params", 0, 255),
            entry=entry,
            labels=tuple(labels),
            chains=tuple(chains),
            in_packet_options=options,
            pipeline=pipeline,
        )

    def extern(self, item: Fields) -> ExternDPF:
        assert self.profile is not None
        item.exactly("symbol", "tenant", "entry", "image", "pipeline")
        return ExternDPF(
            item.string("symbol"),
            None if item.value("tenant") is None else item.integer("tenant", 0, (1 << 24) - 1),
            item.integer("entry", 0, self.profile.code_slots_per_stage - 1),
            item.string("image"),
            item.string("pipeline", choices=PIPELINES),
        )

    def memory(self, item: Fields, dpfs: dict[str, LinkedDPF]) -> MemoryRequest:
        assert self.profile is not None
        item.exactly(
            "tenant", "array", "eu", "lane", "mapping", "pipeline", "size", "pipes", "users"
        )
        users = tuple(item.strings("users"))
        if not users or not set(users) <= set(dpfs):
            item.reject(f"`{item.at('users')}` must name DPFs of the image")
        pipeline = item.string("pipeline", choices=PIPELINES)
        if any(dpfs[user].pipeline != pipeline for user in users):
            item.reject(f"`{item.at('users')}` must name {pipeline} DPFs (the array's pipeline)")
        return MemoryRequest(
            item.integer("tenant", 0, (1 << 24) - 1),
            item.string("array"),
            item.integer("eu", 0, self.profile.num_eus - 1),
            item.integer("lane", 0, self.profile.lanes - 1),
            item.string("mapping", choices=("direct", "segment")),
            item.integer("size", 1, self.profile.memory_words_per_lane),
            self.pipe_list(item),
            users,
            pipeline,
        )

    def permission(self, item: Fields, dpfs: tuple[LinkedDPF, ...]) -> PermissionEntry:
        item.exactly(
            "tenant", "app_ids", "metadata", "privileged", "recirculate", "default_dpf", "pipes"
        )
        tenant = item.integer("tenant", 0, (1 << 24) - 1)
        app_ids = tuple(item.integers("app_ids"))
        if not app_ids:
            item.reject(f"`{item.at('app_ids')}` needs at least the primary app id")
        default = item.optional_string("default_dpf")
        if default is not None and not any(
            d.symbol == default
            and d.tenant == tenant
            and d.entry is not None
            and d.pipeline == "ingress"
            for d in dpfs
        ):
            item.reject(
                f"`{item.at('default_dpf')}` names no installed ingress DPF of tenant {tenant}"
            )
        return PermissionEntry(
            tenant,
            app_ids,
            item.boolean("metadata"),
            item.boolean("privileged"),
            item.boolean("recirculate"),
            default,
            self.pipe_list(item),
        )

    def steering(self, item: Fields, keys: set[str]) -> SteeringRequest:
        item.exactly("tenant", "action", "index", "users")
        users = tuple(item.strings("users"))
        if not users or not set(users) <= keys:
            item.reject(f"`{item.at('users')}` must name DPFs of the image")
        return SteeringRequest(
            item.integer("tenant", 0, (1 << 24) - 1),
            item.string("action", choices=("forward", "multicast")),
            item.integer("index", 0, 0xFFFF),
            users,
        )


def _is_step(step: object) -> bool:
    return (
        isinstance(step, list)
        and len(step) == 2
        and step[0] in ("memory", "permission", "code", "default_dpf")
        and isinstance(step[1], int)
        and not isinstance(step[1], bool)
    )


__all__ = ["ImageReader"]
