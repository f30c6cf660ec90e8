"""The results site: ``results/index.html``, one self-contained page over everything the pipeline made.

Written by the ``report`` stage (``python -m tieringlab.report``) after the ledger. The page holds

- for every notebook that left results (``results/{figures,tables,metrics,notebooks}/NN_name*``, found by
  listing the folders, so a new notebook appears without touching this module): its title (the first
  heading of the notebook), the papers its claims come from, a link to the executed notebook, every
  figure (the PNG embedded) and every table (the CSV rendered) with its caption and the paper figure or
  table it reproduces, its scalar metrics, and the provenance of its metrics
  (:func:`tieringlab.report.notebook_provenance`: the commit and date of the run, and whether it is at
  paper scale, reduced, stale or not run here);
- the claims ledger (:func:`tieringlab.report.build`) with filters by paper, verdict, diagnosis and kind.

Captions come from the manifests :class:`tieringlab.results.Outputs` writes beside the files (the
``caption=`` and ``reproduces=`` arguments of ``Outputs.figure``/``Outputs.table``). Results written
before manifests existed, or files a notebook saved by other means, are still shown, in name order; their
paper figure is then inferred from a name such as ``fig6_mds_0`` or ``table1`` and marked as inferred.

Self-contained: images are embedded as ``data:`` URIs, the style sheet and the filter script are inline,
nothing is fetched from a network, so the file opens from the file system (``file://``) with no server.
The links to executed notebooks and CSV files are relative, for a copy of the whole ``results/``.
Each executed notebook is also rendered to ``results/notebooks-html/NN_name.html`` (nbconvert's basic
template, an inline style sheet, nothing fetched), the page's "executed notebook" link: a browser shows
an ``.ipynb`` as raw JSON.
The page has no timestamp: the same results give the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
from pathlib import Path
from typing import Any

import pandas as pd

from tieringlab import fileio, paths, report
from tieringlab.claims import registry
from tieringlab.results import MANIFEST

#: Rows of a table shown on the page (the whole table is in the linked CSV).
MAX_TABLE_ROWS = 60
_NAME_REF = re.compile(r"^(fig|figure|table|tab)_?(\d+)([a-z]?)(?:_|$)", re.IGNORECASE)


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _stem_key(stem: str) -> tuple:
    m = re.match(r"^(\d+)_", stem)
    return (int(m.group(1)) if m else 10**9, stem)


def notebooks(root: Path) -> list[str]:
    """Stems (``00_quickstart``) of every notebook with results under ``root``, in notebook order."""
    stems: set[str] = set()
    for sub in ("figures", "tables"):
        if (root / sub).is_dir():
            stems |= {p.name for p in (root / sub).iterdir() if p.is_dir() and not p.name.startswith(".")}
    for sub in ("metrics", "notebooks"):
        if (root / sub).is_dir():
            stems |= {p.stem for p in (root / sub).iterdir()
                      if p.suffix in (".json", ".ipynb") and not p.name.startswith(".")}
    return sorted(stems, key=_stem_key)


def inferred_reference(name: str) -> str | None:
    """``fig6_mds_0`` -> ``Fig. 6``, ``table1`` -> ``Table 1``; None when the name names no figure."""
    m = _NAME_REF.match(name)
    if not m:
        return None
    kind = "Fig." if m.group(1).lower().startswith("fig") else "Table"
    return f"{kind} {int(m.group(2))}{m.group(3)}"


def _manifest(folder: Path, kind: str) -> list[dict]:
    path = folder / MANIFEST
    if not path.is_file():
        return []
    try:
        data = json.loads(path.read_text(encoding="utf-8"))
    except json.JSONDecodeError as exc:
        raise ValueError(f"{path}:{exc.lineno}: not valid JSON ({exc.msg})") from None
    entries = data.get(kind) if isinstance(data, dict) else None
    if not isinstance(entries, list) or not all(isinstance(e, dict) and isinstance(e.get("name"), str)
                                                for e in entries):
        raise ValueError(f"{path}: expected {{{kind!r}: [{{'name': ..., 'caption': ..., 'reproduces': ...}}, ...]}}")
    return entries


def items(folder: Path, kind: str, suffixes: tuple[str, ...]) -> list[dict]:
    """The figures (or tables) in ``folder``: the manifest's entries in the order the notebook saved
    them, then any other file with one of ``suffixes`` in name order. Each: name, caption, reproduces,
    inferred (whether ``reproduces`` was read off the name), path (the first existing file by suffix)."""
    if not folder.is_dir():
        return []
    found = {}
    for suffix in suffixes:  # first suffix wins (PNG before SVG, CSV only for tables)
        for p in sorted(folder.glob(f"*{suffix}")):
            if not p.name.startswith("."):
                found.setdefault(p.name[: -len(suffix)], p)
    out = []
    listed = set()
    for entry in _manifest(folder, kind):
        name = entry["name"]
        if name in found and name not in listed:
            listed.add(name)
            out.append({"name": name, "caption": entry.get("caption"), "reproduces": entry.get("reproduces"),
                        "inferred": False, "path": found[name]})
    for name in sorted(set(found) - listed):
        out.append({"name": name, "caption": None, "reproduces": None, "inferred": False, "path": found[name]})
    for item in out:
        if not item["reproduces"]:
            item["reproduces"] = inferred_reference(item["name"])
            item["inferred"] = item["reproduces"] is not None
    return out


def notebook_title(root: Path, stem: str) -> str:
    """The first Markdown heading of the executed notebook (else the source notebook), without ``#``."""
    for path in (root / "notebooks" / f"{stem}.ipynb", paths.repo_root() / "notebooks" / f"{stem}.ipynb"):
        if not path.is_file():
            continue
        try:
            nb = json.loads(path.read_text(encoding="utf-8"))
        except (json.JSONDecodeError, UnicodeDecodeError):
            continue
        for cell in nb.get("cells", []):
            if cell.get("cell_type") != "markdown":
                continue
            text = "".join(cell.get("source", []))
            for line in text.splitlines():
                if line.startswith("#"):
                    return line.lstrip("#").strip()
    return stem


