/* L2/L3 forwarding with a CPU port: the program p4sim's control-half tests and benchmark
 * drive over P4Runtime. l2_fwd picks the egress port by destination MAC (or sends to the
 * CPU, or to a multicast group); ipv4_lpm routes IPv4 with a TTL decrement and a checksum
 * update. Frames no table forwards are dropped. */
#include <core.p4>
#include <v1model.p4>

#define CPU_PORT 64

typedef bit<9>  port_t;
typedef bit<48> mac_t;

@controller_header("packet_in")
header packet_in_t {
    port_t  ingress_port;
    bit<7>  _pad;
}

@controller_header("packet_out")
header packet_out_t {
    port_t  egress_port;
    bit<7>  _pad;
}

header ethernet_t {
    mac_t   dst_addr;
    mac_t   src_addr;
    bit<16> ether_type;
}

header ipv4_t {
    bit<4>  version;
    bit<4>  ihl;
    bit<8>  diffserv;
    bit<16> total_len;
    bit<16> identification;
    bit<3>  flags;
    bit<13> frag_offset;
    bit<8>  ttl;
    bit<8>  protocol;
    bit<16> hdr_checksum;
    bit<32> src_addr;
    bit<32> dst_addr;
}

// Sent to the controller (P4Runtime DigestList) for frames of ethertype 0x88B6, a stand-in
// for "unknown source, please learn".
struct mac_learn_t {
    mac_t  src_addr;
    port_t ingress_port;
}

struct headers_t {
    packet_out_t packet_out;
    packet_in_t  packet_in;
    ethernet_t   ethernet;
    ipv4_t       ipv4;
}

struct metadata_t {
    bool forwarded;  // set by every action that picks an output; else the frame is dropped
    bit<2> color;    // rx_meter's verdict: V1MODEL_METER_COLOR_RED (2) drops
}

parser FwdParser(packet_in packet, out headers_t hdr, inout metadata_t meta,
                 inout standard_metadata_t standard_metadata) {
    state start {
        transition select(standard_metadata.ingress_port) {
            CPU_PORT: parse_packet_out;
            default: parse_ethernet;
        }
    }
    state parse_packet_out {
        packet.extract(hdr.packet_out);
        transition parse_ethernet;
    }
    state parse_ethernet {
        packet.extract(hdr.ethernet);
        transition select(hdr.ethernet.ether_type) {
            0x0800: parse_ipv4;
            default: accept;
        }
    }
    state parse_ipv4 {
        packet.extract(hdr.ipv4);
        transition accept;
    }
}

control FwdVerifyChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply { }
}

control FwdIngress(inout headers_t hdr, inout metadata_t meta,
                   inout standard_metadata_t standard_metadata) {
    direct_counter(CounterType.packets_and_bytes) l2_counter;
    counter(512, CounterType.packets_and_bytes) rx_port_counter;
    register<bit<48>>(16) last_src_mac;
    meter(16, MeterType.packets) rx_meter;  // per ingress port; unconfigured = all GREEN

    action drop() {
        mark_to_drop(standard_metadata);
    }
    action forward(port_t port) {
        standard_metadata.egress_spec = port;
        meta.forwarded = true;
    }
    action send_to_cpu() {
        standard_metadata.egress_spec = CPU_PORT;
        hdr.packet_in.setValid();
        hdr.packet_in.ingress_port = standard_metadata.ingress_port;
        hdr.packet_in._pad = 0;
        meta.forwarded = true;
    }
    action flood(bit<16> group) {
        standard_metadata.mcast_grp = group;
        meta.forwarded = true;
    }
    action route(port_t port, mac_t next_hop) {
        standard_metadata.egress_spec = port;
        hdr.ethernet.src_addr = hdr.ethernet.dst_addr;
        hdr.ethernet.dst_addr = next_hop;
        hdr.ipv4.ttl = hdr.ipv4.ttl - 1;
        meta.forwarded = true;
    }

    table l2_fwd {
        key = { hdr.ethernet.dst_addr: exact @name("dst_mac"); }
        actions = { forward; send_to_cpu; flood; drop; @defaultonly NoAction; }
        default_action = NoAction();
        counters = l2_counter;
        size = 1024;
    }
    table ipv4_lpm {
        key = { hdr.ipv4.dst_addr: lpm @name("ipv4_dst"); }
        actions = { route; drop; NoAction; }
        default_action = NoAction();
        size = 1024;
        support_timeout = true;  // routes age: P4Runtime idle timeouts
    }
    table acl {
        key = {
            hdr.ethernet.ether_type: ternary @name("ether_type");
            standard_metadata.ingress_port: optional @name("in_port");
        }
        actions = { drop; NoAction; }
        default_action = NoAction();
        size = 256;
    }

    apply {
        rx_port_counter.count((bit<32>) standard_metadata.ingress_port);
        if (hdr.packet_out.isValid()) {
            standard_metadata.egress_spec = hdr.packet_out.egress_port;
            hdr.packet_out.setInvalid();
            exit;
        }
        last_src_mac.write((bit<32>) standard_metadata.ingress_port[3:0], hdr.ethernet.src_addr);
        rx_meter.execute_meter((bit<32>) standard_metadata.ingress_port[3:0], meta.color);
        if (hdr.ethernet.ether_type == 0x88B6) {
            digest<mac_learn_t>(1, { hdr.ethernet.src_addr, standard_metadata.ingress_port });
        }
        if (meta.color == 2) {
            mark_to_drop(standard_metadata);
            exit;
        }
        meta.forwarded = false;
        if (hdr.ipv4.isValid() && hdr.ipv4.ttl > 1) {
            ipv4_lpm.apply();
        }
        l2_fwd.apply();
        acl.apply();
        if (!meta.forwarded) {
            mark_to_drop(standard_metadata);
        }
    }
}

control FwdEgress(inout headers_t hdr, inout metadata_t meta,
                  inout standard_metadata_t standard_metadata) {
    apply { }
}

control FwdComputeChecksum(inout headers_t hdr, inout metadata_t meta) {
    apply {
        update_checksum(
            hdr.ipv4.isValid(),
            { hdr.ipv4.version, hdr.ipv4.ihl, hdr.ipv4.diffserv, hdr.ipv4.total_len,
              hdr.ipv4.identification, hdr.ipv4.flags, hdr.ipv4.frag_offset, hdr.ipv4.ttl,
              hdr.ipv4.protocol, hdr.ipv4.src_addr, hdr.ipv4.dst_addr },
            hdr.ipv4.hdr_checksum,
            HashAlgorithm.csum16);
    }
}

control FwdDeparser(packet_out packet, in headers_t hdr) {
    apply {
        packet.emit(hdr.packet_in);
        packet.emit(hdr.ethernet);
        packet.emit(hdr.ipv4);
    }
}

V1Switch(FwdParser(), FwdVerifyChecksum(), FwdIngress(), FwdEgress(), FwdComputeChecksum(),
         FwdDeparser()) main;
