"""The label-noise tables of RESULTS.md (known C; estimated C) from the CSVs of benchmarks/label_noise.py.

    python benchmarks/label_noise_report.py runs1.csv [runs2.csv ...]

"Below" (known C): the peer's mean test error exceeds ours by more than one standard error of the
difference, sqrt(se_ours² + se_peer²) (5 seeds; unpaired, so conservative); a smaller gap is a tie.
"No worse" (estimated C): mean(estimate) ≤ mean(cleanlab) + that standard error. Identifiable: the true
class keeps the largest share of its column of C (pair flips at 0.6 are not).
"""

from __future__ import annotations

import sys

import numpy as np
import pandas as pd

sys.path.insert(0, __file__.rsplit("/", 1)[0])
from label_noise import confusion, identifiable  # noqa: E402
from regression_peers import markdown  # noqa: E402

PEERS = ("UMA", "LogReg", "cleanlab")
K_OF = {"digits": 10, "toy": 10, "letter": 26}


def stats(df: pd.DataFrame) -> pd.DataFrame:
    g = df.groupby(["data", "kind", "rho", "learner"])["error"]
    return pd.DataFrame({"mean": g.mean(), "se": g.std(ddof=1) / np.sqrt(g.count()), "n": g.count()})


def cell(st, key) -> str:
    m, s = st.loc[key, "mean"], st.loc[key, "se"]
    return f"{m:.3f} ± {s:.3f}"


def _verdict(st, k, ours_name) -> str:
    ours = st.loc[(*k, ours_name)]
    lost = []
    for p in PEERS:
        if (*k, p) not in st.index:
            continue
        peer = st.loc[(*k, p)]
        if not peer["mean"] - ours["mean"] > float(np.hypot(ours["se"], peer["se"])):
            lost.append(p)
    return "yes" if not lost else "NO (" + ", ".join(lost) + ")"


def acceptance1(df: pd.DataFrame) -> pd.DataFrame:
    st = stats(df)
    rows = []
    for (data, kind, rho), _ in df.groupby(["data", "kind", "rho"]):
        k = (data, kind, rho)
        row = {"data": data, "noise": f"{kind} {rho:g}", "seeds": int(st.loc[(*k, "CorrectedLR"), "n"]),
               "CorrectedLR (known C, Cs grid)": cell(st, (*k, "CorrectedLR"))}
        for p in PEERS:
            if (*k, p) in st.index:
                row[p] = cell(st, (*k, p))
        row["below all"] = _verdict(st, k, "CorrectedLR")
        if (*k, "CorrectedLR_defaults") in st.index:
            row["CorrectedLR (class defaults, C = 1)"] = cell(st, (*k, "CorrectedLR_defaults"))
            row["defaults below all"] = _verdict(st, k, "CorrectedLR_defaults")
        rows.append(row)
    return pd.DataFrame(rows)


def acceptance2(df: pd.DataFrame) -> pd.DataFrame:
    st = stats(df)
    rows = []
    for (data, kind, rho), g in df.groupby(["data", "kind", "rho"]):
        k = (data, kind, rho)
        ident = identifiable(confusion(kind, rho, K_OF[data]))
        est, cl = st.loc[(*k, "CorrectedLR_est")], st.loc[(*k, "cleanlab")]
        se = float(np.hypot(est["se"], cl["se"]))
        e = g[g.learner == "CorrectedLR_est"]
        rows.append({
            "data": data, "noise": f"{kind} {rho:g}", "identifiable": "yes" if ident else "no",
            "estimate": cell(st, (*k, "CorrectedLR_est")), "cleanlab": cell(st, (*k, "cleanlab")),
            "no worse": ("yes" if est["mean"] <= cl["mean"] + se else "NO") if ident else "(not required)",
            "max abs(Ĉ − C)": f"{e['C_maxabs'].mean():.3f} (max {e['C_maxabs'].max():.3f})",
            "max abs(C_emp − C) (floor)": f"{e['C_emp_maxabs'].mean():.3f}",
            "max abs(Ĉ − C_emp)": f"{e['C_vs_emp_maxabs'].mean():.3f}",
        })
    return pd.DataFrame(rows)


def main(argv=None) -> int:
    paths = sys.argv[1:] if argv is None else argv
    df = pd.concat([pd.read_csv(p) for p in paths], ignore_index=True)
    order = {"digits": 0, "letter": 1, "toy": 2}
    df = df.sort_values(["data", "kind", "rho"], key=lambda s: s.map(order) if s.name == "data" else s)
    print("### Known C: test error (mean ± s.e. over seeds)\n")
    print(markdown(acceptance1(df), index=False))
    print("\n### Estimated C: confusion=\"estimate\" vs cleanlab\n")
    print(markdown(acceptance2(df), index=False))
    print("\nSeconds per fit (mean over all settings):\n")
    t = df.groupby(["data", "learner"])["seconds"].mean().unstack().round(2)
    print(markdown(t))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
