/*
 * `rubick model validate` statistics and output (text and JSON); see
 * model_validate.h.
 */
#include "cli/model_validate.h"

#include <stdlib.h>
#include <string.h>

static const char *const family_names[RK_VF_N] = {"dp-single-node", "dp-multi-node", "3d"};

static int cmp_dbl(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

void rk_validate_stats(const struct rk_validate *v, const char *dataset, int family,
		       struct rk_validate_stats *out)
{
	memset(out, 0, sizeof(*out));
	double *a = malloc(sizeof(double) * (size_t)(v->n_rows ? v->n_rows : 1));
	if (!a)
		return;
	int n = 0;
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (dataset && strcmp(r->dataset, dataset))
			continue;
		if (r->train)
			continue;
		if (family >= 0 && (r->skipped || r->family != family))
			continue;
		out->rows++;
		if (r->skipped) {
			out->skipped++;
			continue;
		}
		a[n++] = r->ape;
	}
	out->predicted = n;
	if (n) {
		qsort(a, (size_t)n, sizeof(double), cmp_dbl);
		double sum = 0;
		int w10 = 0, w20 = 0;
		for (int i = 0; i < n; i++) {
			sum += a[i];
			w10 += a[i] <= 0.10;
			w20 += a[i] <= 0.20;
		}
		out->mape = sum / n;
		out->median_ape = n % 2 ? a[n / 2] : 0.5 * (a[n / 2 - 1] + a[n / 2]);
		out->max_ape = a[n - 1];
		out->within_10pct = (double)w10 / n;
		out->within_20pct = (double)w20 / n;
	}
	free(a);
}

static void stats_line(FILE *out, const char *label, const struct rk_validate_stats *s)
{
	if (!s->predicted) {
		fprintf(out, "  %-16s %5d %5d %5d        -        -        -      -      -\n", label,
			s->rows, 0, s->skipped);
		return;
	}
	fprintf(out, "  %-16s %5d %5d %5d %7.1f%% %7.1f%% %7.1f%% %5.1f%% %5.1f%%\n", label,
		s->rows, s->predicted, s->skipped, 100 * s->mape, 100 * s->median_ape,
		100 * s->max_ape, 100 * s->within_10pct, 100 * s->within_20pct);
}

static const char *stats_head =
	"  %-16s  rows  pred  skip     MAPE   median      max   <=10%%  <=20%%\n";

static void pct(FILE *out, double m)
{
	if (m < 0)
		fprintf(out, " %8s", "-");
	else
		fprintf(out, " %7.1f%%", 100 * m);
}

/* Before/after table of --calibrate-internode loo. */
static void print_calibration(const struct rk_validate *v, FILE *out)
{
	fprintf(out, "\ninter-node calibration (leave one model out, strict protocol):\n");
	fprintf(out, "  %-16s %9s %5s %9s %9s %9s %9s\n", "model", "B_eff", "rows", "all", "all",
		"multi", "multi");
	fprintf(out, "  %-16s %9s %5s %9s %9s %9s %9s\n", "", "GB/s", "used", "before", "after",
		"before", "after");
	for (int i = 0; i < v->n_fits; i++) {
		const struct rk_validate_fit *f = &v->fits[i];
		if (f->calibrated)
			fprintf(out, "  %-16s %9.3f %5d", f->dataset, f->cal_gbps, f->cal_rows);
		else
			fprintf(out, "  %-16s %9s %5d", f->dataset, "nominal", 0);
		pct(out, rk_validate_mape(v, f->dataset, -1, 0, 1));
		pct(out, rk_validate_mape(v, f->dataset, -1, 0, 0));
		pct(out, rk_validate_mape(v, f->dataset, -1, 1, 1));
		pct(out, rk_validate_mape(v, f->dataset, -1, 1, 0));
		fputc('\n', out);
	}
	for (int fam = 0; fam < RK_VF_N; fam++) {
		fprintf(out, "  %-16s %9s %5s", family_names[fam], "", "");
		pct(out, rk_validate_mape(v, NULL, fam, 0, 1));
		pct(out, rk_validate_mape(v, NULL, fam, 0, 0));
		pct(out, rk_validate_mape(v, NULL, fam, 1, 1));
		pct(out, rk_validate_mape(v, NULL, fam, 1, 0));
		fputc('\n', out);
	}
	fprintf(out, "  %-16s %9s %5s", "all", "", "");
	pct(out, rk_validate_mape(v, NULL, -1, 0, 1));
	pct(out, rk_validate_mape(v, NULL, -1, 0, 0));
	pct(out, rk_validate_mape(v, NULL, -1, 1, 1));
	pct(out, rk_validate_mape(v, NULL, -1, 1, 0));
	fputc('\n', out);
	fprintf(out, "  (the tables above are after calibration; B_eff 'nominal': no other "
		     "model's multi-node row to fit from)\n");
}

