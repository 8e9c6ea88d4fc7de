"""Flame graphs as one self-contained SVG (no script: each frame's figures in its tooltip), from a record's folded
stacks (kvlab.results.profile): a frame's width is its CPU per operation, the root at the bottom, colours by
component; the differential one sizes frames by B and colours them by B's change against A, per operation (red:
more CPU per op in B, blue: less), as Brendan Gregg's differential flame graphs do.

    svg = flame(record.params["profile"], title="lmdb readrandom 1 thr")
    svg = flame_diff(profile_a, profile_b, title="rocksdb@7.8.3 -> rocksdb@8.10.0")
"""
from __future__ import annotations

from html import escape

from ...results import profile as prof

WIDTH, ROW, FONT, PAD = 1200, 17, 11, 10
CHAR_PX = 6.4                 # the label's width per character at FONT (DejaVu Sans Mono, near enough)
COMPONENT_COLOURS = {"engine": "#e6855e", "kvlab": "#5b8fd6", "libc+alloc": "#6dbb6d", "kernel": "#d65b6f",
                     "python": "#e8c547", "other": "#a8a8a8"}


class _Node:
    __slots__ = ("name", "value", "other", "children")

    def __init__(self, name):
        self.name, self.value, self.other, self.children = name, 0.0, 0.0, {}


def _tree(folded: dict, scale: float) -> _Node:
    root = _Node("all")
    for stack, n in folded.items():
        v = n * scale
        root.value += v
        node = root
        for frame in stack.split(";"):
            node = node.children.setdefault(frame, _Node(frame))
            node.value += v
    return root


def _depth(node: _Node) -> int:
    return 1 + max((_depth(c) for c in node.children.values()), default=0)


def _render(root: _Node, title: str, subtitle: str, colour, tip, legend=()) -> str:
    depth = _depth(root)
    height = PAD * 2 + 44 + (18 if legend else 0) + depth * ROW
    x_scale = (WIDTH - 2 * PAD) / root.value if root.value else 0.0
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{WIDTH}" height="{height}" '
             f'viewBox="0 0 {WIDTH} {height}" font-family="DejaVu Sans Mono, monospace" font-size="{FONT}">',
             f'<rect width="{WIDTH}" height="{height}" fill="#ffffff"/>',
             f'<text x="{WIDTH / 2}" y="{PAD + 14}" text-anchor="middle" font-size="15" '
             f'font-family="DejaVu Sans, sans-serif">{escape(title)}</text>',
             f'<text x="{WIDTH / 2}" y="{PAD + 32}" text-anchor="middle" fill="#555555" '
             f'font-family="DejaVu Sans, sans-serif">{escape(subtitle)}</text>']
    x = PAD
    for label, fill in legend:   # one row: a swatch and its words each
        parts.append(f'<rect x="{x}" y="{PAD + 40}" width="12" height="12" fill="{fill}"/>'
                     f'<text x="{x + 16}" y="{PAD + 50}" font-family="DejaVu Sans, sans-serif">{escape(label)}</text>')
        x += 16 + int(len(label) * CHAR_PX) + 18

    def draw(node: _Node, x: float, level: int):
        w = node.value * x_scale
        if w < 0.3:
            return
        y = height - PAD - (level + 1) * ROW
        parts.append(f'<g><title>{escape(tip(node, root))}</title>'
                     f'<rect x="{x:.1f}" y="{y}" width="{w:.1f}" height="{ROW - 1}" rx="2" '
                     f'fill="{colour(node)}"/>')
        chars = int((w - 4) / CHAR_PX)
        if chars >= 3:
            label = node.name if len(node.name) <= chars else node.name[:chars - 2] + ".."
            parts.append(f'<text x="{x + 3:.1f}" y="{y + ROW - 5}">{escape(label)}</text>')
        parts.append("</g>")
        cx = x
        for child in sorted(node.children.values(), key=lambda c: c.name):
            draw(child, cx, level + 1)
            cx += child.value * x_scale

    draw(root, PAD, 0)
    parts.append("</svg>")
    return "\n".join(parts)


