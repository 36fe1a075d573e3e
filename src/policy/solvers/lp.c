/*
 * Integer-programming wrapper over GLPK (binaries, bounded integers and
 * continuous variables; the
 * only file that includes glpk.h; see
 * include/rubick/lp.h and ARCHITECTURE.md "each third-party library lives
 * behind one file"). The problem is kept in our own arrays and handed to a
 * fresh glp_prob at every solve, so nothing of GLPK outlives rk_lp_solve and
 * every input is validated here before GLPK could reject it: GLPK aborts the
 * process on invalid calls, which a library must never let happen.
 */
#include "rubick/lp.h"

#include <glpk.h>
#include <limits.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

struct rk_lp {
	int n_vars;
	enum rk_lp_sense sense;
	double *obj;   /* n_vars objective coefficients */
	signed char *fixed; /* n_vars: -1 free, 0 or 1 fixed */
	int *ub;            /* n_vars: upper bound, 1 = binary */
	int *sol;           /* n_vars: last solution */
	/* Continuous variables (rk_lp_set_real): NULL until the first one. */
	unsigned char *real; /* n_vars: 1 = continuous in [rlo, rhi] */
	double *rlo, *rhi;   /* n_vars bounds (rhi may be HUGE_VAL) */
	double *xsol;        /* n_vars: last solution as doubles */
	int n_real;
	int has_sol;
	int *start;         /* n_vars: offered first incumbent, or NULL */

	/* rows in compressed form: row r holds entries row_at[r] .. row_at[r+1]-1 */
	int n_rows, cap_rows;
	int *row_at;       /* cap_rows + 1 */
	double *row_lo, *row_hi;
	int nnz, cap_nnz;
	int *col;          /* cap_nnz variable indices */
	double *val;       /* cap_nnz coefficients */
};

int rk_lp_create(struct rk_lp **out, int n_vars, enum rk_lp_sense sense, struct rk_error *err)
{
	*out = NULL;
	if (n_vars < 1)
		return rk_error_set(err, RK_EINVAL, "lp: need at least one variable, got %d", n_vars);
	if (sense != RK_LP_MINIMISE && sense != RK_LP_MAXIMISE)
		return rk_error_set(err, RK_EINVAL, "lp: unknown objective sense %d", (int)sense);
	struct rk_lp *lp = calloc(1, sizeof(*lp));
	if (!lp)
		return rk_error_set(err, RK_ENOMEM, "lp: out of memory");
	lp->n_vars = n_vars;
	lp->sense = sense;
	lp->obj = calloc((size_t)n_vars, sizeof(*lp->obj));
	lp->fixed = malloc((size_t)n_vars);
	lp->sol = calloc((size_t)n_vars, sizeof(*lp->sol));
	lp->ub = malloc((size_t)n_vars * sizeof(*lp->ub));
	lp->row_at = calloc(1, sizeof(*lp->row_at));
	if (!lp->obj || !lp->fixed || !lp->sol || !lp->ub || !lp->row_at) {
		rk_lp_destroy(lp);
		return rk_error_set(err, RK_ENOMEM, "lp: out of memory for %d variables", n_vars);
	}
	memset(lp->fixed, -1, (size_t)n_vars);
	for (int j = 0; j < n_vars; j++)
		lp->ub[j] = 1;
	*out = lp;
	return RK_OK;
}

void rk_lp_destroy(struct rk_lp *lp)
{
	if (!lp)
		return;
	free(lp->obj);
	free(lp->fixed);
	free(lp->sol);
	free(lp->real);
	free(lp->rlo);
	free(lp->rhi);
	free(lp->xsol);
	free(lp->start);
	free(lp->ub);
	free(lp->row_at);
	free(lp->row_lo);
	free(lp->row_hi);
	free(lp->col);
	free(lp->val);
	free(lp);
}

void rk_lp_thread_exit(void)
{
	glp_free_env();
}

int rk_lp_n_vars(const struct rk_lp *lp)
{
	return lp->n_vars;
}

