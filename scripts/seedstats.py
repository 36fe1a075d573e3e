"""Mean and 95% Student t interval over seeds, for the evaluation scripts' tables: the
same statistics as rubick's own reports (src/sim/report/report_seeds.c, rk_report_t975),
so a script's "± h" and `rubick sim --seeds`' agree.

    PYTHONPATH=scripts python3 -c 'from seedstats import stat, fig; print(fig([1, 2, 3], "%.1f"))'
"""
import math

# t(0.975, df) for df = 1..30; beyond, the Cornish-Fisher expansion report_seeds.c uses.
_T975 = [12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179,
         2.160, 2.145, 2.131, 2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064,
         2.060, 2.056, 2.052, 2.048, 2.045, 2.042]


def t975(df):
    """The two-sided 95% Student t quantile for df >= 1 degrees of freedom."""
    if df <= len(_T975):
        return _T975[df - 1]
    z, v = 1.959963984540054, float(df)
    g1 = (z ** 3 + z) / 4
    g2 = (5 * z ** 5 + 16 * z ** 3 + 3 * z) / 96
    g3 = (3 * z ** 7 + 19 * z ** 5 + 17 * z ** 3 - 15 * z) / 384
    return z + g1 / v + g2 / v ** 2 + g3 / v ** 3


def stat(v):
    """(mean, half-width of the 95% interval) of the values v; the half-width is None
    for a single value."""
    m = sum(v) / len(v)
    if len(v) < 2:
        return m, None
    sd = math.sqrt(sum((x - m) ** 2 for x in v) / (len(v) - 1))
    return m, t975(len(v) - 1) * sd / math.sqrt(len(v))


def fig(v, fmt, hfmt=None, unit=""):
    """'mean ± half-width' of v, each printed with fmt (the half-width with hfmt when
    given) and followed by unit; just the mean for a single value."""
    m, h = stat(v)
    text = (fmt % m) + unit
    return text if h is None else text + " ± " + ((hfmt or fmt) % h) + unit