def _data_uri(path: Path) -> str:
    mime = {".png": "image/png", ".svg": "image/svg+xml"}[path.suffix]
    return f"data:{mime};base64,{base64.b64encode(path.read_bytes()).decode('ascii')}"


def _fmt_cell(value: Any) -> str:
    if isinstance(value, float):
        return "" if value != value else f"{value:.4g}"
    return str(value)


def _table_html(path: Path) -> str:
    df = pd.read_csv(path)
    shown = df.head(MAX_TABLE_ROWS)
    head = "".join(f"<th>{_esc(c)}</th>" for c in shown.columns)
    body = "".join("<tr>" + "".join(f"<td>{_esc(_fmt_cell(v))}</td>" for v in row) + "</tr>"
                   for row in shown.itertuples(index=False))
    more = (f'<p class="more">{len(df) - len(shown)} more rows in the CSV.</p>' if len(df) > len(shown) else "")
    return (f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
            f'</table></div>{more}')


def _caption(item: dict, rel: str) -> str:
    ref = ""
    if item["reproduces"]:
        how = ' <span class="inferred">(inferred from the name)</span>' if item["inferred"] else ""
        ref = f'<span class="ref">reproduces {_esc(item["reproduces"])}</span>{how} · '
    text = _esc(item["caption"]) if item["caption"] else f'<span class="nocap">{_esc(item["name"])}</span>'
    return (f'<figcaption>{ref}{text} <a class="file" href="{_esc(rel)}">{_esc(item["path"].name)}</a>'
            f"</figcaption>")


def _scalars(root: Path, stem: str) -> list[tuple[str, Any]]:
    path = root / "metrics" / f"{stem}.json"
    if not path.is_file():
        return []
    try:
        values = json.loads(path.read_text(encoding="utf-8")).get("values") or {}
    except (json.JSONDecodeError, AttributeError):
        return []
    return [(k, v) for k, v in sorted(values.items())
            if isinstance(v, (int, float, bool)) or v is None]


