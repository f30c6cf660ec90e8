"""The results site: ``results/index.html``, one self-contained page over everything the pipeline made.

Written by the ``report`` stage (``python -m tieringlab.report``, also ``tieringlab report``) after the
ledger. The page opens with

- **one verdict table per paper** (:func:`paper_counts`, from the ledger :func:`tieringlab.report.build`): its
  claim rows counted by the default reading's verdict and by diagnosis (every reading,
  :func:`tieringlab.report.counts_by_paper`), the other rows of the paper (preconditions, calibration and
  sanity checks) counted apart, and the paper's claim rows, each linked to what decided it;

then, for every notebook that left results (``results/{figures,tables,metrics,notebooks}/NN_name*``, found by
listing the folders, so a new notebook appears without touching this module): its title (the first heading
of the notebook), the papers its claims come from, a link to the executed notebook, its provenance
(:func:`tieringlab.report.notebook_provenance`: commit, commit date, scale, the parameters' hash and values),
every figure full width (the PNG embedded; a click enlarges it) and every table (the CSV rendered; a long one
collapsed, with the CSV to download) with its caption, the paper figure or table it reproduces and **the
ledger rows it decides**, and its scalar metrics; and last the claims ledger with filters by paper, verdict,
diagnosis and kind: the claims by paper then verdict (rows not reproduced yet last), the other kinds in a
table of their own.

Which figure decides which row comes from what is recorded, never typed here: a figure's or table's
``reproduces`` (its manifest, :class:`tieringlab.results.Outputs`) and a claim's ``where`` and ``source``
(:mod:`tieringlab.claims`) name paper figures and tables (:func:`references`); a figure of notebook N decides
the claims of notebook N that name one of the paper figures it reproduces (:func:`decides`). A row no figure
or table decides links to its notebook's section. Both directions are links (``#fig-...``, ``#claim-...``).

Captions come from the manifests :class:`tieringlab.results.Outputs` writes beside the files (the
``caption=`` and ``reproduces=`` arguments of ``Outputs.figure``/``Outputs.table``). Results written
before manifests existed, or files a notebook saved by other means, are still shown, in name order; their
paper figure is then inferred from a name such as ``fig6_mds_0`` or ``table1`` and marked as inferred.

Self-contained: images are embedded as ``data:`` URIs, the style sheet and the scripts (filters, the
lightbox that enlarges a figure) are inline, nothing is fetched from a network, so the file opens from the
file system (``file://``) with no server. The links to executed notebooks and CSV files are relative, for a
copy of the whole ``results/``. Each executed notebook is also rendered to
``results/notebooks-html/NN_name.html`` (nbconvert's basic template, an inline style sheet, nothing fetched),
the page's "executed notebook" link: a browser shows an ``.ipynb`` as raw JSON.
The page has no timestamp (the commit's date, not the run's): the same results give the same bytes.
"""

from __future__ import annotations

import argparse
import base64
import html
import json
import re
from collections import Counter
from pathlib import Path
from typing import Any

import pandas as pd

from tieringlab import fileio, paths, report
from tieringlab.claims import DIFFERS, HOLDS, MISSING, UNTESTABLE, registry
from tieringlab.results import MANIFEST

#: Rows of a table shown on the page (the whole table is in the linked CSV).
MAX_TABLE_ROWS = 60
#: A table with more rows than this is shown collapsed (``<details>``), beside its CSV to download.
LONG_TABLE_ROWS = 15
#: A figure's ledger rows are listed collapsed above this many (a paper's claim rows always are).
LONG_LIST = 12
#: The ledger's order of verdicts within a paper; rows not reproduced yet come after every reproduced row.
VERDICT_ORDER = (HOLDS, DIFFERS, UNTESTABLE, MISSING)
#: A paper's verdict table: its claim rows counted by the default reading's verdict (these column labels) ...
VERDICT_LABELS = {HOLDS: "hold", DIFFERS: "differ", UNTESTABLE: "untestable", MISSING: "not reproduced yet"}
#: ... and by diagnosis over every reading (:data:`tieringlab.report.COUNT_LABELS`); the table's columns:
COUNT_COLUMNS = ("hold", "differ", "reading-dependent", "untestable", "not reproduced yet")
#: The ledger's second table: the rows that are not evidence about the papers, in this order.
OTHER_KINDS = ("precondition", "calibration", "sanity", "extension")
_NAME_REF = re.compile(r"^(fig|figure|table|tab)_?(\d+)([a-z]?)(?:_|$)", re.IGNORECASE)


def _esc(value: Any) -> str:
    return html.escape("" if value is None else str(value), quote=True)


def _slug(text: str) -> str:
    """``text`` as the tail of an HTML id (letters, digits, ``.``, ``_``, ``-``)."""
    return re.sub(r"[^A-Za-z0-9._-]+", "-", str(text)).strip("-") or "x"


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


# ---------------------------------------------------------------- which figure decides which ledger row