static int check_var(const struct rk_lp *lp, int var, struct rk_error *err)
{
	if (var < 0 || var >= lp->n_vars)
		return rk_error_set(err, RK_EINVAL, "lp: variable %d out of range 0..%d", var,
				    lp->n_vars - 1);
	return RK_OK;
}

int rk_lp_set_obj(struct rk_lp *lp, int var, double coef, struct rk_error *err)
{
	int rc = check_var(lp, var, err);
	if (rc)
		return rc;
	if (!isfinite(coef))
		return rk_error_set(err, RK_EINVAL, "lp: objective coefficient of variable %d is not finite",
				    var);
	lp->obj[var] = coef;
	return RK_OK;
}

int rk_lp_fix(struct rk_lp *lp, int var, int value, struct rk_error *err)
{
	int rc = check_var(lp, var, err);
	if (rc)
		return rc;
	if (value != 0 && value != 1)
		return rk_error_set(err, RK_EINVAL, "lp: variable %d fixed to %d, must be 0 or 1", var,
				    value);
	if (lp->ub[var] != 1 || (lp->real && lp->real[var]))
		return rk_error_set(err, RK_EINVAL, "lp: variable %d is not binary, cannot fix it", var);
	lp->fixed[var] = (signed char)value;
	return RK_OK;
}

int rk_lp_set_upper(struct rk_lp *lp, int var, int ub, struct rk_error *err)
{
	int rc = check_var(lp, var, err);
	if (rc)
		return rc;
	if (ub < 1)
		return rk_error_set(err, RK_EINVAL, "lp: variable %d upper bound %d, must be >= 1", var,
				    ub);
	if (lp->fixed[var] >= 0 && ub != 1)
		return rk_error_set(err, RK_EINVAL, "lp: variable %d is fixed, cannot widen it", var);
	if (lp->real && lp->real[var])
		return rk_error_set(err, RK_EINVAL, "lp: variable %d is continuous", var);
	lp->ub[var] = ub;
	return RK_OK;
}

int rk_lp_set_real(struct rk_lp *lp, int var, double lo, double hi, struct rk_error *err)
{
	int rc = check_var(lp, var, err);
	if (rc)
		return rc;
	if (!isfinite(lo) || isnan(hi) || hi < lo)
		return rk_error_set(err, RK_EINVAL,
				    "lp: variable %d: bounds %g..%g (lo finite, hi >= lo or no bound)",
				    var, lo, hi);
	if (lp->fixed[var] >= 0)
		return rk_error_set(err, RK_EINVAL,
				    "lp: variable %d is fixed, cannot make it continuous", var);
	if (lp->start)
		return rk_error_set(err, RK_EINVAL,
				    "lp: a start is set; starts are for integer problems");
	if (!lp->real) {
		size_t n = (size_t)lp->n_vars;
		unsigned char *r = calloc(n, 1);
		double *a = calloc(n, sizeof(*a)), *b = calloc(n, sizeof(*b));
		double *x = calloc(n, sizeof(*x));
		if (!r || !a || !b || !x) {
			free(r);
			free(a);
			free(b);
			free(x);
			return rk_error_set(err, RK_ENOMEM, "lp: out of memory");
		}
		lp->real = r;
		lp->rlo = a;
		lp->rhi = b;
		lp->xsol = x;
	}
	if (!lp->real[var])
		lp->n_real++;
	lp->real[var] = 1;
	lp->rlo[var] = lo;
	lp->rhi[var] = hi;
	return RK_OK;
}

int rk_lp_set_start(struct rk_lp *lp, const int *values, struct rk_error *err)
{
	if (!values)
		return rk_error_set(err, RK_EINVAL, "lp: start solution is NULL");
	if (lp->n_real)
		return rk_error_set(err, RK_EINVAL,
				    "lp: starts are for problems without continuous variables");
	for (int j = 0; j < lp->n_vars; j++) {
		int lo = lp->fixed[j] >= 0 ? lp->fixed[j] : 0;
		int hi = lp->fixed[j] >= 0 ? lp->fixed[j] : lp->ub[j];
		if (values[j] < lo || values[j] > hi)
			return rk_error_set(err, RK_EINVAL,
					    "lp: start value %d of variable %d outside its bounds %d..%d",
					    values[j], j, lo, hi);
	}
	if (!lp->start) {
		lp->start = malloc((size_t)lp->n_vars * sizeof(*lp->start));
		if (!lp->start)
			return rk_error_set(err, RK_ENOMEM, "lp: out of memory for the start solution");
	}
	memcpy(lp->start, values, (size_t)lp->n_vars * sizeof(*values));
	return RK_OK;
}