def _notebook_section(root: Path, stem: str, papers: list[str], provenance: dict | None = None) -> str:
    title = notebook_title(root, stem)
    parts = [f'<section class="notebook" id="nb-{_esc(stem)}"><h2>{_esc(title)}</h2>']
    meta = [f"<code>notebooks/{_esc(stem)}.ipynb</code>"]
    executed = root / "notebooks" / f"{stem}.ipynb"
    if executed.is_file():
        meta.append(f'<a href="{NOTEBOOKS_HTML}/{_esc(stem)}.html">executed notebook</a> '
                    f'(<a href="notebooks/{_esc(stem)}.ipynb">.ipynb</a>)')
    if papers:
        meta.append("papers: " + "; ".join(_esc(p) for p in papers))
    if provenance is not None:
        kind = re.sub(r"[^a-z]+", "-", provenance["status"].split(",")[0].split("(")[0].lower()).strip("-")
        meta.append(f'<span class="provenance {kind}">{_esc(provenance["status"])}</span>')
    parts.append(f'<p class="meta">{" · ".join(meta)}</p>')
    figures = items(root / "figures" / stem, "figures", (".png", ".svg"))
    for item in figures:
        rel = f"figures/{stem}/{item['path'].name}"
        parts.append(f'<figure class="fig"><img src="{_data_uri(item["path"])}" alt="{_esc(item["name"])}" '
                     f'loading="eager">{_caption(item, rel)}</figure>')
    for item in items(root / "tables" / stem, "tables", (".csv",)):
        rel = f"tables/{stem}/{item['path'].name}"
        parts.append(f'<figure class="tab">{_caption(item, rel)}{_table_html(item["path"])}</figure>')
    scalars = _scalars(root, stem)
    if scalars:
        rows = "".join(f"<tr><td><code>{_esc(k)}</code></td><td>{_esc(_fmt_cell(v))}</td></tr>" for k, v in scalars)
        parts.append(f'<details class="metrics"><summary>metrics ({len(scalars)})</summary>'
                     f'<table class="data"><tbody>{rows}</tbody></table></details>')
    parts.append("</section>")
    return "\n".join(parts)


def _ledger_section(ledger: pd.DataFrame, summary: str) -> str:
    ledger = ledger.assign(category=report.category(ledger))

    def options(col: str) -> str:
        values = list(dict.fromkeys(ledger[col]))
        return "".join(f'<option value="{_esc(v)}">{_esc(v)}</option>' for v in values)

    filters = "".join(
        f'<label>{label} <select name="{col}" data-filter="{col}"><option value="">all</option>{options(col)}'
        f"</select></label>" for col, label in (("paper", "paper"), ("verdict", "verdict"), ("category", "diagnosis"),
                                                 ("kind", "kind")))
    cols = ("paper", "where", "claim", "paper_value", "reproduced", "tolerance", "verdict", "diagnosis", "readings",
            "kind", "note")
    head = "".join(f"<th>{_esc(c.replace('_', ' '))}</th>" for c in cols)
    rows = []
    for _, r in ledger.iterrows():
        verdict_cls = re.sub(r"[^a-z]+", "-", str(r["verdict"]).lower()).strip("-")
        cells = "".join(
            f'<td class="verdict {verdict_cls}">{_esc(r[c])}</td>' if c == "verdict" else f"<td>{_esc(r[c])}</td>"
            for c in cols)
        rows.append(f'<tr data-paper="{_esc(r["paper"])}" data-verdict="{_esc(r["verdict"])}" '
                    f'data-kind="{_esc(r["kind"])}" data-category="{_esc(r["category"])}" '
                    f'id="claim-{_esc(r["id"])}">{cells}</tr>')
    return (f'<section id="ledger"><h2>Claims ledger</h2><p class="summary">{_esc(summary)}.</p>'
            f'<form id="ledger-filters" onsubmit="return false">{filters} <span id="ledger-count"></span></form>'
            f'<div class="scroll"><table class="data ledger"><thead><tr>{head}</tr></thead>'
            f'<tbody>{"".join(rows)}</tbody></table></div></section>')