_PAPER_WORD = r"(?:GLB-vFRM|vFRM|thesis|AutoTiering|OTF-AST|EAFC)"
_NUM = r"(?:\d+|[IVXL]+\b)"
_PANEL = r"(?:[a-z](?![A-Za-z])|(?:,\s*|\s)?\([a-z]\))"  # "4a", "6(a)", "5 (b)", "8 (a), (b)"
_SUB = rf"(?:{_PANEL}(?:[-–]{_PANEL})?)*"  # panels and panel ranges: "4a-d", "6(a)-(f)"
_REF = re.compile(rf"(?:(?P<paper>{_PAPER_WORD})\s+)?(?P<kind>Fig(?:ure)?s?\.?|Tables?|Tab\.)\s*"
                  rf"(?P<nums>{_NUM}{_SUB}(?:\s*(?:-|–|,|and|&|/)\s*{_NUM}{_SUB})*)")
_ROMAN = {"I": 1, "V": 5, "X": 10, "L": 50}


def _number(token: str) -> int:
    if token.isdigit():
        return int(token)
    total = 0
    for i, ch in enumerate(token):  # subtractive notation: IV, IX, XL
        v = _ROMAN[ch]
        total += -v if i + 1 < len(token) and _ROMAN[token[i + 1]] > v else v
    return total


def _paper_key(name: str) -> str:
    """A paper's name as :func:`references` compares it: ``"Tai thesis (ARA)"`` and ``"thesis"`` -> ``"thesis"``,
    ``"GLB-vFRM"`` -> ``"vfrm"``, else the name in lower case."""
    low = name.lower()
    return "thesis" if "thesis" in low else "vfrm" if low == "glb-vfrm" else low


def references(text: str | None, paper: str | None = None) -> frozenset[tuple[str | None, str, int, str | None]]:
    """The paper figures and tables ``text`` names, as ``(paper, "fig" | "table", number, panel)``: ``"vFRM Fig. 6
    (thesis Fig. 20)"`` -> vFRM's Fig. 6 and the thesis's Fig. 20 (panel None: the whole figure); ``"Figs. 7-9"``
    -> 7, 8, 9; ``"Table IV"`` -> Table 4; ``"Fig. 4a-d"`` -> panels a, b, c, d of Fig. 4; ``"Fig. 6(b)"``,
    ``"Fig. 4a/4c"`` likewise. A reference without a paper before it belongs to ``paper`` (a claim's own paper),
    else to the first paper ``text`` names, else to no paper (``None``: it matches that figure of any paper).
    Sections (``"Sec. 3.3"``) are no figure."""
    if not text:
        return frozenset()
    first = re.search(_PAPER_WORD, text)
    default = _paper_key(paper) if paper else _paper_key(first.group(0)) if first else None
    out = set()
    for m in _REF.finditer(text):
        owner = _paper_key(m.group("paper")) if m.group("paper") else default
        kind = "table" if m.group("kind").lower().startswith("tab") else "fig"
        groups: list[tuple[int, list[str]]] = []  # (number, its panels)
        span = False
        for token in re.findall(r"\d+|[IVXL]+|[a-z]|[-–]", re.sub(r"\band\b", ",", m.group("nums"))):
            if token in "-–":
                span = True
                continue
            if token.islower():  # a panel; "a-d": every panel from a to d
                panels = groups[-1][1]
                first = chr(ord(panels[-1]) + 1) if span and panels else token
                panels += [chr(c) for c in range(ord(first), ord(token) + 1)] or [token]
            else:
                n = _number(token)
                if span and groups and 0 < n - groups[-1][0] <= 20:  # "7-9": 8 too
                    groups += [(k, []) for k in range(groups[-1][0] + 1, n)]
                groups.append((n, []))
            span = False
        out.update((owner, kind, n, p) for n, panels in groups for p in (panels or [None]))
    return frozenset(out)


def decides(item_refs: frozenset, claim_refs: frozenset) -> bool:
    """Whether a figure (or table) reproducing ``item_refs`` decides a claim of its notebook naming ``claim_refs``
    (:func:`references`): they share a paper figure (or table) by number, of the same paper or of one left unnamed,
    and the same panel where both name one."""
    return any(k1 == k2 and n1 == n2 and (p1 is None or p2 is None or p1 == p2)
               and (a1 is None or a2 is None or a1 == a2)
               for p1, k1, n1, a1 in item_refs for p2, k2, n2, a2 in claim_refs)


# ---------------------------------------------------------------- figures and tables of a notebook


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


def _executed(root: Path, stem: str) -> dict | None:
    path = root / "notebooks" / f"{stem}.ipynb"
    try:
        return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None
    except (json.JSONDecodeError, UnicodeDecodeError):
        return None


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


def notebook_parameters(root: Path, stem: str) -> list[tuple[str, str]]:
    """The parameters the executed notebook ran with: ``[("defaults", source of its cell tagged parameters),
    ("injected", source of the cell papermill injected)]`` (those present; empty without an executed notebook)."""
    nb = _executed(root, stem)
    out = []
    for cell in (nb or {}).get("cells", []):
        tags = (cell.get("metadata") or {}).get("tags") or []
        for tag, label in (("parameters", "defaults (the notebook's parameters cell)"),
                           ("injected-parameters", "injected by the run (these override the defaults)")):
            if cell.get("cell_type") == "code" and tag in tags:
                out.append((label, "".join(cell.get("source", [])).strip()))
    return out


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
    table = (f'<div class="scroll"><table class="data"><thead><tr>{head}</tr></thead><tbody>{body}</tbody>'
             f'</table></div>{more}')
    if len(df) > LONG_TABLE_ROWS:
        return (f'<details class="long-table"><summary>show the table ({len(df)} rows × {len(df.columns)} '
                f'columns)</summary>{table}</details>')
    return table


