// SPDX-License-Identifier: GPL-2.0
/* Table-driven CRC-32C (Castagnoli, reflected polynomial 0x82f63b78). */
#include <linux/crc32c.h>

static uint32_t table[256];

static void crc32c_init(void)
{
	uint32_t i, j, c;

	for (i = 0; i < 256; i++) {
		c = i;
		for (j = 0; j < 8; j++)
			c = (c >> 1) ^ (c & 1 ? 0x82f63b78U : 0);
		table[i] = c;
	}
}

uint32_t crc32c(uint32_t crc, const void *address, unsigned int length)
{
	const unsigned char *p = address;

	if (!table[1])
		crc32c_init();
	while (length--)
		crc = table[(crc ^ *p++) & 0xff] ^ (crc >> 8);
	return crc;
}