def flame(p: dict, title: str, subtitle: str | None = None) -> str:
    """One profile's flame graph: widths in CPU microseconds per operation, colours by component."""
    ops = max(int(p.get("ops") or 0), 1)
    scale = 1e6 / p["rate_hz"] / ops
    root = _tree(p["folded"], scale)
    libs = p.get("engine_libraries") or ()
    summary = prof.per_op(p)
    comps = ", ".join(f"{c} {v:.3g}" for c, v in summary["components"].items() if v > 0)
    subtitle = subtitle or (f"{root.value:.3g} us of CPU per op ({p['samples']:,} samples at {p['rate_hz']} Hz, "
                            f"{p['event']}, {p['unwind']}); by component: {comps}")

    def colour(node):
        return "#dddddd" if node is root else COMPONENT_COLOURS[prof.component(node.name, libs)]

    def tip(node, top):
        return f"{node.name}: {node.value:.4g} us/op ({100 * node.value / top.value:.1f}%)"
    legend = [(f"{c}: {prof.COMPONENT_WORDS[c].split(':')[0].split(' (')[0]}", COMPONENT_COLOURS[c])
              for c in prof.COMPONENTS if summary["components"][c] > 0]
    return _render(root, title, subtitle, colour, tip, legend)


def flame_diff(pa: dict, pb: dict, title: str, subtitle: str | None = None) -> str:
    """B's flame graph coloured by each function's change against A, per operation: red where B spends more CPU per
    op in the function's own code (self: the samples it was the innermost frame of, over every stack it is on), blue
    where less, white where the same.  By function and by self time, not by stack: two builds name different frames
    on the way to the same function (a stripped library's static callers are [unknown]; another compiler inlines
    another way), and a stack perf could not unwind to its thread's start is shorter on one side, which would paint
    every caller on the other side's path as more; a function's own time is the same whichever way it was reached.
    A function A had and B has not is not drawn (its cost is in the table `kvlab results why` prints)."""
    sb = 1e6 / pb["rate_hz"] / max(int(pb.get("ops") or 0), 1)
    root = _tree(pb["folded"], sb)
    oa, ob = prof.per_op(pa), prof.per_op(pb)
    a_self = {f["function"]: f["self_us"] for f in oa["functions"]}
    b_self = {f["function"]: f["self_us"] for f in ob["functions"]}
    a_total = {f["function"]: f["total_us"] for f in oa["functions"]}
    b_total = {f["function"]: f["total_us"] for f in ob["functions"]}
    a_all = oa["total_us"]
    root.other = a_all
    span = max(root.value, a_all, 1e-12)
    subtitle = subtitle or (f"widths: B's CPU per op ({root.value:.3g} us; A {a_all:.3g} us); colour: each function's "
                            "own CPU per op (self), B against A (red: more in B, blue: less)")

    def change(node):
        if node is root:
            return root.value - a_all, root.value, a_all
        b, a = b_self.get(node.name, 0.0), a_self.get(node.name, 0.0)
        return b - a, b, a

    def colour(node):
        diff = change(node)[0] / span
        strength = min(abs(diff) * 4.0, 1.0)
        fade = int(255 - 155 * strength)
        return f"rgb(255,{fade},{fade})" if diff > 0 else f"rgb({fade},{fade},255)"

    def tip(node, top):
        diff, b, a = change(node)
        if node is root:
            return f"all: B {b:.4g} us/op, A {a:.4g} us/op ({diff:+.4g})"
        return (f"{node.name}: self B {b:.4g} us/op, A {a:.4g} ({diff:+.4g}); with what it calls B "
                f"{b_total.get(node.name, 0.0):.4g}, A {a_total.get(node.name, 0.0):.4g}; all its stacks")
    legend = [("more CPU per op in B", "rgb(255,100,100)"), ("less in B", "rgb(100,100,255)"),
              ("the same", "rgb(255,255,255)")]
    return _render(root, title, subtitle, colour, tip, legend)


class SVG(str):
    """An SVG document that a notebook shows inline."""

    def _repr_svg_(self) -> str:
        return str(self)


def flame_of(record, title: str | None = None) -> SVG:
    """A record's flame graph (a BenchmarkResult or its dict, run with profile=True)."""
    d = record if isinstance(record, dict) else record.to_dict()
    p = (d.get("params") or {}).get("profile")
    if not p:
        raise ValueError(f"{d.get('engine')} {d.get('workload')}: no profile in this record (run it with "
                         "profile=True)")
    return SVG(flame(p, title or f"{d.get('engine')} {d.get('workload')} at {d.get('threads')} thread(s)"))


def why(a, b, *, store=None) -> list:
    """The differential flame graphs of `kvlab.why(a, b)`, one per benchmark both sides profiled."""
    from ...results.why import why as explain
    return [SVG(flame_diff(e["a_profile"], e["b_profile"],
                           f"{e['benchmark']}: {', '.join(e['b_engines'])} against {', '.join(e['a_engines'])}"))
            for e in explain(a, b, store=store)]
