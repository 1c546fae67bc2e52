"""Counters, registers and meters: arrays of cells addressed by index (meters: two-rate
three-color; rates in units/s, bursts in units, as BMv2 takes them).
"""

from __future__ import annotations

from p4.v1 import p4data_pb2, p4runtime_pb2

from p4sim import model
from p4sim.p4runtime import codec
from p4sim.p4runtime.errors import (
    invalid,
    not_found,
    out_of_range,
    unimplemented,
)
from p4sim.p4runtime.index import PipelineIndex

Update = p4runtime_pb2.Update


def counter_def(index: PipelineIndex, counter_id: int) -> model.CounterDef:
    if counter_id in index.direct_counters:
        raise invalid(f"counter id {counter_id} is a direct counter: use DirectCounterEntry")
    try:
        return index.counters[counter_id]
    except KeyError:
        raise not_found(f"no counter with id {counter_id} in the P4Info") from None


def _check_index(what: str, i: int, size: int) -> None:
    """Spec (CounterEntry, MeterEntry, RegisterEntry): a negative index is INVALID_ARGUMENT,
    one past the array OUT_OF_RANGE."""
    if i < 0:
        raise invalid(f"{what}: index {i} is negative (valid: 0..{size - 1})")
    if i >= size:
        raise out_of_range(f"{what}: index {i} is outside 0..{size - 1}")


def _selected_cells(msg, resource_id: int, all_ids, lookup, kind: str):
    """The (id, definition, index) cells an indexed read selects: id 0 = every resource of
    the kind, an unset index = every cell (P4Runtime wildcard reads)."""
    for rid in [resource_id] if resource_id else list(all_ids):
        definition = lookup(rid)
        if msg.HasField("index"):
            _check_index(f"{kind} {definition.name}", msg.index.index, definition.size)
            indices = [msg.index.index]
        else:
            indices = range(definition.size)
        for i in indices:
            yield rid, definition, i


def _counter_data(
    definition: model.CounterDef, packets: int, bytes_: int, out: p4runtime_pb2.CounterData
) -> None:
    if definition.unit in ("packets", "packets_and_bytes"):
        out.packet_count = packets
    if definition.unit in ("bytes", "packets_and_bytes"):
        out.byte_count = bytes_


def write_counter(index, device, update_type, msg: p4runtime_pb2.CounterEntry):
    if update_type != Update.MODIFY:
        raise invalid("counter entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.counter_id:
        raise invalid("counter_id 0: a write needs one counter")
    definition = counter_def(index, msg.counter_id)
    if not msg.HasField("index"):
        raise invalid(f"counter {definition.name}: a write needs an index")
    _check_index(f"counter {definition.name}", msg.index.index, definition.size)
    device.counters[definition.name].write(
        msg.index.index, msg.data.packet_count, msg.data.byte_count
    )


def read_counters(index, device, msg: p4runtime_pb2.CounterEntry):
    cells = _selected_cells(
        msg, msg.counter_id, index.counters, lambda cid: counter_def(index, cid), "counter"
    )
    for cid, definition, i in cells:
        packets, bytes_ = device.counters[definition.name].read(i)
        item = p4runtime_pb2.CounterEntry(counter_id=cid)
        item.index.index = i
        _counter_data(definition, packets, bytes_, item.data)
        yield item


def register_def(index: PipelineIndex, register_id: int) -> model.RegisterDef:
    try:
        return index.registers[register_id]
    except KeyError:
        raise not_found(f"no register with id {register_id} in the P4Info") from None


def write_register(index, device, update_type, msg: p4runtime_pb2.RegisterEntry):
    if update_type != Update.MODIFY:
        raise invalid("register entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.register_id:
        raise invalid("register_id 0: a write needs one register")
    definition = register_def(index, msg.register_id)
    what = f"register {definition.name}"
    if not msg.HasField("index"):
        raise invalid(f"{what}: a write needs an index")
    _check_index(what, msg.index.index, definition.size)
    if msg.data.WhichOneof("data") != "bitstring":
        raise invalid(f"{what}: data must be a bitstring of {definition.bitwidth} bits")
    value = codec.decode(msg.data.bitstring, definition.bitwidth, what)
    device.registers[definition.name].write(msg.index.index, value)


def read_registers(index, device, msg: p4runtime_pb2.RegisterEntry):
    cells = _selected_cells(
        msg, msg.register_id, index.registers, lambda rid: register_def(index, rid), "register"
    )
    for rid, definition, i in cells:
        value = device.registers[definition.name].read(i)
        item = p4runtime_pb2.RegisterEntry(register_id=rid)
        item.index.index = i
        item.data.CopyFrom(p4data_pb2.P4Data(bitstring=codec.encode(value)))
        yield item


def decode_meter_config(config: p4runtime_pb2.MeterConfig, what: str):
    values = (config.cir, config.cburst, config.pir, config.pburst)
    if min(values) < 0:
        raise invalid(f"{what}: meter rates and bursts must not be negative")
    if config.cir > config.pir:
        raise invalid(f"{what}: meter cir {config.cir} exceeds pir {config.pir}")
    if config.eburst:
        raise unimplemented(f"{what}: eburst (single-rate meters) is not supported by p4sim")
    return values


def encode_meter_config(config, out: p4runtime_pb2.MeterConfig) -> None:
    out.cir, out.cburst, out.pir, out.pburst = config


def meter_def(index: PipelineIndex, meter_id: int) -> model.MeterDef:
    if meter_id in index.direct_meters:
        raise invalid(f"meter id {meter_id} is a direct meter: use DirectMeterEntry")
    try:
        return index.meters[meter_id]
    except KeyError:
        raise not_found(f"no meter with id {meter_id} in the P4Info") from None


def write_meter(index, device, update_type, msg: p4runtime_pb2.MeterEntry):
    if update_type != Update.MODIFY:
        raise invalid("meter entries can only be modified (INSERT/DELETE do not apply)")
    if not msg.meter_id:
        raise invalid("meter_id 0: a write needs one meter")
    definition = meter_def(index, msg.meter_id)
    what = f"meter {definition.name}"
    if not msg.HasField("index"):
        raise invalid(f"{what}: a write needs an index")
    _check_index(what, msg.index.index, definition.size)
    # an unset config returns the cell to its default (unconfigured: everything GREEN)
    config = decode_meter_config(msg.config, what) if msg.HasField("config") else None
    device.meters[definition.name].set_config(msg.index.index, config)


def read_meters(index, device, msg: p4runtime_pb2.MeterEntry):
    cells = _selected_cells(
        msg, msg.meter_id, index.meters, lambda mid: meter_def(index, mid), "meter"
    )
    for mid, definition, i in cells:
        item = p4runtime_pb2.MeterEntry(meter_id=mid)
        item.index.index = i
        config = device.meters[definition.name].get_config(i)
        if config is not None:
            encode_meter_config(config, item.config)
        yield item