def _caption(item: dict, rel: str, download: bool = False) -> str:
    ref = ""
    if item["reproduces"]:
        how = ' <span class="inferred">(inferred from the name)</span>' if item["inferred"] else ""
        ref = f'<span class="ref">reproduces {_esc(item["reproduces"])}</span>{how} · '
    text = _esc(item["caption"]) if item["caption"] else f'<span class="nocap">{_esc(item["name"])}</span>'
    link = (f'<a class="file" href="{_esc(rel)}" download>download CSV ({_esc(item["path"].name)})</a>' if download
            else f'<a class="file" href="{_esc(rel)}">{_esc(item["path"].name)}</a>')
    return f"<figcaption>{ref}{text} {link}</figcaption>"


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


def _cls(text: str) -> str:
    return re.sub(r"[^a-z]+", "-", str(text).lower()).strip("-")


def _row_links(ids: list[str], ledger: pd.DataFrame) -> str:
    """Links to the ledger rows ``ids`` (each: where · verdict, the claim as its title); collapsed when long."""
    links = "".join(
        f'<a class="chip {_cls(ledger.at[cid, "verdict"])}" href="#claim-{_esc(cid)}" '
        f'title="{_esc(ledger.at[cid, "claim"])}">{_esc(ledger.at[cid, "where"])} · '
        f'{_esc(ledger.at[cid, "verdict"])}</a>' for cid in ids)
    n = len(ids)
    label = f"decides {n} ledger row{'' if n == 1 else 's'}"
    if n > LONG_LIST:
        tally = Counter(ledger.loc[ids, "verdict"])
        label += " (" + ", ".join(f"{tally[v]} {v}" for v in VERDICT_ORDER if tally[v]) + ")"
        return f'<details class="decides"><summary>{label}</summary><p class="chips">{links}</p></details>'
    return f'<p class="decides"><span class="label">{label}:</span> {links}</p>'


def _provenance_html(root: Path, stem: str, prov: dict | None) -> str:
    """The provenance of a notebook's results: status, commit (dirty or not), commit date, scale, parameters."""
    if prov is None:
        return '<p class="prov"><span class="provenance no-run-here">no metrics: provenance unknown</span></p>'
    parts = [f'<dt>run</dt><dd><span class="provenance {_cls(prov["status"].split(",")[0].split("(")[0])}">'
             f'{_esc(prov["status"])}</span></dd>']
    if prov.get("commit"):
        dirty = " (the tree differed from it: dirty)" if prov.get("dirty") else ""
        parts.append(f'<dt>commit</dt><dd><code>{_esc(prov["commit"])}</code>{_esc(dirty)}</dd>')
    if prov.get("commit_date"):
        parts.append(f'<dt>date</dt><dd>{_esc(prov["commit_date"])} (the commit\'s)</dd>')
    if prov.get("scale"):
        scale = {"paper": "paper (the parameters params.yaml gives this notebook)",
                 "reduced": "reduced (not params.yaml's parameters: e.g. the notebook's small defaults)"}
        parts.append(f'<dt>scale</dt><dd>{_esc(scale.get(prov["scale"], prov["scale"]))}</dd>')
    values = notebook_parameters(root, stem)
    if prov.get("params_hash") or values:
        digest = f'hash <code>{_esc(str(prov["params_hash"])[:12])}</code>' if prov.get("params_hash") else ""
        cells = "".join(f'<p class="label">{_esc(label)}</p><pre>{_esc(src)}</pre>' for label, src in values)
        shown = (f'<details class="params"><summary>values</summary>{cells}</details>' if values else "")
        parts.append(f"<dt>parameters</dt><dd>{digest} {shown}</dd>")
    return f'<dl class="prov">{"".join(parts)}</dl>'


