// Sizes, constants and compile-time profiles of the PDCP splitter.
// Everything a controller or a test needs to agree on is here, UPPER_CASE.
#ifndef DC_DEFINES_P4
#define DC_DEFINES_P4

// PDCP SN length (3GPP TS 38.323 section 6.2.2): 18 bits by default, 12 bits with
// -D PDCP_SN_12. The reserved bits fill the header up to whole octets.
#ifdef PDCP_SN_12
#define PDCP_SN_WIDTH 12
#define PDCP_R_WIDTH 3
#else
#define PDCP_SN_WIDTH 18
#define PDCP_R_WIDTH 5
#endif // PDCP_SN_12

typedef bit<48> mac_addr_t;
typedef bit<32> ipv4_addr_t;
typedef bit<128> ipv6_addr_t;
typedef bit<PDCP_SN_WIDTH> pdcp_sn_t;
typedef bit<16> user_idx_t;     // index into the per-user registers and counter
typedef bit<16> batch_size_t;   // B and k (packets per batch, packets on leg A)
typedef bit<32> session_id_t;   // changes when a user index is (re)assigned

const bit<16> ETHERTYPE_IPV4 = 0x0800;
const bit<16> ETHERTYPE_IPV6 = 0x86DD;
// No ETHERTYPE_ARP: ARP (0x0806) is matched by an l2_forwards entry the controller writes
// (controlplane/splitter.py), never by the program; p4c --Werror rejects an unused constant.
const bit<16> ETHERTYPE_PDCP = 0x88B5;  // IEEE 802 local experimental ethertype 1

const bit<8> IP_PROTO_TCP = 6;
const bit<8> IP_PROTO_UDP = 17;

const bit<1> PDCP_DATA_PDU = 1;         // D/C bit: 1 = data PDU

// What the per-user table decided for a packet (local_metadata.dc_mode).
const bit<2> DC_MODE_NONE  = 0;         // not a user's downlink: port forwarding
const bit<2> DC_MODE_SPLIT = 1;
const bit<2> DC_MODE_DUP   = 2;
const bit<2> DC_MODE_SC    = 3;

// Leg feedback and credit (-D DC_ADAPTIVE): p4src/README.md, "Leg feedback frames".
#ifdef DC_ADAPTIVE
const bit<1> PDCP_CONTROL_PDU = 0;      // D/C bit: 0 = control PDU (a leg feedback report)
const bit<3> PDCP_PDU_DC_FEEDBACK = 7;  // a PDU type TS 38.323 reserves: ours, not 3GPP's
#define CPU_PORT 255                    // PacketIn: simple_switch_grpc / p4sim --cpu-port 255
// A leg whose last report is older than this (5 report periods of 10 ms: a software switch
// may hold reports back for tens of ms) is not live for the fallback rule; its credit still
// counts until spent. -D FEEDBACK_STALE_US=N overrides.
#ifndef FEEDBACK_STALE_US
#define FEEDBACK_STALE_US 50000
#endif // FEEDBACK_STALE_US
#define FEEDBACK_USERS_SIZE 2048        // (leg port, user) pairs
#define DEAD_LEG_PROBE_EVERY 64         // a dead leg gets 1 packet in 64 (a power of 2)
#endif // DC_ADAPTIVE

// Table and register sizes.
#define MAX_USERS 1024
#define MAX_PORTS 512                   // v1model ports are bit<9>
#define L2_FORWARDS_SIZE 256
#define EGRESS_MACS_SIZE 64

#endif // DC_DEFINES_P4
