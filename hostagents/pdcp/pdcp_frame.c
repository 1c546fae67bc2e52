/* SPDX-License-Identifier: Apache-2.0
 *
 * Parser of the DC-leg frame format; see pdcp_frame.h.
 */
#include <string.h>

#include "pdcp_frame.h"

#define DC_BIT 0x80u
#define ETHERTYPE_MIN 0x0600u /* below: an 802.3 length field, not an ethertype */

static inline uint16_t be16(const uint8_t *p) { return (uint16_t)((p[0] << 8) | p[1]); }

enum pdcp_frame_kind pdcp_frame_parse(const uint8_t *frame, size_t len, unsigned int sn_bits,
				      struct pdcp_frame_info *info)
{
	const unsigned int pdcp_hdr_len = sn_bits == 12 ? 2u : 3u;
	const uint8_t *pdcp = frame + PDCP_ETH_HDR_LEN;
	uint16_t inner_type;

	if (len < PDCP_ETH_HDR_LEN || be16(frame + PDCP_ETH_ADDRS_LEN) != PDCP_ETHERTYPE)
		return PDCP_FRAME_PASSTHROUGH;
	if (len < PDCP_ETH_HDR_LEN + pdcp_hdr_len + PDCP_INNER_TYPE_LEN)
		return PDCP_FRAME_TRUNCATED;
	if ((pdcp[0] & DC_BIT) == 0)
		return PDCP_FRAME_CONTROL_PDU;
	inner_type = be16(pdcp + pdcp_hdr_len);
	if (inner_type < ETHERTYPE_MIN || inner_type == PDCP_ETHERTYPE)
		return PDCP_FRAME_BAD_INNER_TYPE;
	if (len == PDCP_ETH_HDR_LEN + pdcp_hdr_len + PDCP_INNER_TYPE_LEN)
		return PDCP_FRAME_EMPTY_SDU;

	/* 6.2.2.1 (12-bit SN): D/C | R R R | SN[11:8], SN[7:0].
	 * 6.2.2.2 (18-bit SN): D/C | R R R R R | SN[17:16], SN[15:8], SN[7:0]. */
	if (sn_bits == 12)
		info->sn = ((uint32_t)(pdcp[0] & 0x0Fu) << 8) | pdcp[1];
	else
		info->sn = ((uint32_t)(pdcp[0] & 0x03u) << 16) | ((uint32_t)pdcp[1] << 8) | pdcp[2];
	info->inner_type = inner_type;
	/* The outer ethertype and the PDCP header go; the inner ethertype takes their place. */
	info->strip_len = (uint16_t)(2u + pdcp_hdr_len);
	return PDCP_FRAME_DATA;
}

void pdcp_frame_strip(uint8_t *frame, const struct pdcp_frame_info *info)
{
	memmove(frame + info->strip_len, frame, PDCP_ETH_ADDRS_LEN);
}

const char *pdcp_frame_kind_name(enum pdcp_frame_kind kind)
{
	switch (kind) {
	case PDCP_FRAME_DATA:
		return "data";
	case PDCP_FRAME_PASSTHROUGH:
		return "passthrough";
	case PDCP_FRAME_TRUNCATED:
		return "truncated";
	case PDCP_FRAME_CONTROL_PDU:
		return "control_pdu";
	case PDCP_FRAME_BAD_INNER_TYPE:
		return "bad_inner_ethertype";
	case PDCP_FRAME_EMPTY_SDU:
		return "empty_sdu";
	case PDCP_FRAME_KIND_COUNT:
		break;
	}
	return "unknown";
}
