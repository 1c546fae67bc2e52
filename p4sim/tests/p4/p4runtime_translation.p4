// `type`s with @p4runtime_translation (P4Runtime spec 8.3): P4Info gives the control plane's
// type as p4c writes it (type_name, the translated width or string in type_info.new_types);
// p4sim's P4Runtime server does not translate (test_runtime_p4info.py).
#include <core.p4>
#include <v1model.p4>

typedef bit<16> PortUint_t;
@p4runtime_translation("p4.org/psa/v1/PortId1_t", 32)
type PortUint_t Port32_t;
@p4runtime_translation("p4.org/psa/v1/PortId2_t", bit<12>)
type PortUint_t Port12_t;
@p4runtime_translation("p4.org/psa/v1/PortId3_t", string)
type PortUint_t PortName_t;

header ports_t { Port32_t wide; Port12_t narrow; PortName_t named; }
struct H { ports_t ports; }
struct M { }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.ports); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }
control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    action set_wide(Port32_t p) { hdr.ports.wide = p; }
    action set_named(PortName_t p) { hdr.ports.named = p; }
    table by_wide {
        key = { hdr.ports.wide : exact; hdr.ports.narrow : exact; }
        actions = { set_wide; set_named; NoAction; }
        default_action = NoAction();
    }
    table by_name {
        key = { hdr.ports.named : exact; }
        actions = { set_named; NoAction; }
        default_action = NoAction();
    }
    apply { by_wide.apply(); by_name.apply(); sm.egress_spec = 1; }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.ports); } }
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