_STYLE = """
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#fbfbfa}
header{background:#23364d;color:#fff;padding:1.2em 2em}header h1{margin:0 0 .2em;font-size:1.6em}
header p{margin:0;opacity:.9}nav{padding:.6em 2em;background:#e9edf2;position:sticky;top:0;z-index:1}
nav a{margin-right:1.2em;color:#23364d;text-decoration:none;font-weight:600}main{padding:0 2em 3em;max-width:1400px}
section{margin-top:2em;scroll-margin-top:3em}h2{border-bottom:2px solid #d5dbe2;padding-bottom:.2em}.meta{color:#4b5563}
figure{margin:1.2em 0;padding:.8em;background:#fff;border:1px solid #e2e6ea;border-radius:6px}
figure.fig img{max-width:min(100%,900px);height:auto;display:block;margin:0 auto}
figcaption{margin:.5em 0;color:#374151}.ref{font-weight:600;color:#23364d}.inferred{color:#6b7280;font-size:.9em}
.nocap{font-family:monospace}.file{font-size:.85em;margin-left:.5em}.more{color:#6b7280;font-size:.9em}
.scroll{overflow-x:auto}table.data{border-collapse:collapse;font-size:.88em}
table.data th,table.data td{border:1px solid #dde2e7;padding:.25em .5em;text-align:left;vertical-align:top}
table.data th{background:#f1f4f7;position:sticky;top:0}td.verdict{font-weight:600;white-space:nowrap}
td.holds{color:#166534;background:#ecfdf3}td.differs{color:#991b1b;background:#fef2f2}td.untestable{color:#92400e;background:#fffbeb}
td.not-reproduced-yet{color:#6b7280}#ledger-filters{margin:.6em 0}#ledger-filters label{margin-right:1em}
#ledger-count{color:#4b5563}details.metrics{margin:.6em 0}
.provenance{font-weight:600}.provenance.reduced-scale,.provenance.stale,.provenance.no-run-here{color:#92400e}
"""

_SCRIPT = """
(function () {
  var rows = Array.prototype.slice.call(document.querySelectorAll("#ledger tbody tr"));
  var selects = Array.prototype.slice.call(document.querySelectorAll("#ledger-filters select"));
  var count = document.getElementById("ledger-count");
  function apply() {
    var shown = 0;
    rows.forEach(function (row) {
      var keep = selects.every(function (s) { return !s.value || row.getAttribute("data-" + s.name) === s.value; });
      row.hidden = !keep;
      if (keep) { shown += 1; }
    });
    count.textContent = shown + " of " + rows.length + " rows";
  }
  selects.forEach(function (s) { s.addEventListener("change", apply); });
  apply();
})();
"""


def build(results: str | Path | None = "results") -> str:
    """The page's HTML for the results directory ``results``."""
    root = paths.results_dir(results)
    ledger = report.build(root)
    summary = report.summary(ledger)
    papers_of: dict[str, list[str]] = {}
    for claim in registry().values():
        papers_of.setdefault(claim.source, [])
        if claim.paper not in papers_of[claim.source]:
            papers_of[claim.source].append(claim.paper)
    stems = notebooks(root)
    nav = "".join(f'<a href="#nb-{_esc(s)}">{_esc(s)}</a>' for s in stems) + '<a href="#ledger">claims ledger</a>'
    provenance = report.notebook_provenance(root)
    sections = [_notebook_section(root, s, papers_of.get(s, []), provenance.get(s)) for s in stems]
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>tieringlab results</title>",
        # An inline icon: without one a browser asks the file system for favicon.ico (a console error).
        '<link rel="icon" href="data:,">',
        f"<style>{_STYLE}</style></head><body>",
        "<header><h1>tieringlab results</h1>"
        f"<p>{len(stems)} notebook{'' if len(stems) == 1 else 's'} · {_esc(summary)}. "
        "Generated by <code>python -m tieringlab.report</code> "
        "(the <code>report</code> stage of <code>dvc repro</code>) from this folder.</p></header>",
        f"<nav>{nav}</nav>",
        "<main>",
        *sections,
        _ledger_section(ledger, summary),
        "</main>",
        f"<script>{_SCRIPT}</script>",
        "</body></html>",
        "",
    ])