def _notebook_section(root: Path, stem: str, papers: list[str], provenance: dict | None, found: dict,
                      decided: dict[str, list[str]], ledger: pd.DataFrame) -> str:
    title = notebook_title(root, stem)
    parts = [f'<section class="notebook" id="nb-{_esc(stem)}"><h2>{_esc(title)}</h2>']
    meta = [f"<code>notebooks/{_esc(stem)}.ipynb</code>"]
    executed = root / "notebooks" / f"{stem}.ipynb"
    if executed.is_file():
        meta.append(f'<a href="{NOTEBOOKS_HTML}/{_esc(stem)}.html">executed notebook</a> '
                    f'(<a href="notebooks/{_esc(stem)}.ipynb">.ipynb</a>)')
    if papers:
        meta.append("papers: " + "; ".join(f'<a href="#paper-{_slug(p)}">{_esc(p)}</a>' for p in papers))
    parts.append(f'<p class="meta">{" · ".join(meta)}</p>')
    parts.append(_provenance_html(root, stem, provenance))
    for item in found["figures"]:
        rel = f"figures/{stem}/{item['path'].name}"
        rows = decided.get(item["id"], [])
        parts.append(f'<figure class="fig" id="{item["id"]}"><img class="zoom" src="{_data_uri(item["path"])}" '
                     f'alt="{_esc(item["name"])}" tabindex="0" title="click to enlarge" loading="eager">'
                     f'{_caption(item, rel)}{_row_links(rows, ledger) if rows else ""}</figure>')
    for item in found["tables"]:
        rel = f"tables/{stem}/{item['path'].name}"
        rows = decided.get(item["id"], [])
        parts.append(f'<figure class="tab" id="{item["id"]}">{_caption(item, rel, download=True)}'
                     f'{_row_links(rows, ledger) if rows else ""}{_table_html(item["path"])}</figure>')
    scalars = _scalars(root, stem)
    if scalars:
        rows = "".join(f"<tr><td><code>{_esc(k)}</code></td><td>{_esc(_fmt_cell(v))}</td></tr>" for k, v in scalars)
        parts.append(f'<details class="metrics"><summary>metrics ({len(scalars)})</summary>'
                     f'<div class="scroll"><table class="data"><tbody>{rows}</tbody></table></div></details>')
    parts.append("</section>")
    return "\n".join(parts)


# ---------------------------------------------------------------- the verdict tables and the ledger


def paper_order(ledger: pd.DataFrame) -> list[str]:
    """The ledger's papers in the order of the notebooks that reproduce them (the first notebook with a row of the
    paper), ties in ledger order: vFRM (notebooks 00-03) before the thesis's G-vFRM (03) and ARA (04), ..."""
    first: dict[str, tuple] = {}
    for i, r in enumerate(ledger.itertuples()):
        key = (_stem_key(Path(r.source).stem), i)
        first[r.paper] = min(first.get(r.paper, key), key)
    return sorted(first, key=first.__getitem__)


def paper_counts(ledger: pd.DataFrame) -> dict[str, dict[str, dict[str, int]]]:
    """``{paper: {"verdict": {label: n}, "diagnosis": {label: n}}}`` over each paper's rows of kind ``claim`` (the
    papers :func:`tieringlab.report.counts_by_paper` lists, in :func:`paper_order`): counts by the default
    reading's verdict (:data:`VERDICT_LABELS`) and by diagnosis (:data:`tieringlab.report.COUNT_LABELS`); both
    include ``claims``."""
    by_diagnosis = report.counts_by_paper(ledger)
    claims = ledger[ledger["kind"] == "claim"]
    out = {}
    for paper in (p for p in paper_order(ledger) if p in by_diagnosis.index):
        row = by_diagnosis.loc[paper]
        verdicts = Counter(claims.loc[claims["paper"] == paper, "verdict"])
        out[paper] = {
            "verdict": {"claims": int(row["claims"]), **{VERDICT_LABELS[v]: verdicts.get(v, 0) for v in VERDICT_ORDER}},
            "diagnosis": {"claims": int(row["claims"]), **{c: int(row[c]) for c in COUNT_COLUMNS}},
        }
    return out


def _shown_in(cid: str, source: str, deciders: dict[str, list[dict]], sections: set[str]) -> str:
    found = [f'<a class="decider" href="#{item["id"]}">{"figure" if item["id"].startswith("fig-") else "table"}: '
             f'{_esc(item["reproduces"] or item["name"])}</a>' for item in deciders.get(cid, [])]
    if found:
        return " ".join(found)
    if source in sections:
        return f'<a href="#nb-{_esc(source)}">notebook {_esc(source.split("_")[0])}</a>'
    return f'<span class="muted">notebook {_esc(source.split("_")[0])} (not run)</span>'


def _sorted(ledger: pd.DataFrame) -> pd.DataFrame:
    """Claims first, by paper (:func:`paper_order`) then verdict (:data:`VERDICT_ORDER`), every row not reproduced yet
    after the reproduced ones; then the other kinds (:data:`OTHER_KINDS`) the same way."""
    paper_pos = {p: i for i, p in enumerate(paper_order(ledger))}
    verdict_pos = {v: i for i, v in enumerate(VERDICT_ORDER)}
    kind_pos = {k: i for i, k in enumerate(("claim", *OTHER_KINDS))}
    keys = [(kind_pos.get(r.kind, 9), r.verdict == MISSING, paper_pos[r.paper], verdict_pos.get(r.verdict, 9), i)
            for i, r in enumerate(ledger.itertuples())]
    return ledger.iloc[sorted(range(len(ledger)), key=keys.__getitem__)]