/* Grow the row arrays so that one more row with `n` entries fits. */
static int reserve_row(struct rk_lp *lp, int n)
{
	if (lp->n_rows + 1 > lp->cap_rows) {
		int cap = lp->cap_rows ? 2 * lp->cap_rows : 16;
		int *at = realloc(lp->row_at, ((size_t)cap + 1) * sizeof(*at));
		if (!at)
			return RK_ENOMEM;
		lp->row_at = at;
		double *lo = realloc(lp->row_lo, (size_t)cap * sizeof(*lo));
		if (!lo)
			return RK_ENOMEM;
		lp->row_lo = lo;
		double *hi = realloc(lp->row_hi, (size_t)cap * sizeof(*hi));
		if (!hi)
			return RK_ENOMEM;
		lp->row_hi = hi;
		lp->cap_rows = cap;
	}
	if (n > INT_MAX - lp->nnz)
		return RK_ENOMEM;
	if (lp->nnz + n > lp->cap_nnz) {
		int cap = lp->cap_nnz ? lp->cap_nnz : 64;
		while (cap < lp->nnz + n)
			cap = cap > INT_MAX / 2 ? lp->nnz + n : 2 * cap;
		int *col = realloc(lp->col, (size_t)cap * sizeof(*col));
		if (!col)
			return RK_ENOMEM;
		lp->col = col;
		double *val = realloc(lp->val, (size_t)cap * sizeof(*val));
		if (!val)
			return RK_ENOMEM;
		lp->val = val;
		lp->cap_nnz = cap;
	}
	return RK_OK;
}

int rk_lp_add_row(struct rk_lp *lp, int n, const int *vars, const double *coefs, double lo,
		  double hi, struct rk_error *err)
{
	int row = lp->n_rows;
	if (n < 1 || !vars || !coefs)
		return rk_error_set(err, RK_EINVAL, "lp: row %d has no entries", row);
	/* RK_LP_NO_BOUND (+inf) or -inf as `lo` both mean "no lower bound". */
	int has_lo = !isinf(lo);
	int has_hi = !isinf(hi);
	if (isnan(lo) || isnan(hi) || (isinf(hi) && hi < 0))
		return rk_error_set(err, RK_EINVAL, "lp: row %d has an invalid bound", row);
	if (!has_lo && !has_hi)
		return rk_error_set(err, RK_EINVAL, "lp: row %d has neither a lower nor an upper bound",
				    row);
	if (has_lo && has_hi && lo > hi)
		return rk_error_set(err, RK_EINVAL, "lp: row %d has lower bound %g above upper bound %g",
				    row, lo, hi);
	for (int i = 0; i < n; i++) {
		if (vars[i] < 0 || vars[i] >= lp->n_vars)
			return rk_error_set(err, RK_EINVAL,
					    "lp: row %d entry %d: variable %d out of range 0..%d", row, i,
					    vars[i], lp->n_vars - 1);
		if (!isfinite(coefs[i]))
			return rk_error_set(err, RK_EINVAL, "lp: row %d entry %d: coefficient not finite",
					    row, i);
	}
	/* Duplicates would make GLPK abort; a marker array keeps the check linear. */
	unsigned char *seen = calloc((size_t)lp->n_vars, 1);
	if (!seen)
		return rk_error_set(err, RK_ENOMEM, "lp: out of memory");
	for (int i = 0; i < n; i++) {
		if (seen[vars[i]]) {
			free(seen);
			return rk_error_set(err, RK_EINVAL, "lp: row %d: variable %d appears twice", row,
					    vars[i]);
		}
		seen[vars[i]] = 1;
	}
	free(seen);
	if (reserve_row(lp, n))
		return rk_error_set(err, RK_ENOMEM, "lp: out of memory for row %d", row);
	memcpy(lp->col + lp->nnz, vars, (size_t)n * sizeof(*vars));
	memcpy(lp->val + lp->nnz, coefs, (size_t)n * sizeof(*coefs));
	lp->nnz += n;
	lp->row_lo[row] = has_lo ? lo : -HUGE_VAL;
	lp->row_hi[row] = has_hi ? hi : HUGE_VAL;
	lp->n_rows++;
	lp->row_at[lp->n_rows] = lp->nnz;
	return RK_OK;
}