#: Where the executed notebooks are rendered to HTML (the ``report`` stage's output, beside ``index.html``).
NOTEBOOKS_HTML = "notebooks-html"

_NB_STYLE = """
body { font: 14px/1.45 system-ui, sans-serif; margin: 0 auto; max-width: 1100px; padding: 1em 2em; color: #222; }
.jp-Cell { margin: 0.8em 0; }
.jp-InputArea-prompt, .jp-OutputArea-prompt { display: none; }
.jp-CodeCell .jp-InputArea { background: #f6f8fa; border: 1px solid #e1e4e8; border-radius: 4px; padding: 0.4em 0.7em; }
pre { white-space: pre-wrap; margin: 0; font: 12.5px/1.4 ui-monospace, monospace; }
.jp-OutputArea-output pre { padding: 0.3em 0.7em; }
.jp-RenderedImage img, .jp-OutputArea-output img { max-width: 100%; height: auto; }
table { border-collapse: collapse; font-size: 12px; } td, th { border: 1px solid #ddd; padding: 2px 6px; }
.highlight .k, .highlight .kn, .highlight .kc { color: #a626a4; } .highlight .s1, .highlight .s2 { color: #50a14f; }
.highlight .c1 { color: #999; font-style: italic; } .highlight .mi, .highlight .mf { color: #986801; }
"""


def render_notebook(path: str | Path, title: str | None = None) -> str:
    """The executed notebook at ``path`` as one self-contained HTML page (nbconvert's ``basic`` template:
    no script or style sheet from a network, images already embedded in the notebook); the same
    notebook gives the same bytes. :class:`tieringlab.report.ReportError` names a file that is not a
    notebook."""
    import nbformat  # noqa: PLC0415  (only the report stage renders notebooks)
    from nbconvert import HTMLExporter  # noqa: PLC0415

    path = Path(path)
    try:
        nb = nbformat.read(path, as_version=4)
    except Exception as exc:  # noqa: BLE001  (nbformat raises JSON, validation and OS errors alike)
        raise report.ReportError(f"{path}: not a readable executed notebook ({type(exc).__name__}: "
                                 f"{str(exc)[:200]}); rerun its stage") from None
    body, _ = HTMLExporter(template_name="basic").from_notebook_node(nb)
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        f"<title>{_esc(title or path.stem)}</title>",
        '<link rel="icon" href="data:,">',
        f"<style>{_NB_STYLE}</style></head><body>",
        f'<p><a href="../index.html">results</a> · executed notebook <code>{_esc(path.name)}</code></p>',
        body,
        "</body></html>",
        "",
    ])


def write_notebooks(results: str | Path | None = "results") -> list[Path]:
    """Render every executed notebook of ``results`` to ``notebooks-html/NN_name.html`` (atomically) and
    delete pages whose notebook is gone; return the pages written."""
    root = paths.results_dir(results)
    folder = root / NOTEBOOKS_HTML
    executed = sorted((root / "notebooks").glob("[0-9][0-9]_*.ipynb")) if (root / "notebooks").is_dir() else []
    written = []
    for nb in executed:
        written.append(fileio.write_text(folder / f"{nb.stem}.html",
                                         render_notebook(nb, notebook_title(root, nb.stem))))
    if folder.is_dir():
        keep = {p.name for p in written}
        fileio.remove_stale_temps(folder, names=tuple(keep))
        for page in folder.glob("*.html"):
            if page.name not in keep:
                page.unlink()
    return written


def write(results: str | Path | None = "results") -> Path:
    """Write ``index.html`` under ``results`` atomically (after rendering the executed notebooks it links,
    :func:`write_notebooks`) and return its path."""
    root = paths.results_dir(results)
    page = build(root)  # first: what the page reads (ledger, manifests) is checked before anything is written
    write_notebooks(root)
    return fileio.write_text(root / "index.html", page)


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(prog="python -m tieringlab.site", description=__doc__.splitlines()[0])
    ap.add_argument("--results", default="results", help="results directory (default: results/ at the repo root)")
    args = ap.parse_args(argv)
    print(write(args.results))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