def _verdict_section(ledger: pd.DataFrame, shown_in: dict[str, str], stems: list[str]) -> str:
    counts = paper_counts(ledger)
    head = ('<tr><th></th><th title="the default reading\'s verdict">verdict</th>'
            '<th title="over every reading the notebook ran">diagnosis</th></tr>')
    cards = []
    for paper, by in counts.items():
        rows_of = ledger[ledger["paper"] == paper]
        body = []
        for c in ("claims", *COUNT_COLUMNS):
            cells = "".join(f'<td class="n" data-by="{what}" data-count="{_esc(c)}">{by[what][c]}</td>'
                            if c in by[what] else '<td class="n na">–</td>' for what in ("verdict", "diagnosis"))
            body.append(f'<tr class="{_cls(c)}"><th scope="row">{_esc(c)}</th>{cells}</tr>')
        n = by["diagnosis"]["claims"]
        bar = "".join(f'<span class="seg {_cls(c)}" style="flex-grow:{by["diagnosis"][c]}" '
                      f'title="{by["diagnosis"][c]} {_esc(c)}"></span>' for c in COUNT_COLUMNS if by["diagnosis"][c])
        others = []
        for kind in OTHER_KINDS:
            k = rows_of[rows_of["kind"] == kind]
            if len(k):
                c = Counter(k["verdict"])
                fails = "fail" if kind == "precondition" else "differ"
                others.append(f"{len(k)} {kind} row{'' if len(k) == 1 else 's'} ({c.get(HOLDS, 0)} hold, "
                              f"{c.get(DIFFERS, 0)} {fails}, {c.get(MISSING, 0)} not measured)")
        sources = sorted(dict.fromkeys(rows_of["source"]), key=lambda s: _stem_key(Path(s).stem))
        nbs = ", ".join(f'<a href="#nb-{_esc(Path(s).stem)}">{_esc(Path(s).stem)}</a>' if Path(s).stem in stems
                        else f'<span class="muted">{_esc(Path(s).stem)} (not run)</span>' for s in sources)
        claim_rows = _sorted(rows_of[rows_of["kind"] == "claim"])
        items_html = "".join(
            f'<tr class="paper-row"><td>{_esc(r.where)}</td><td>{_esc(r.claim)}</td>'
            f'<td class="verdict {_cls(r.verdict)}"><a href="#claim-{_esc(r.id)}">{_esc(r.verdict)}</a></td>'
            f'<td>{_esc(r.diagnosis)}</td><td>{shown_in[r.id]}</td></tr>' for r in claim_rows.itertuples())
        table = (f'<div class="scroll"><table class="data paper-rows"><thead><tr><th>where</th><th>claim</th>'
                 f'<th>verdict</th><th>diagnosis</th><th>decided in</th></tr></thead><tbody>{items_html}</tbody>'
                 f'</table></div>')
        cards.append(
            f'<section class="paper" id="paper-{_slug(paper)}"><h3>{_esc(paper)}</h3>'
            f'<div class="bar" aria-hidden="true">{bar}</div>'
            f'<div class="counts"><div class="scroll fit"><table class="data verdicts" data-paper="{_esc(paper)}">'
            f'<thead>{head}</thead><tbody>{"".join(body)}</tbody></table></div><div>'
            + (f'<p class="others">Not counted: {_esc("; ".join(others))}.</p>' if others else "")
            + f'<p class="meta">notebooks: {nbs} · <a href="#ledger" data-show-paper="{_esc(paper)}">'
            f'its {len(rows_of)} rows in the ledger</a></p></div></div>'
            f'<details class="paper-claims"><summary>the {n} claim row{"" if n == 1 else "s"}</summary>'
            f'{table}</details></section>')
    legend = ("Each paper's claim rows counted by the default reading's <em>verdict</em> and by <em>diagnosis</em> "
              "over every reading the notebooks ran: <em>hold</em> / <em>differ</em> under every reading, "
              "<em>reading-dependent</em> (the readings disagree), <em>untestable</em> (a precondition of the "
              "claim's mechanism fails on our run, so the run says nothing about the paper). Preconditions, "
              "calibration and sanity checks are not evidence about the papers: counted apart.")
    return (f'<section id="verdicts"><h2>Verdicts by paper</h2><p class="legend">{legend}</p>'
            f'<div class="papers">{"".join(cards)}</div></section>')


_LEDGER_COLS = ("paper", "where", "claim", "paper_value", "reproduced", "tolerance", "verdict", "diagnosis",
                "readings", "kind", "note")


#: A ledger note longer than this shows its first words, the rest on a click (``<details>``).
LONG_NOTE = 220


def _cell(col: str, value: Any) -> str:
    text = "" if value is None else str(value)
    if col == "verdict":
        return f'<td class="verdict {_cls(text)}">{_esc(text)}</td>'
    if col in ("note", "diagnosis", "readings") and len(text) > LONG_NOTE:
        cut = text.rfind(" ", 0, LONG_NOTE - 60)
        cut = cut if cut > 0 else LONG_NOTE - 60
        return (f'<td class="c-{col}"><details class="note"><summary>{_esc(text[:cut])} …</summary>'
                f"{_esc(text[cut:])}</details></td>")
    return f'<td class="c-{col}">{_esc(text)}</td>'


def _ledger_rows(ledger: pd.DataFrame, shown_in: dict[str, str]) -> str:
    rows = []
    for _, r in ledger.iterrows():
        cells = "".join(_cell(c, r[c]) + (f'<td class="c-shown">{shown_in[r["id"]]}</td>' if c == "where" else "")
                        for c in _LEDGER_COLS)
        rows.append(f'<tr data-paper="{_esc(r["paper"])}" data-verdict="{_esc(r["verdict"])}" '
                    f'data-kind="{_esc(r["kind"])}" data-category="{_esc(r["category"])}" '
                    f'id="claim-{_esc(r["id"])}">{cells}</tr>')
    return "".join(rows)