/* Build the GLPK problem from our arrays; NULL if memory ran out. */
static glp_prob *build_glp(const struct rk_lp *lp)
{
	glp_prob *p = glp_create_prob();
	glp_set_obj_dir(p, lp->sense == RK_LP_MAXIMISE ? GLP_MAX : GLP_MIN);
	glp_add_cols(p, lp->n_vars);
	for (int j = 0; j < lp->n_vars; j++) {
		if (lp->real && lp->real[j]) {
			glp_set_col_kind(p, j + 1, GLP_CV);
			if (isinf(lp->rhi[j]))
				glp_set_col_bnds(p, j + 1, GLP_LO, lp->rlo[j], 0.0);
			else if (lp->rhi[j] == lp->rlo[j])
				glp_set_col_bnds(p, j + 1, GLP_FX, lp->rlo[j], lp->rlo[j]);
			else
				glp_set_col_bnds(p, j + 1, GLP_DB, lp->rlo[j], lp->rhi[j]);
		} else if (lp->ub[j] == 1) {
			glp_set_col_kind(p, j + 1, GLP_BV);
		} else {
			glp_set_col_kind(p, j + 1, GLP_IV);
			glp_set_col_bnds(p, j + 1, GLP_DB, 0.0, lp->ub[j]);
		}
		if (lp->fixed[j] >= 0)
			glp_set_col_bnds(p, j + 1, GLP_FX, lp->fixed[j], lp->fixed[j]);
		glp_set_obj_coef(p, j + 1, lp->obj[j]);
	}
	if (lp->n_rows == 0)
		return p;
	glp_add_rows(p, lp->n_rows);
	for (int r = 0; r < lp->n_rows; r++) {
		double lo = lp->row_lo[r], hi = lp->row_hi[r];
		int type;
		if (isinf(lo))
			type = GLP_UP;
		else if (isinf(hi))
			type = GLP_LO;
		else if (lo == hi)
			type = GLP_FX;
		else
			type = GLP_DB;
		glp_set_row_bnds(p, r + 1, type, isinf(lo) ? 0.0 : lo, isinf(hi) ? 0.0 : hi);
	}
	/* glp_load_matrix wants 1-based triplets. */
	int *ia = malloc(((size_t)lp->nnz + 1) * sizeof(*ia));
	int *ja = malloc(((size_t)lp->nnz + 1) * sizeof(*ja));
	double *ar = malloc(((size_t)lp->nnz + 1) * sizeof(*ar));
	if (!ia || !ja || !ar) {
		free(ia);
		free(ja);
		free(ar);
		glp_delete_prob(p);
		return NULL;
	}
	for (int r = 0; r < lp->n_rows; r++)
		for (int k = lp->row_at[r]; k < lp->row_at[r + 1]; k++) {
			ia[k + 1] = r + 1;
			ja[k + 1] = lp->col[k] + 1;
			ar[k + 1] = lp->val[k];
		}
	glp_load_matrix(p, lp->nnz, ia, ja, ar);
	free(ia);
	free(ja);
	free(ar);
	return p;
}

/*
 * Whether the start satisfies every row and bound now (fixing may have come
 * after rk_lp_set_start). GLPK takes a heuristic solution on trust and would
 * return an infeasible one as the answer, so it is checked here.
 */