void rk_validate_print_text(const struct rk_validate *v, FILE *out)
{
	struct rk_validate_stats s;
	for (int i = 0; i < v->n_fits; i++) {
		const struct rk_validate_fit *f = &v->fits[i];
		const struct rk_perf_params *k = &f->fit.k;
		fprintf(out, "fit %s: model %s (samples of %s, %d samples, objective %.4f)\n",
			f->dataset, f->target, f->source[0] ? f->source : f->target,
			f->fit.n_samples, f->fit.objective);
		fprintf(out,
			"  perf_k_bwd = %.6g\n  perf_k_sync = %.6g\n  perf_k_opt = %.6g\n"
			"  perf_k_os_offload = %.6g\n  perf_k_const = %.6g\n  perf_k_off = %.6g\n"
			"  perf_k_swap = %.6g\n  perf_fwd_fixed_ms = %.6g\n  fwd_ms = %.6g\n",
			k->k_bwd, k->k_sync, k->k_opt, k->k_os_offload, k->k_const, k->k_off,
			k->k_swap, k->fwd_fixed_ms, f->fwd_ms);
		for (int j = 0; j < f->n_notes; j++)
			fprintf(out, "  note: %s\n", f->notes[j]);
	}
	fprintf(out, "\nper model:\n");
	fprintf(out, stats_head, "model");
	for (int i = 0; i < v->n_fits; i++) {
		rk_validate_stats(v, v->fits[i].dataset, -1, &s);
		stats_line(out, v->fits[i].dataset, &s);
	}
	fprintf(out, "\nper plan family:\n");
	fprintf(out, stats_head, "family");
	for (int fam = 0; fam < RK_VF_N; fam++) {
		rk_validate_stats(v, NULL, fam, &s);
		stats_line(out, family_names[fam], &s);
	}
	rk_validate_stats(v, NULL, -1, &s);
	fprintf(out, "\noverall:\n");
	fprintf(out, stats_head, "");
	stats_line(out, "all", &s);
	if (v->calibrated)
		print_calibration(v, out);
	int first = 1;
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (!r->skipped)
			continue;
		if (first)
			fprintf(out, "\nskipped rows:\n");
		first = 0;
		fprintf(out, "  %s line %d (%s on %s): %s\n", r->dataset, r->line, r->plan,
			r->placement, r->reason);
	}
	first = 1;
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (r->skipped || r->train || r->ape <= 0.5)
			continue;
		if (first)
			fprintf(out, "\nrows off by more than 50%% (listed, still scored):\n");
		first = 0;
		fprintf(out, "  %s line %d (%s on %s): measured %.1f ms, predicted %.1f ms (%.0f%%)\n",
			r->dataset, r->line, r->plan, r->placement, r->meas_ms, r->pred_ms,
			100 * r->ape);
	}
}

static void json_str(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char c = (unsigned char)*s;
		if (c == '"' || c == '\\')
			fprintf(out, "\\%c", c);
		else if (c < 0x20)
			fprintf(out, "\\u%04x", c);
		else
			fputc(c, out);
	}
	fputc('"', out);
}

static void json_mape(FILE *out, const char *key, double m)
{
	if (m < 0)
		fprintf(out, "\"%s\":null", key);
	else
		fprintf(out, "\"%s\":%.6f", key, m);
}

/* {"mape_before":..,"mape_after":..,"multi_node_mape_before":..,..} */
static void json_cal(FILE *out, const struct rk_validate *v, const char *dataset, int family)
{
	json_mape(out, "mape_before", rk_validate_mape(v, dataset, family, 0, 1));
	fputc(',', out);
	json_mape(out, "mape_after", rk_validate_mape(v, dataset, family, 0, 0));
	fputc(',', out);
	json_mape(out, "multi_node_mape_before", rk_validate_mape(v, dataset, family, 1, 1));
	fputc(',', out);
	json_mape(out, "multi_node_mape_after", rk_validate_mape(v, dataset, family, 1, 0));
}