def _ledger_section(ledger: pd.DataFrame, summary: str, shown_in: dict[str, str]) -> str:
    def options(col: str) -> str:
        values = list(dict.fromkeys(ledger[col]))
        return "".join(f'<option value="{_esc(v)}">{_esc(v)}</option>' for v in values)

    filters = "".join(
        f'<label>{label} <select name="{col}" data-filter="{col}"><option value="">all</option>{options(col)}'
        f"</select></label>" for col, label in (("paper", "paper"), ("verdict", "verdict"), ("category", "diagnosis"),
                                                 ("kind", "kind")))
    head = "".join(f"<th>{_esc(c.replace('_', ' '))}</th>" + ("<th>decided in</th>" if c == "where" else "")
                   for c in _LEDGER_COLS)
    ordered = _sorted(ledger)
    claims, others = ordered[ordered["kind"] == "claim"], ordered[ordered["kind"] != "claim"]

    def table(rows: pd.DataFrame, cls: str) -> str:
        return (f'<div class="scroll"><table class="data ledger {cls}"><thead><tr>{head}</tr></thead>'
                f'<tbody>{_ledger_rows(rows, shown_in)}</tbody></table></div>')

    return (f'<section id="ledger"><h2>Claims ledger</h2><p class="summary">{_esc(summary)}.</p>'
            f'<form id="ledger-filters" onsubmit="return false">{filters} <span id="ledger-count"></span></form>'
            f'<h3 id="ledger-claims">Claims of the papers ({len(claims)}): by paper, then verdict; rows not '
            f'reproduced yet last</h3>{table(claims, "claims")}'
            f'<h3 id="ledger-others">Not evidence about the papers ({len(others)}): preconditions of our runs, '
            f'calibration and sanity checks, statements of our own</h3>{table(others, "others")}</section>')