static int start_feasible(const struct rk_lp *lp)
{
	for (int j = 0; j < lp->n_vars; j++)
		if (lp->fixed[j] >= 0 && lp->start[j] != lp->fixed[j])
			return 0;
	for (int r = 0; r < lp->n_rows; r++) {
		double act = 0;
		for (int k = lp->row_at[r]; k < lp->row_at[r + 1]; k++)
			act += lp->val[k] * lp->start[lp->col[k]];
		/* Integer data: a tolerance only absorbs rounding of the sums. */
		if (act < lp->row_lo[r] - 1e-9 * (1 + fabs(lp->row_lo[r])) ||
		    act > lp->row_hi[r] + 1e-9 * (1 + fabs(lp->row_hi[r])))
			return 0;
	}
	return 1;
}

/* What the branch-and-cut callback needs. */
struct tree_ctx {
	const double *start; /* 1-based column values, or NULL */
	int offered, accepted;
	int max_nodes, nodes;
};

/*
 * GLPK's callback: offer the start as incumbent at the first heuristic point
 * (a known good solution lets bounding prune from the first node instead of
 * after GLPK finds one itself), and stop at the node limit with the
 * incumbent kept.
 */
static void on_tree(glp_tree *tree, void *info)
{
	struct tree_ctx *c = info;
	if (glp_ios_reason(tree) == GLP_IHEUR && c->start && !c->offered) {
		c->offered = 1;
		c->accepted = glp_ios_heur_sol(tree, c->start) == 0;
	}
	int active, alive, total;
	glp_ios_tree_size(tree, &active, &alive, &total);
	c->nodes = total;
	if (c->max_nodes > 0 && total > c->max_nodes)
		glp_ios_terminate(tree);
}

int rk_lp_solve(struct rk_lp *lp, const struct rk_lp_opts *opts, struct rk_lp_result *res,
		struct rk_error *err)
{
	*res = (struct rk_lp_result){.status = RK_LP_NO_SOLUTION, .objective = NAN};
	lp->has_sol = 0;
	if (opts && (isnan(opts->time_limit_ms) || isnan(opts->mip_gap)))
		return rk_error_set(err, RK_EINVAL, "lp: time limit or gap is NaN");

	/* GLPK prints to stdout by default; a library must not. The switch is
	 * per-thread in GLPK 5, so restore what the caller had. */
	int prev_out = glp_term_out(GLP_OFF);
	glp_prob *p = build_glp(lp);
	if (!p) {
		glp_term_out(prev_out);
		return rk_error_set(err, RK_ENOMEM, "lp: out of memory building the solver problem");
	}

