/* Tofino 2 device types and constants (p4sim's subset of the published tofino2_specs.p4). */
#ifndef _TOFINO2_P4_SPECS_
#define _TOFINO2_P4_SPECS_

#include <core.p4>

#define PORT_ID_WIDTH                  9
typedef bit<PORT_ID_WIDTH>             PortId_t;
#define MULTICAST_GROUP_ID_WIDTH       16
typedef bit<MULTICAST_GROUP_ID_WIDTH>  MulticastGroupId_t;
#define QUEUE_ID_WIDTH                 7
typedef bit<QUEUE_ID_WIDTH>            QueueId_t;
#define MIRROR_TYPE_WIDTH              4
typedef bit<MIRROR_TYPE_WIDTH>         MirrorType_t;
#define MIRROR_ID_WIDTH                8
typedef bit<MIRROR_ID_WIDTH>           MirrorId_t;
#define RESUBMIT_TYPE_WIDTH            3
typedef bit<RESUBMIT_TYPE_WIDTH>       ResubmitType_t;
#define DIGEST_TYPE_WIDTH              3
typedef bit<DIGEST_TYPE_WIDTH>         DigestType_t;
#define REPLICATION_ID_WIDTH           16
typedef bit<REPLICATION_ID_WIDTH>      ReplicationId_t;
#define L1_EXCLUSION_ID_WIDTH          16
typedef bit<L1_EXCLUSION_ID_WIDTH>     L1ExclusionId_t;
#define L2_EXCLUSION_ID_WIDTH          9
typedef bit<L2_EXCLUSION_ID_WIDTH>     L2ExclusionId_t;

typedef error ParserError_t;

// The port-metadata prefix the ingress parser skips (or unpacks) after ig_intr_md.
const bit<32> PORT_METADATA_SIZE = 32w192;

#endif
