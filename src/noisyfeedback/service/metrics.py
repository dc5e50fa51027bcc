"""Prometheus text-format metrics of the service, kept in memory (no client library needed)."""

from __future__ import annotations

import math
from collections import defaultdict

__all__ = ["Metrics", "rate_estimate", "escape_label"]

BUCKETS = (0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0, 2.5)


def rate_estimate(n: int, total: float, total_sq: float, rho0: float = 0.0, rho1: float = 0.0,
                  z: float = 1.959963984540054) -> tuple[float, float, float]:
    """Noise-corrected mean reward with a normal-approximation 95% interval.

    The observed rewards f̃ are corrected by h(f̃) = (f̃ − ρ0)/(1 − ρ0 − ρ1) (unbiased for the clean
    reward when the flips are those rates); the interval is mean(h) ± z·sd(h)/√n.

    >>> [round(v, 4) for v in rate_estimate(100, 30, 30, rho0=0.1, rho1=0.1)]
    [0.25, 0.1372, 0.3628]
    """
    if n == 0:
        return math.nan, math.nan, math.nan
    beta = 1.0 - rho0 - rho1
    mean = total / n
    var = max(total_sq / n - mean * mean, 0.0) * n / max(n - 1, 1)
    est = (mean - rho0) / beta
    half = z * math.sqrt(var / n) / beta
    return est, est - half, est + half


class _Hist:
    __slots__ = ("counts", "sum", "n")

    def __init__(self):
        self.counts = [0] * len(BUCKETS)
        self.sum = 0.0
        self.n = 0

    def observe(self, v: float) -> None:
        self.n += 1
        self.sum += v
        for i, b in enumerate(BUCKETS):
            if v <= b:
                self.counts[i] += 1
                break


def escape_label(value: str) -> str:
    r"""A label value in the Prometheus text format: backslash, double quote and line feed escaped.

    >>> escape_label('a"b\\c\nd')
    'a\\"b\\\\c\\nd'
    """
    return str(value).replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


#: the most (route, status) series kept; the route label is a route's template or "unmatched", so this
#: bound is never reached by well-formed traffic
MAX_SERIES = 512


class Metrics:
    """Request counters and latency histograms by route (template, or ``unmatched``), plus the service's
    own counters."""

    def __init__(self):
        self.requests: dict[tuple[str, int], int] = defaultdict(int)
        self.latency: dict[str, _Hist] = defaultdict(_Hist)

    def observe(self, route: str, status: int, seconds: float) -> None:
        status = int(status) if 100 <= int(status) <= 599 else 0
        if (route, status) not in self.requests and len(self.requests) >= MAX_SERIES:
            route = "unmatched"
        self.requests[(route, status)] += 1
        self.latency[route].observe(seconds)

    def render(self, engine) -> str:
        lines = ["# HELP nf_requests_total HTTP requests by route and status.",
                 "# TYPE nf_requests_total counter"]
        for (route, status), n in sorted(self.requests.items()):
            lines.append(f'nf_requests_total{{route="{escape_label(route)}",status="{status}"}} {n}')
        lines += ["# HELP nf_request_duration_seconds Request latency by route.",
                  "# TYPE nf_request_duration_seconds histogram"]
        for route, h in sorted(self.latency.items()):
            route = escape_label(route)
            cum = 0
            for b, c in zip(BUCKETS, h.counts):
                cum += c
                lines.append(f'nf_request_duration_seconds_bucket{{route="{route}",le="{b}"}} {cum}')
            lines.append(f'nf_request_duration_seconds_bucket{{route="{route}",le="+Inf"}} {h.n}')
            lines.append(f'nf_request_duration_seconds_sum{{route="{route}"}} {h.sum}')
            lines.append(f'nf_request_duration_seconds_count{{route="{route}"}} {h.n}')
        s = engine.stats
        if isinstance(engine.rho0, list) or isinstance(engine.rho1, list):
            # per-action rates correct each action's rewards with its own: the counters here are not per
            # action, so no corrected rate is claimed (NaN); nf.ope / GET /evaluate correct per action
            est = lo = hi = math.nan
        else:
            est, lo, hi = rate_estimate(int(s["rewards"]), s["reward_sum"], s["reward_sq"], engine.rho0,
                                        engine.rho1)
        gauges = [
            ("nf_events_total", "counter", "Ranked events in the log." if getattr(engine, "replica", None) is None else
             "Events this replica ranked (label replica; every replica learns every reward).", s["events"]),
            ("nf_rewards_total", "counter", "Accepted rewards in the log.", s["rewards"]),
            ("nf_model_updates_total", "counter", "Rewards the model has learned from (its version).",
             engine.model_version),
            ("nf_click_rate", "gauge", "Noise-corrected mean reward of the deployed policy.", est),
            ("nf_click_rate_lower", "gauge", "Lower end of its 95% interval.", lo),
            ("nf_click_rate_upper", "gauge", "Upper end of its 95% interval.", hi),
            ("nf_apprentice_mode", "gauge", "1 in apprentice mode, 0 online.", int(engine.mode == "apprentice")),
        ]
        if getattr(engine, "catalogue", False):
            gauges += [
                ("nf_deferred_events_total", "counter", "Events ranked with deferred activation.",
                 s.get("deferred", 0)),
                ("nf_deferred_not_activated", "gauge", "Deferred events not activated (never learned from "
                 "unless activated).", s.get("deferred_pending", 0)),
                ("nf_rewards_ignored_total", "counter", "Rewards of deferred events not activated, dropped (the "
                 "Personalizer routes; since the start).", s.get("ignored_rewards", 0))]
        app = engine.apprentice_report()
        gauges += [
            ("nf_apprentice_agreement", "gauge", "Share of apprentice events where the learned greedy "
             "action equals the application's.", app["agreement"]),
            ("nf_apprentice_reward_default", "gauge", "Mean reward of the application's actions.",
             app["reward_default"]),
            ("nf_apprentice_reward_agreeing", "gauge", "Mean reward on events where both agree.",
             app["reward_agreeing"]),
            ("nf_apprentice_reward_learned_lower", "gauge", "Lower bound of the learned policy's mean reward "
             "(observed where it agrees with the application, 0 elsewhere).", app["reward_learned_lower"]),
            ("nf_apprentice_reward_learned_upper", "gauge", "Upper bound of the learned policy's mean reward "
             "(observed where it agrees with the application, 1 elsewhere).", app["reward_learned_upper"]),
        ]
        label = "" if getattr(engine, "replica", None) is None else f'{{replica="{escape_label(engine.replica)}"}}'
        for name, kind, help_, value in gauges:
            where = label if name == "nf_events_total" else ""
            lines += [f"# HELP {name} {help_}", f"# TYPE {name} {kind}", f"{name}{where} {_num(value)}"]
        return "\n".join(lines) + "\n"


def _num(v) -> str:
    v = float(v)
    return "NaN" if math.isnan(v) else repr(v)