	/*
	 * The LP relaxation first, by simplex from GLPK's advanced basis: the MIP
	 * presolver is off so that the callback sees the problem's own columns
	 * (a start and the node count refer to them), and branch-and-cut then
	 * needs an optimal relaxation to begin from.
	 */
	glp_smcp sm;
	glp_init_smcp(&sm);
	sm.msg_lev = GLP_MSG_OFF;
	glp_adv_basis(p, 0);
	int lrc = glp_simplex(p, &sm);
	int lst = glp_get_status(p);
	double *start = NULL;
	struct tree_ctx ctx = {.max_nodes = opts ? opts->max_nodes : 0};
	int rc = GLP_ENOPFS;
	if (lp->n_real == lp->n_vars) {
		/* A pure LP: the simplex's answer is the answer. A numerical
		 * failure from the advanced basis is retried once with GLPK's
		 * presolver, which rescales and starts from its own basis. */
		if (lrc != 0 && lrc != GLP_ENOPFS && lrc != GLP_ENODFS) {
			sm.presolve = GLP_ON;
			glp_std_basis(p);
			lrc = glp_simplex(p, &sm);
			lst = glp_get_status(p);
		}
		int ret = RK_OK;
		if (lrc != 0 && lrc != GLP_ENOPFS && lrc != GLP_ENODFS) {
			ret = rk_error_set(err, RK_EINTERNAL, "lp: GLPK simplex failed (code %d)", lrc);
		} else if (lrc == 0 && lst == GLP_OPT) {
			res->status = RK_LP_OPTIMAL;
			res->objective = glp_get_obj_val(p);
			for (int j = 0; j < lp->n_vars; j++)
				lp->xsol[j] = glp_get_col_prim(p, j + 1);
			lp->has_sol = 1;
		} else if (lrc == GLP_ENOPFS || lst == GLP_NOFEAS) {
			res->status = RK_LP_INFEASIBLE;
		}
		glp_delete_prob(p);
		glp_term_out(prev_out);
		return ret;
	}
	if (lrc == 0 && lst == GLP_OPT) {
		if (lp->start && start_feasible(lp)) {
			start = malloc(((size_t)lp->n_vars + 1) * sizeof(*start));
			if (!start) {
				glp_delete_prob(p);
				glp_term_out(prev_out);
				return rk_error_set(err, RK_ENOMEM, "lp: out of memory for the start");
			}
			for (int j = 0; j < lp->n_vars; j++)
				start[j + 1] = lp->start[j];
			ctx.start = start;
		}
		glp_iocp parm;
		glp_init_iocp(&parm);
		parm.msg_lev = GLP_MSG_OFF;
		/* Cover and MIR cuts tighten knapsack-like capacity rows. No clique
		 * cuts: GLPK builds a conflict graph of all binaries for them at every
		 * solve (quadratic in the worst case), which dominated Sia rounds with
		 * thousands of variables, while the one-of rows they would find are
		 * already in the model. */
		parm.cov_cuts = GLP_ON;
		parm.mir_cuts = GLP_ON; /* without them the Sia rounds of philly.csv took 20x longer */
		parm.cb_func = on_tree;
		parm.cb_info = &ctx;
		if (opts && opts->mip_gap >= 0)
			parm.mip_gap = opts->mip_gap;
		if (opts && opts->time_limit_ms > 0)
			parm.tm_lim = opts->time_limit_ms >= (double)INT_MAX
					      ? INT_MAX
					      : (int)ceil(opts->time_limit_ms);
		rc = glp_intopt(p, &parm);
	} else if (lrc != 0 && lrc != GLP_ENOPFS && lrc != GLP_ENODFS) {
		rc = lrc; /* the simplex itself failed */
	}
	res->start_used = ctx.accepted;
	res->nodes = ctx.nodes;
	int st = glp_mip_status(p);
	int ret = RK_OK;
	switch (rc) {
	case 0:
	case GLP_EMIPGAP:
	case GLP_ETMLIM:
	case GLP_ESTOP:
		break;
	case GLP_ENOPFS:
	case GLP_ENODFS:
		st = GLP_NOFEAS;
		break;
	default:
		ret = rk_error_set(err, RK_EINTERNAL, "lp: GLPK failed (code %d)", rc);
		break;
	}
	if (ret == RK_OK) {
		if (st == GLP_OPT || st == GLP_FEAS) {
			res->status = (st == GLP_OPT && rc == 0) || rc == GLP_EMIPGAP ? RK_LP_OPTIMAL
										      : RK_LP_FEASIBLE;
			res->objective = glp_mip_obj_val(p);
			for (int j = 0; j < lp->n_vars; j++) {
				double x = glp_mip_col_val(p, j + 1);
				lp->sol[j] = (int)floor(x + 0.5);
				if (lp->xsol)
					lp->xsol[j] = lp->real[j] ? x : lp->sol[j];
			}
			lp->has_sol = 1;
		} else if (st == GLP_NOFEAS) {
			res->status = RK_LP_INFEASIBLE;
		} else {
			res->status = RK_LP_NO_SOLUTION;
		}
	}
	free(start);
	glp_delete_prob(p);
	glp_term_out(prev_out);
	return ret;
}

int rk_lp_value(const struct rk_lp *lp, int var)
{
	if (!lp->has_sol || var < 0 || var >= lp->n_vars)
		return 0;
	if (lp->real && lp->real[var])
		return (int)floor(lp->xsol[var] + 0.5);
	return lp->sol[var];
}

double rk_lp_value_real(const struct rk_lp *lp, int var)
{
	if (!lp->has_sol || var < 0 || var >= lp->n_vars)
		return 0;
	if (lp->xsol)
		return lp->xsol[var];
	return lp->sol[var];
}
