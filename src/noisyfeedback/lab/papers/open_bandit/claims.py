"""open-bandit's claims: results -> claims, each with its threshold beside it."""

from __future__ import annotations

import pandas as pd

from ...recipes import Claim

#: a corrected estimator is "unbiased for the clean estimate" within this many standard errors of the
#: mean over draws; the plain one is "biased" beyond it
BIAS_SES = 4.0

#: the estimators whose bootstrap interval is judged (DM's carries its model's variance, not its bias)
JUDGED = ("IPS", "SNIPS", "DR (ridge)")


def make_claims(est: pd.DataFrame, flips: pd.DataFrame) -> list[Claim]:
    """What the run supports, each judged: per campaign, do the intervals cover the on-policy rate (and
    which estimator came closest, not judged: one log, one number); per flip setting, is corrected IPS
    unbiased for the clean estimate and plain IPS not."""
    out = []
    for camp, allc in est.groupby("campaign", sort=False):
        judged = allc[allc["estimator"].isin(JUDGED)]
        cov = int(judged["covers on-policy"].sum())
        out.append(Claim(f"IPS, SNIPS and DR: the 95 % interval from the random log covers BTS's on-policy "
                         f"click rate ('{camp}')", "the check of [1]: off-policy estimates near the on-policy rate",
                         f"{cov} of {len(judged)} cover", bool(len(judged) and cov == len(judged)),
                         "DM not judged: its interval carries the reward model's sampling error but not "
                         "its bias"))
        best = allc.loc[allc["relative error"].idxmin()]
        out.append(Claim(f"Smallest relative error on the whole log ('{camp}')", "—",
                         f"{best['estimator']}: {best['relative error']:.3f}", None,
                         "one log, one number: the bootstrap table shows the spread"))
    for (r0, r1), g in flips.groupby(["rho0", "rho1"], sort=False):
        ips_p = g[(g["estimator"] == "IPS") & (g["version"] == "plain")].iloc[0]
        ips_c = g[(g["estimator"] == "IPS") & (g["version"] == "corrected")].iloc[0]
        ok = abs(ips_c["bias vs clean (SEs)"]) < BIAS_SES and abs(ips_p["bias vs clean (SEs)"]) > BIAS_SES
        out.append(Claim(f"Flips (ρ0, ρ1) = ({r0}, {r1}): corrected IPS is unbiased for the clean estimate, "
                         "plain IPS is not", "E[h(r̃) | r] = r",
                         f"bias vs clean: plain {ips_p['bias vs clean']:+.5f} "
                         f"({ips_p['bias vs clean (SEs)']:+.1f} SE), "
                         f"corrected {ips_c['bias vs clean']:+.5f} ({ips_c['bias vs clean (SEs)']:+.1f} SE)", bool(ok),
                         f"sd of one corrected estimate {ips_c['sd over draws']:.5f} "
                         f"vs plain {ips_p['sd over draws']:.5f}"))
    return out


def claims(results: dict, ctx) -> list[Claim]:
    return make_claims(results["est"], results["flips"])
