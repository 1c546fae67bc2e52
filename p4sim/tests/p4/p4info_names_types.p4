// What P4Info takes from names, types and annotations besides the objects themselves, as
// p4c writes it: pkg_info from @pkginfo, @platform_property and the other annotations on
// `main`; a parameter's @name; `type_name` of keys, parameters and packet-in fields of a
// `type`, with type_info.new_types; a key's literal in the base it was written in; and no
// entry for a direct counter or meter no table uses; NOTIFY_CONTROL for `support_timeout`.
#include <core.p4>
#include <v1model.p4>

typedef bit<9> PortUint_t;
type PortUint_t Port_t;
type bit<48> Mac_t;
type Mac_t OtherMac_t;

header h_t { Mac_t dst; bit<48> src; bit<16> etype; }
@controller_header("packet_in")
header packet_in_t { Port_t ingress_port; bit<7> pad; }
struct H { packet_in_t pin; h_t h; }
struct M { OtherMac_t seen; }

parser P(packet_in pk, out H hdr, inout M m, inout standard_metadata_t sm) {
    state start { pk.extract(hdr.h); transition accept; }
}
control VC(inout H hdr, inout M m) { apply { } }

control I(inout H hdr, inout M m, inout standard_metadata_t sm) {
    direct_counter(CounterType.packets) no_table_counts;
    direct_meter<bit<2>>(MeterType.bytes) no_table_meters;

    action forward(@name("egress_port") Port_t port, OtherMac_t next_hop) {
        sm.egress_spec = (bit<9>) (PortUint_t) port;
        m.seen = next_hop;
    }
    table by_mac {
        key = {
            hdr.h.dst : exact;
            hdr.h.src & 0x0000ffff0000 : ternary;
            hdr.h.etype & 16w0x00F0 : exact;
        }
        actions = { forward; NoAction; }
        support_timeout = true;
    }
    apply { by_mac.apply(); hdr.pin.setValid(); }
}
control E(inout H hdr, inout M m, inout standard_metadata_t sm) { apply { } }
control CC(inout H hdr, inout M m) { apply { } }
control D(packet_out pk, in H hdr) { apply { pk.emit(hdr.pin); pk.emit(hdr.h); } }

@pkginfo(name = "p4info_names_types.p4", version = "1.2.0", organization = "dc-splitter",
         contact = "nobody@example.org", url = "https://example.org/p4info")
@platform_property(multicast_group_table_size = 64,
                   multicast_group_table_max_replicas_per_entry = 8)
@brief("P4Info fields beyond the objects")
@test_only
V1Switch(P(), VC(), I(), E(), CC(), D()) main;
