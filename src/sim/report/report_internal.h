/*
 * What the report writers of src/sim/report share (report.h is the public
 * side): the seeds block of the table.
 */
#ifndef RUBICK_SIM_REPORT_INTERNAL_H
#define RUBICK_SIM_REPORT_INTERNAL_H

#include "rubick/report.h"

#include <stdio.h>

/* The table's block of seed intervals (nothing without --seeds). 0 or RK_EINVAL. */
int report_seeds_table(FILE *f, const struct rk_report *r);

#endif