_STYLE = """
*,*::before,*::after{box-sizing:border-box}
body{font:15px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d232a;background:#fbfbfa}
header{background:#23364d;color:#fff;padding:1.2em 2em}header h1{margin:0 0 .2em;font-size:1.6em}
header p{margin:0;opacity:.85;font-size:.9em}header p.lead{font-size:1.1em;opacity:1;margin-bottom:.3em}
header code{color:#fff}
nav{padding:.5em 2em;background:#e9edf2;position:sticky;top:0;z-index:2;display:flex;gap:.3em 1.1em;
overflow-x:auto;white-space:nowrap;scrollbar-width:thin}
nav a{color:#23364d;text-decoration:none;font-weight:600}nav a.nb{font-weight:500}
main{padding:0 2em 3em}
section{margin-top:2em;scroll-margin-top:3em}h2{border-bottom:2px solid #d5dbe2;padding-bottom:.2em}
h3{margin:.2em 0 .4em}.meta,.legend,.others{color:#4b5563}.muted{color:#6b7280}
code,pre,figcaption,.meta,.chip{overflow-wrap:anywhere}td{overflow-wrap:break-word}
pre{white-space:pre-wrap;background:#f6f8fa;border:1px solid #e1e4e8;border-radius:4px;padding:.4em .6em;
font:12.5px/1.4 ui-monospace,monospace}
figure{margin:1.2em 0;padding:.8em;background:#fff;border:1px solid #e2e6ea;border-radius:6px;scroll-margin-top:3em}
figure.fig img{max-width:100%;height:auto;display:block;margin:0 auto;cursor:zoom-in}
figure.fig img:focus-visible{outline:3px solid #2563eb;outline-offset:2px}
figure:target{box-shadow:0 0 0 3px #f59e0b}tr:target>td{background:#fff1cc}tr{scroll-margin-top:3.5em}
figcaption{margin:.5em 0;color:#374151}.ref{font-weight:600;color:#23364d}.inferred{color:#6b7280;font-size:.9em}
.nocap{font-family:monospace}.file{font-size:.85em;margin-left:.5em}.more{color:#6b7280;font-size:.9em}
.decides{margin:.4em 0;font-size:.9em}.decides .label,.decides summary{color:#4b5563;font-weight:600}
.chips{margin:.3em 0}
.chip{display:inline-block;margin:.15em .25em .15em 0;padding:.05em .5em;border-radius:999px;border:1px solid #d1d5db;
text-decoration:none;color:#1f2937;background:#f3f4f6}
.chip.holds{background:#ecfdf3;border-color:#86efac;color:#166534}.chip.differs{background:#fef2f2;border-color:#fca5a5;
color:#991b1b}.chip.untestable{background:#fffbeb;border-color:#fcd34d;color:#92400e}
.scroll{overflow-x:auto;max-width:100%}table.data{border-collapse:collapse;font-size:.88em}
table.data th,table.data td{border:1px solid #dde2e7;padding:.25em .5em;text-align:left;vertical-align:top}
table.data thead th{background:#f1f4f7;position:sticky;top:0}td.verdict{font-weight:600;white-space:nowrap}
td.holds{color:#166534;background:#ecfdf3}td.differs{color:#991b1b;background:#fef2f2}
td.untestable{color:#92400e;background:#fffbeb}td.not-reproduced-yet{color:#6b7280}
td.verdict a{color:inherit}a.decider{display:block;margin-bottom:.25em}
table.ledger td.c-claim{min-width:16em}table.ledger td.c-note{min-width:20em;font-size:.92em;color:#374151}
table.ledger td.c-diagnosis,table.ledger td.c-readings{min-width:9em}table.ledger td.c-where{min-width:6em}
details.note summary{list-style:none}details.note summary::after{content:" more";color:#2563eb}
details.note[open] summary::after{content:""}
.papers{display:grid;grid-template-columns:repeat(auto-fill,minmax(min(100%,430px),1fr));gap:1em;align-items:start}
.paper{margin:0;padding:.8em 1em;background:#fff;border:1px solid #e2e6ea;border-radius:6px;min-width:0}
.paper:has(details.paper-claims[open]){grid-column:1/-1}
.paper .meta,.paper .others{font-size:.88em;margin:.4em 0}
table.verdicts td.n{text-align:right;font-variant-numeric:tabular-nums;min-width:5.5em}
table.verdicts th[scope=row]{font-weight:500;background:#f8fafc;white-space:nowrap}
table.verdicts tr.claims{font-weight:700}table.verdicts tr.hold td{color:#166534}
table.verdicts tr.differ td{color:#991b1b}
table.verdicts tr.untestable td,table.verdicts tr.reading-dependent td{color:#92400e}
table.verdicts tr.not-reproduced-yet td,table.verdicts td.na{color:#6b7280}
.paper .counts{display:flex;flex-wrap:wrap;gap:.3em 1.2em;align-items:flex-start}.paper .counts>div{flex:1 1 14em}
.paper .counts>div.fit{flex:0 0 auto}
.bar{display:flex;height:.55em;border-radius:3px;overflow:hidden;background:#e5e7eb;margin:.2em 0 .6em}
.seg.hold{background:#22c55e}.seg.differ{background:#ef4444}.seg.reading-dependent{background:#f59e0b}
.seg.untestable{background:#fcd34d}.seg.not-reproduced-yet{background:#d1d5db}
details>summary{cursor:pointer}details.long-table,details.metrics,details.paper-claims{margin:.6em 0}
dl.prov{display:grid;grid-template-columns:max-content 1fr;gap:.1em .8em;margin:.4em 0 1em;font-size:.9em}
dl.prov dt{color:#4b5563;font-weight:600}dl.prov dd{margin:0;min-width:0}
.provenance{font-weight:600}.provenance.reduced-scale,.provenance.stale,.provenance.no-run-here{color:#92400e}
#ledger-filters{margin:.6em 0;display:flex;flex-wrap:wrap;gap:.4em 1em;align-items:center}
#ledger-count{color:#4b5563}
#lightbox{position:fixed;inset:0;z-index:10;background:rgba(15,20,28,.97);overflow:auto;display:flex;
flex-direction:column;align-items:center;padding:2.5em 1em 1em}
#lightbox img{width:100%;height:calc(100vh - 7em);object-fit:contain;cursor:zoom-in;display:block;flex:none}
#lightbox.natural{align-items:flex-start}
#lightbox.natural img{width:auto;height:auto;background:#fff;cursor:zoom-out}
#lightbox p{color:#e5e7eb;max-width:60em;margin:.6em auto 0;font-size:.9em}
#lightbox button{position:fixed;top:.4em;right:.6em;font-size:1.6em;line-height:1;background:none;color:#fff;
border:0;cursor:pointer;padding:.1em .3em}
@media (max-width:640px){header,nav{padding-left:.8em;padding-right:.8em}main{padding:0 .8em 2em}
body{font-size:14px}figure{padding:.5em}.paper{padding:.6em}nav{scrollbar-width:none}}
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
  // a link to a row or figure shows it: a filter that hides the row is cleared, a collapsed list opened
  function reveal(id) {
    var el = id && document.getElementById(id);
    if (!el) { return; }
    if (el.hidden && el.hasAttribute("data-verdict")) {
      selects.forEach(function (s) { s.value = ""; });
      apply();
    }
    for (var p = el.parentElement; p; p = p.parentElement) {
      if (p.tagName === "DETAILS") { p.open = true; }
    }
  }
  document.addEventListener("click", function (e) {
    var a = e.target.closest && e.target.closest("a[href^='#']");
    if (!a) { return; }
    var paper = a.getAttribute("data-show-paper");
    if (paper !== null) {
      selects.forEach(function (s) { s.value = s.name === "paper" ? paper : ""; });
      apply();
    }
    reveal(decodeURIComponent(a.getAttribute("href").slice(1)));
  });
  if (location.hash) {
    var target = decodeURIComponent(location.hash.slice(1));
    reveal(target);
    var el = document.getElementById(target);
    if (el) { el.scrollIntoView(); }
  }
  // click (or Enter on) a figure: the enlarged view; click it for the natural size; Esc, the button or outside closes
  var box = null, opener = null;
  function close() {
    if (!box) { return; }
    box.remove();
    box = null;
    if (opener) { opener.focus(); }
  }
  function open(img) {
    close();
    opener = img;
    box = document.createElement("div");
    box.id = "lightbox";
    box.setAttribute("role", "dialog");
    box.setAttribute("aria-modal", "true");
    box.setAttribute("aria-label", "enlarged figure");
    var button = document.createElement("button");
    button.type = "button";
    button.textContent = "\\u00d7";
    button.setAttribute("aria-label", "close");
    var big = document.createElement("img");
    big.src = img.src;
    big.alt = img.alt;
    var caption = document.createElement("p");
    var fc = img.parentElement.querySelector("figcaption");
    caption.textContent = (fc ? fc.textContent : img.alt) + " (click the figure for its full resolution; Esc closes)";
    box.appendChild(button);
    box.appendChild(big);
    box.appendChild(caption);
    box.addEventListener("click", function (e) {
      if (e.target === big) { box.classList.toggle("natural"); } else if (e.target !== caption) { close(); }
    });
    document.body.appendChild(box);
    button.focus();
  }
  Array.prototype.forEach.call(document.querySelectorAll("img.zoom"), function (img) {
    img.addEventListener("click", function () { open(img); });
    img.addEventListener("keydown", function (e) {
      if (e.key === "Enter" || e.key === " ") { e.preventDefault(); open(img); }
    });
  });
  document.addEventListener("keydown", function (e) { if (e.key === "Escape") { close(); } });
})();
"""


