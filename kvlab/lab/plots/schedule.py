"""`plots.rate_schedule`: an open-loop run whose target varies in time (kvlab.lab.seeds.field.varying_rate's frame,
one row per interval): the target beside the rate achieved, and the p99 of response and service time, on one time
axis."""
from __future__ import annotations

from ..._optional import require
from .style import REFERENCE_COLOUR, engine_palette, house_style, rate_axis

# an interval with fewer transactions has no p99 of its own (the figure check's rule, per interval)
MIN_TXNS_P99 = 100


def rate_schedule(frame, title: str | None = None):
    """Top: per interval, the schedule's target (grey steps, each interval's mean target) and the transactions/s
    achieved (the engine's colour).  Bottom: the p99 of the interval's response time (from each transaction's
    intended start: it holds the queue) and of its service time (from its actual start), on a log axis in ms or
    µs; intervals with fewer than MIN_TXNS_P99 transactions are left out of the bottom panel (said in its title)."""
    plt = require("matplotlib.pyplot", "kvlab's plots")
    ticker = require("matplotlib.ticker", "kvlab's plots")
    house_style()
    engine = frame.engine.iloc[0]
    colour = engine_palette([engine])[engine]
    mid = (frame.t_start_s + frame.t_end_s) / 2
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(9, 6.2), sharex=True, gridspec_kw={"height_ratios": [3, 2]})
    edges = list(frame.t_start_s) + [frame.t_end_s.iloc[-1]]
    targets = list(frame.target_txn_per_sec) + [frame.target_txn_per_sec.iloc[-1]]
    top.step(edges, targets, where="post", color=REFERENCE_COLOUR, linestyle="--", linewidth=1.4,
             label="target (the schedule's mean over the interval)")
    top.plot(mid, frame.achieved_txn_per_sec, color=colour, marker="s", markersize=4, linewidth=1.4,
             label=f"{engine}: achieved (per interval)")
    top.set_ylabel("transactions/s")
    rate_axis(top)
    schedule = frame.attrs.get("schedule")
    top.set_title(title or (f"{engine}: an open loop paced by {schedule}" if schedule else f"{engine}: open loop"),
                  fontsize=11)
    kept = frame[frame.transactions >= MIN_TXNS_P99]
    scale, unit = (1000.0, "ms") if kept.response_p99_us.max() >= 1000 else (1.0, "µs")
    km = (kept.t_start_s + kept.t_end_s) / 2
    bottom.plot(km, kept.response_p99_us / scale, color=colour, marker="o", markersize=4, linewidth=1.4,
                label=f"{engine}: p99 response time (from the intended start)")
    bottom.plot(km, kept.service_p99_us / scale, color=colour, marker="^", markersize=4, linewidth=1.0,
                linestyle=":", label=f"{engine}: p99 service time (from the actual start)")
    bottom.set_yscale("log")
    bottom.yaxis.set_major_formatter(ticker.FuncFormatter(lambda v, _pos: f"{v:,g}"))
    bottom.set_ylabel(f"p99 per interval ({unit})")
    bottom.set_xlabel("time from the run phase's start (s)")
    left_out = len(frame) - len(kept)
    if left_out:
        bottom.set_title(f"{left_out} interval{'s' * (left_out != 1)} of fewer than {MIN_TXNS_P99} transactions "
                         "left out: no p99 of its own", fontsize=9)
    top.set_xlim(0, edges[-1])
    fig.tight_layout()
    for ax in (top, bottom):   # each panel's own legend beside it: its lines share a colour, not a unit
        ax.legend(loc="upper left", bbox_to_anchor=(1.01, 1.0), frameon=False, fontsize=9)
    return fig
