// SPDX-License-Identifier: GPL-2.0
/*
 * vsmfs tracepoints: the definitions generated from trace.h.
 */
#define CREATE_TRACE_POINTS
#include "trace.h"