def links(root: Path, stems: list[str], ledger: pd.DataFrame) -> tuple[dict, dict[str, list[str]], dict]:
    """The figures and tables of every notebook (``{stem: {"figures": [...], "tables": [...]}}``, each item with
    its page ``id`` and ``refs``), which ledger rows each decides (``{item id: [claim id, ...]}``, ledger order)
    and which items decide each row (``{claim id: [item, ...]}``): :func:`decides` between the item's
    ``reproduces`` and the claim's ``where`` (and paper), within the claim's notebook (``source``)."""
    found = {}
    for stem in stems:
        found[stem] = {"figures": items(root / "figures" / stem, "figures", (".png", ".svg")),
                       "tables": items(root / "tables" / stem, "tables", (".csv",))}
        for kind, prefix in (("figures", "fig"), ("tables", "tab")):
            for item in found[stem][kind]:
                item["id"] = f"{prefix}-{_slug(stem)}-{_slug(item['name'])}"
                item["refs"] = references(item["reproduces"])
    decided: dict[str, list[str]] = {}
    deciders: dict[str, list[dict]] = {}
    defined = registry()
    for cid in ledger["id"]:
        claim = defined[cid]
        if claim.source not in found:
            continue
        refs = references(claim.where, claim.paper)
        for item in found[claim.source]["figures"] + found[claim.source]["tables"]:
            if decides(item["refs"], refs):
                decided.setdefault(item["id"], []).append(cid)
                deciders.setdefault(cid, []).append(item)
    return found, decided, deciders


def build(results: str | Path | None = "results") -> str:
    """The page's HTML for the results directory ``results``."""
    root = paths.results_dir(results)
    ledger = report.build(root)
    provenance = ledger.attrs.get("provenance")
    if provenance is None:
        provenance = report.notebook_provenance(root)
    ledger = ledger.assign(category=report.category(ledger))
    summary = report.summary(ledger)
    claims_part, _, rest_part = summary.partition("; ")
    papers_of: dict[str, list[str]] = {}
    for claim in registry().values():
        papers_of.setdefault(claim.source, [])
        if claim.paper not in papers_of[claim.source]:
            papers_of[claim.source].append(claim.paper)
    stems = notebooks(root)
    found, decided, deciders = links(root, stems, ledger)
    shown_in = {r.id: _shown_in(r.id, Path(r.source).stem, deciders, set(stems)) for r in ledger.itertuples()}
    by_id = ledger.set_index("id", drop=False)
    sections = [_notebook_section(root, s, papers_of.get(s, []), provenance.get(s), found[s], decided, by_id)
                for s in stems]
    nav = ('<a href="#verdicts">verdicts</a>'
           + "".join(f'<a class="nb" href="#nb-{_esc(s)}">{_esc(s)}</a>' for s in stems)
           + '<a href="#ledger">claims ledger</a>')
    return "\n".join([
        "<!DOCTYPE html>",
        '<html lang="en"><head><meta charset="utf-8">',
        '<meta name="viewport" content="width=device-width, initial-scale=1">',
        "<title>tieringlab results</title>",
        # An inline icon: without one a browser asks the file system for favicon.ico (a console error).
        '<link rel="icon" href="data:,">',
        f"<style>{_STYLE}</style></head><body>",
        "<header><h1>tieringlab results</h1>"
        f"<p class=\"lead\">{len(stems)} notebook{'' if len(stems) == 1 else 's'} · {_esc(claims_part)}.</p>"
        f"<p>{_esc(rest_part + '. ' if rest_part else '')}Generated by <code>tieringlab report</code> "
        "(the <code>report</code> stage of <code>dvc repro</code>) from this folder.</p></header>",
        f"<nav>{nav}</nav>",
        "<main>",
        _verdict_section(ledger, shown_in, stems),
        *sections,
        _ledger_section(ledger, summary, shown_in),
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
