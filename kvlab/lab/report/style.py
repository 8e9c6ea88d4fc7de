"""The report's style sheet, inline in the page."""

CSS = """
:root { --ink: #1f2328; --muted: #59636e; --line: #d1d9e0; --band: #f6f8fa; --accent: #0072B2; }
* { box-sizing: border-box; }
body { margin: 0; color: var(--ink); background: #fff; font: 15px/1.45 system-ui, -apple-system, "Segoe UI",
       "DejaVu Sans", "Liberation Sans", sans-serif; }
main { max-width: 1200px; margin: 0 auto; padding: 1.2rem 1.5rem 3rem; }
h1 { font-size: 1.6rem; margin: 0.2rem 0 0.8rem; word-break: break-word; }
h2 { font-size: 1.3rem; border-bottom: 1px solid var(--line); padding-bottom: 0.25rem; margin-top: 2.2rem; }
h3 { font-size: 1.05rem; margin: 1.4rem 0 0.4rem; }
h4 { font-size: 0.95rem; margin: 1rem 0 0.3rem; color: var(--muted); }
a { color: var(--accent); }
code, pre { font-family: ui-monospace, "DejaVu Sans Mono", "Liberation Mono", monospace; font-size: 0.85em; }
pre { background: var(--band); padding: 0.6rem 0.8rem; overflow-x: auto; border-radius: 4px; }
table { border-collapse: collapse; }
table.facts th, table.kv th { text-align: left; font-weight: 600; padding: 0.15rem 1rem 0.15rem 0;
       vertical-align: top; white-space: nowrap; color: var(--muted); }
table.facts td, table.kv td { padding: 0.15rem 0; word-break: break-word; }
table.kv td { font-family: ui-monospace, "DejaVu Sans Mono", monospace; font-size: 0.85em; }
.scroll { overflow-x: auto; }
table.data { font-size: 0.85rem; font-variant-numeric: tabular-nums; width: 100%; }
table.data th { background: var(--band); border-bottom: 2px solid var(--line); padding: 0.3rem 0.5rem;
       white-space: nowrap; position: sticky; top: 0; }
table.data td { border-bottom: 1px solid var(--line); padding: 0.22rem 0.5rem; }
table.data tbody tr:nth-child(even) { background: #fbfcfd; }
.r { text-align: right; white-space: nowrap; }
table.summary { font-size: 0.8rem; }
table.summary td.def { min-width: 10rem; max-width: 15rem; color: var(--muted); }
table.summary td.tags { min-width: 6rem; max-width: 11rem; }
table.summary th, table.summary td { padding-left: 0.3rem; padding-right: 0.3rem; }
.l { text-align: left; }
table.claims td { vertical-align: top; min-width: 6rem; word-break: break-word; }
tr.geomean td { font-style: italic; border-top: 2px solid var(--line); }
.tag { display: inline-block; background: #eef3f8; border: 1px solid #c8d6e5; border-radius: 3px;
       padding: 0 0.3rem; margin: 0 0.15rem 0.1rem 0; font-size: 0.8em; }
.partial { color: #b35900; }
a.warn { color: #9a6700; font-weight: 600; }
.verdict { font-weight: 600; }
.verdict.good { color: #1a7f37; } .verdict.bad { color: #cf222e; } .verdict.same { color: var(--muted); }
.legend, figcaption, .runline, .nowarn, .none { color: var(--muted); font-size: 0.85rem; }
nav ul { list-style: none; padding: 0; display: flex; flex-wrap: wrap; gap: 0.4rem 1.4rem; margin: 1rem 0; }
figure { margin: 1.2rem 0 2rem; }
figure svg { display: block; max-width: 100%; height: auto; }
.check { color: #9a6700; font-size: 0.8rem; }
ul.warnings { margin: 0.3rem 0; padding-left: 1.2rem; font-size: 0.85rem; color: #7d4e00; }
ul.notes { font-size: 0.85rem; color: var(--muted); }
article.run { border-top: 1px solid var(--line); padding-top: 0.2rem; }
details { margin: 0.4rem 0 1rem; }
dl.spec { display: grid; grid-template-columns: repeat(auto-fill, minmax(250px, 1fr)); gap: 0.1rem 1.2rem;
       margin: 0; font-size: 0.85em; }
dl.spec div { display: flex; gap: 0.5rem; border-bottom: 1px dotted var(--line); min-width: 0; }
dl.spec dt { color: var(--muted); font-weight: 600; }
dl.spec dd { margin: 0; font-family: ui-monospace, "DejaVu Sans Mono", monospace; word-break: break-all; }
summary { cursor: pointer; color: var(--accent); font-size: 0.9rem; }
footer { margin-top: 3rem; color: var(--muted); font-size: 0.8rem; border-top: 1px solid var(--line);
       padding-top: 0.6rem; }
@media print { details { display: block; } nav { display: none; } }
"""
