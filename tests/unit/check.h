/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The check macro of the user-space unit tests: counts checks and
 * failures, prints each failure with its place, and gives up after 20.
 */
#ifndef _VSMFS_UNIT_CHECK_H
#define _VSMFS_UNIT_CHECK_H

#include <stdio.h>
#include <stdlib.h>

static int failures, checks;

#define CHECK(cond, ...) do {						\
	checks++;							\
	if (!(cond)) {							\
		failures++;						\
		printf("FAIL %s:%d: ", __FILE__, __LINE__);		\
		printf(__VA_ARGS__);					\
		printf("\n");						\
		if (failures > 20)					\
			exit(1);					\
	}								\
} while (0)

#endif /* _VSMFS_UNIT_CHECK_H */
