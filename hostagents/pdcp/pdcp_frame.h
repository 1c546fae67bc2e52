/* SPDX-License-Identifier: Apache-2.0
 *
 * The DC-leg frame format (DESIGN.md section 3): Ethernet with ethertype 0x88B5, a PDCP
 * Data PDU header of TS 38.323 section 6.2.2 (12- or 18-bit SN), the inner ethertype,
 * then the original L3 packet. Parsing and stripping work in place on the frame bytes.
 */
#ifndef PDCP_FRAME_H
#define PDCP_FRAME_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define PDCP_ETHERTYPE 0x88B5u /* IEEE 802 local experimental ethertype 1 */
#define PDCP_ETH_HDR_LEN 14u
#define PDCP_ETH_ADDRS_LEN 12u /* dst + src MAC */
#define PDCP_INNER_TYPE_LEN 2u

/* What a frame is, and for a malformed one, why. */
enum pdcp_frame_kind {
	PDCP_FRAME_DATA = 0,	/* a PDCP Data PDU: sn and strip_len are valid */
	PDCP_FRAME_PASSTHROUGH, /* not ethertype 0x88B5 (ARP, SC traffic): forward as is */
	/* malformed reasons (0x88B5 frames that cannot be delivered) */
	PDCP_FRAME_TRUNCATED,	   /* shorter than Ethernet + PDCP header + inner ethertype */
	PDCP_FRAME_CONTROL_PDU,	   /* D/C bit 0: a PDCP Control PDU, not handled here */
	PDCP_FRAME_BAD_INNER_TYPE, /* inner ethertype < 0x0600 (a length) or 0x88B5 again */
	PDCP_FRAME_EMPTY_SDU,	   /* no L3 bytes after the inner ethertype */
	PDCP_FRAME_KIND_COUNT
};

#define PDCP_FRAME_FIRST_MALFORMED PDCP_FRAME_TRUNCATED

struct pdcp_frame_info {
	uint32_t sn;
	uint16_t inner_type; /* host order */
	uint16_t strip_len;  /* bytes to remove after the MAC addresses (5 or 4) */
};

/* Classify `frame` (len bytes, starting at the destination MAC). For PDCP_FRAME_DATA,
 * fills *info. The R bits are ignored, as 38.323 section 6.3.1 tells a receiver. */
enum pdcp_frame_kind pdcp_frame_parse(const uint8_t *frame, size_t len, unsigned int sn_bits,
				      struct pdcp_frame_info *info);

/* Turn a parsed data frame into a plain Ethernet frame without copying the payload: the
 * 12 MAC address bytes move forward by strip_len, so the inner ethertype becomes the
 * ethertype. The frame then starts at frame + strip_len, len - strip_len bytes long. */
void pdcp_frame_strip(uint8_t *frame, const struct pdcp_frame_info *info);

/* Stats key of a frame kind ("truncated", "control_pdu", ...). */
const char *pdcp_frame_kind_name(enum pdcp_frame_kind kind);

#ifdef __cplusplus
}
#endif

#endif /* PDCP_FRAME_H */