static void json_calibration(FILE *out, const struct rk_validate *v)
{
	fprintf(out, ",\"calibration\":{\"mode\":\"loo\",");
	json_cal(out, v, NULL, -1);
	fprintf(out, ",\"models\":{");
	for (int i = 0; i < v->n_fits; i++) {
		const struct rk_validate_fit *f = &v->fits[i];
		fprintf(out, "%s", i ? "," : "");
		json_str(out, f->dataset);
		fputs(":{\"gbps\":", out);
		if (f->calibrated)
			fprintf(out, "%.6g", f->cal_gbps);
		else
			fputs("null", out);
		fprintf(out, ",\"rows_used\":%d,", f->calibrated ? f->cal_rows : 0);
		json_cal(out, v, f->dataset, -1);
		fputc('}', out);
	}
	fprintf(out, "},\"families\":{");
	for (int fam = 0; fam < RK_VF_N; fam++) {
		fprintf(out, "%s\"%s\":{", fam ? "," : "", family_names[fam]);
		json_cal(out, v, NULL, fam);
		fputc('}', out);
	}
	fprintf(out, "}}");
}

static void json_stats(FILE *out, const struct rk_validate_stats *s)
{
	fprintf(out,
		"{\"rows\":%d,\"predicted\":%d,\"skipped\":%d,\"mape\":%.6f,\"median_ape\":%.6f,"
		"\"max_ape\":%.6f,\"within_10pct\":%.6f,\"within_20pct\":%.6f}",
		s->rows, s->predicted, s->skipped, s->mape, s->median_ape, s->max_ape,
		s->within_10pct, s->within_20pct);
}

void rk_validate_print_json(const struct rk_validate *v, FILE *out)
{
	struct rk_validate_stats s;
	rk_validate_stats(v, NULL, -1, &s);
	fprintf(out,
		"{\"rows\":%d,\"predicted\":%d,\"skipped\":%d,\"mape\":%.6f,\"median_ape\":%.6f,"
		"\"max_ape\":%.6f,\"within_10pct\":%.6f,\"within_20pct\":%.6f",
		s.rows, s.predicted, s.skipped, s.mape, s.median_ape, s.max_ape, s.within_10pct,
		s.within_20pct);
	fprintf(out, ",\"families\":{");
	for (int fam = 0; fam < RK_VF_N; fam++) {
		rk_validate_stats(v, NULL, fam, &s);
		fprintf(out, "%s\"%s\":", fam ? "," : "", family_names[fam]);
		json_stats(out, &s);
	}
	fprintf(out, "},\"models\":{");
	for (int i = 0; i < v->n_fits; i++) {
		const struct rk_validate_fit *f = &v->fits[i];
		const struct rk_perf_params *k = &f->fit.k;
		rk_validate_stats(v, f->dataset, -1, &s);
		fprintf(out, "%s", i ? "," : "");
		json_str(out, f->dataset);
		fprintf(out, ":{\"model\":");
		json_str(out, f->target);
		fprintf(out, ",\"fitted_on\":");
		json_str(out, f->source[0] ? f->source : f->target);
		fprintf(out, ",\"stats\":");
		json_stats(out, &s);
		fprintf(out,
			",\"params\":{\"k_bwd\":%.6g,\"k_sync\":%.6g,\"k_opt\":%.6g,"
			"\"k_os_offload\":%.6g,\"k_const\":%.6g,\"k_off\":%.6g,\"k_swap\":%.6g,"
			"\"fwd_fixed_ms\":%.6g,\"fwd_ms\":%.6g},\"notes\":[",
			k->k_bwd, k->k_sync, k->k_opt, k->k_os_offload, k->k_const, k->k_off,
			k->k_swap, k->fwd_fixed_ms, f->fwd_ms);
		for (int j = 0; j < f->n_notes; j++) {
			fprintf(out, "%s", j ? "," : "");
			json_str(out, f->notes[j]);
		}
		fprintf(out, "]}");
	}
	fprintf(out, "}");
	if (v->calibrated)
		json_calibration(out, v);
	fprintf(out, ",\"skipped_rows\":[");
	int first = 1;
	for (int i = 0; i < v->n_rows; i++) {
		const struct rk_validate_row *r = &v->rows[i];
		if (!r->skipped)
			continue;
		fprintf(out, "%s{\"model\":", first ? "" : ",");
		first = 0;
		json_str(out, r->dataset);
		fprintf(out, ",\"line\":%d,\"plan\":", r->line);
		json_str(out, r->plan);
		fprintf(out, ",\"placement\":");
		json_str(out, r->placement);
		fprintf(out, ",\"reason\":");
		json_str(out, r->reason);
		fprintf(out, "}");
	}
	fprintf(out, "]}\n");
}

