/*
 * What the report writers of src/sim/report share (report.h is the public
 * side): the seeds block of the table, and the HTML style (colours, dashes,
 * legend, the per-policy bar chart) that report_html.c and report_bars.c both
 * use.
 */
#ifndef RUBICK_SIM_REPORT_INTERNAL_H
#define RUBICK_SIM_REPORT_INTERNAL_H

#include "rubick/report.h"

#include <stdio.h>

/* The table's block of seed intervals (nothing without --seeds). 0 or RK_EINVAL. */
int report_seeds_table(FILE *f, const struct rk_report *r);

/* Line style of policy i: 20 distinct (colour, dash) pairs, then repeated. */
const char *report_colour(int i);
const char *report_dash(int i); /* an SVG stroke-dasharray, "" = solid */

/* Text with HTML's five special characters escaped; NULL prints nothing. */
void report_put_escaped(FILE *f, const char *s);

/*
 * A legend column for every run at x (to the right of the plot area, so it
 * never covers data), from y downwards; `bars` = 1 draws swatches, else lines.
 */
void report_legend(FILE *f, const struct rk_report *r, double x, double y, int bars);

/* The per-policy bar chart of avg JCT, p99 and makespan (report_bars.c). RK_ENOMEM. */
int report_chart_bars(FILE *f, const struct rk_report *r);

#endif
