"""The service's running tallies (events, rewards, and apprentice mode's agreements), counted as the log
commits them from the totals the log holds at start (`Storage.stats`), and apprentice mode's report."""

from __future__ import annotations

import math

__all__ = ["apprentice_report", "count_event", "count_reward"]


def count_event(stats: dict, mode: str, agrees: bool) -> None:
    """One more logged event (in apprentice mode: whether the learned greedy action is the application's)."""
    stats["events"] += 1
    if mode == "apprentice":
        stats["app_events"] += 1
        stats["app_agree"] += int(agrees)


def count_reward(stats: dict, reward: float, mode: str, default_action, greedy) -> None:
    """One more learned reward, of an event ranked in ``mode`` (apprentice: with the application's
    ``default_action`` and the learned ``greedy`` one)."""
    stats["rewards"] += 1
    stats["reward_sum"] += reward
    stats["reward_sq"] += reward * reward
    if mode == "apprentice":
        stats["app_rewards"] += 1
        stats["app_reward_sum"] += reward
        if greedy == default_action:
            stats["app_agree_rewards"] += 1
            stats["app_agree_reward_sum"] += reward


def _ratio(a: float, b: float) -> float:
    return a / b if b else math.nan


def apprentice_report(stats: dict, mode: str) -> dict:
    """Apprentice mode's report: how often the learned greedy action agrees with the application's, and
    the mean reward of both: the application's actions (observed), and the learned policy's, bounded (its
    reward is observed where the two agree; elsewhere it lies in [0, 1])."""
    n, agree_n, agree_sum = stats["app_rewards"], stats["app_agree_rewards"], stats["app_agree_reward_sum"]
    return {"mode": mode, "events": int(stats["app_events"]),
            "agreement": _ratio(stats["app_agree"], stats["app_events"]),
            "rewards": int(n),
            "reward_default": _ratio(stats["app_reward_sum"], n),
            "reward_agreeing": _ratio(agree_sum, agree_n),
            # the learned greedy policy's mean reward on these contexts: observed where it agrees with the
            # application's (deterministic) action, unknown in [0, 1] elsewhere
            "reward_learned_lower": _ratio(agree_sum, n),
            "reward_learned_upper": _ratio(agree_sum + (n - agree_n), n)}
