"""The HTML page every trtcheck page shares: one self-contained file under a strict
Content-Security-Policy, its style and its one script allowed by their hashes, nothing fetched.

The page reads with JavaScript off; the script only adds sorting and a filter to tables of class
``sortable``. :func:`esc` (from :mod:`trtcheck.render.svg`) escapes every text a zoo can
influence, in the HTML as in the SVG."""

from __future__ import annotations

import base64
import hashlib
from collections.abc import Iterable, Sequence

from trtcheck.render.svg import esc

STYLE = """
:root{--pass:#1a7f37;--fail:#cf222e;--warn:#9a6700;--pred:#8250df;--muted:#6e7781;--ink:#1f2328;
--line:#d0d7de;--soft:#f6f8fa}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;color:var(--ink);margin:0 auto;
max-width:1200px;padding:0 20px 40px}
h1{font-size:24px;margin:18px 0 4px}h2{font-size:19px;margin:28px 0 8px;border-bottom:1px solid
var(--line);padding-bottom:4px}h3{font-size:15px;margin:16px 0 4px}
nav a{margin-right:12px}.facts{color:var(--muted)}.box{border-left:4px solid var(--pred);
background:var(--soft);padding:6px 12px;margin:10px 0}.box.warn{border-color:var(--warn)}
.verdict{font-weight:700;padding:2px 10px;border-radius:4px;color:#fff}
.v-pass{background:var(--pass)}.v-fail,.v-interrupted{background:var(--fail)}
.v-empty{background:var(--warn)}
table{border-collapse:collapse;margin:8px 0;font-size:13px}th,td{border:1px solid var(--line);
padding:3px 7px;text-align:left;vertical-align:top}th{background:var(--soft)}
td.n{text-align:right;font-variant-numeric:tabular-nums}
.s-fail,.s-error,.s-timeout,.s-crash{color:var(--fail);font-weight:600}.s-xpass{color:var(--warn)}
.s-pass{color:var(--pass)}code,pre{font:12px/1.4 ui-monospace,Menlo,Consolas,monospace}
pre{background:var(--soft);padding:8px;overflow-x:auto;white-space:pre-wrap}
.scroll{overflow-x:auto}.note{color:var(--muted);font-size:13px}
svg{font:11px system-ui,sans-serif;display:block;margin:6px 0;max-width:100%;height:auto}
svg .stripe{fill:var(--soft)}svg .grid{stroke:var(--line);stroke-width:1}
svg .ref{stroke:var(--ink);stroke-width:1.5;stroke-dasharray:4 3}
svg .tick,svg .reflabel{fill:var(--muted);text-anchor:middle}svg .reflabel{text-anchor:start}
svg .label{text-anchor:end;fill:var(--ink)}svg .note{fill:var(--muted)}
svg .ytick{text-anchor:end;fill:var(--muted);font-size:10px}
svg .bar{opacity:.35}svg .band{fill:var(--muted);opacity:.25}
svg .pass .dot,svg .pass .bar{fill:var(--pass)}svg .fail .dot,svg .fail .bar{fill:var(--fail)}
svg .warn .dot,svg .warn .bar{fill:var(--warn)}svg .pred .dot,svg .pred .bar{fill:var(--pred)}
svg .muted .dot,svg .muted .bar{fill:var(--muted)}svg .fail .note{fill:var(--fail)}
svg .symbol{text-anchor:middle;font-weight:700;fill:var(--warn)}
svg .beyond{text-anchor:end;font-weight:700;fill:var(--fail)}
svg .line{fill:none;stroke-width:1.5}svg .whisker{fill:none;stroke-width:1;opacity:.5}
svg .dots{fill:none;stroke-width:5;stroke-linecap:round}
svg .s0{stroke:#0969da}svg .s1{stroke:#bc4c00}
svg .flag{stroke-width:1}svg .fail .flag{stroke:var(--fail)}svg .fail .flaghead{fill:var(--fail)}
svg .warn .flag{stroke:var(--warn);stroke-dasharray:2 2}svg .warn .flaghead{fill:var(--warn)}
.pair{display:flex;flex-wrap:wrap;gap:0 16px}
.filter{margin:6px 0;padding:3px 6px;width:260px}th[aria-sort]{text-decoration:underline}
@media print{nav,.filter{display:none}body{max-width:none}h2{break-after:avoid}
tr,svg g{break-inside:avoid}}
"""

# Sorting and a filter for tables of class "sortable": what a page may add with JavaScript.
SCRIPT = """
document.querySelectorAll("table.sortable").forEach(function (table) {
  var body = table.tBodies[0], input = document.createElement("input");
  input.type = "search"; input.className = "filter"; input.placeholder = "filter rows";
  table.parentNode.insertBefore(input, table);
  input.addEventListener("input", function () {
    var q = input.value.toLowerCase();
    Array.prototype.forEach.call(body.rows, function (r) {
      r.hidden = q !== "" && r.textContent.toLowerCase().indexOf(q) < 0;
    });
  });
  function key(cell) {
    var v = cell.getAttribute("data-v");
    return v !== null && v !== "" && !isNaN(v) ? parseFloat(v) : cell.textContent;
  }
  Array.prototype.forEach.call(table.tHead.rows[0].cells, function (th, i) {
    th.tabIndex = 0;
    th.addEventListener("click", function () {
      var up = th.getAttribute("aria-sort") !== "ascending";
      Array.prototype.forEach.call(th.parentNode.cells, function (c) { c.removeAttribute("aria-sort"); });
      th.setAttribute("aria-sort", up ? "ascending" : "descending");
      var rows = Array.prototype.slice.call(body.rows);
      rows.sort(function (a, b) {
        var x = key(a.cells[i]), y = key(b.cells[i]);
        var c = typeof x === typeof y ? (x < y ? -1 : x > y ? 1 : 0) : (typeof x === "number" ? -1 : 1);
        return up ? c : -c;
      });
      rows.forEach(function (r) { body.appendChild(r); });
    });
  });
});
"""


def _hash(text: str) -> str:
    return "sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode()


# Nothing may load or run but this page's own style and script: no network, no inline handler
# (an ``onerror=`` that escaped escaping would still not run), no form, no base URL.
CSP = (f"default-src 'none'; style-src '{_hash(STYLE)}'; script-src '{_hash(SCRIPT)}'; "
       "img-src 'none'; base-uri 'none'; form-action 'none'")


def page(title: str, body: Iterable[str]) -> str:
    """A whole page: the policy, the style, ``body`` (HTML already escaped), then the script."""
    return "".join([
        '<!DOCTYPE html>\n<html lang="en"><head><meta charset="utf-8">',
        f'<meta http-equiv="Content-Security-Policy" content="{CSP}">',
        '<meta name="viewport" content="width=device-width,initial-scale=1">',
        f"<title>{esc(title)}</title><style>{STYLE}</style></head><body>\n",
        *body,
        f"\n<script>{SCRIPT}</script></body></html>\n",
    ])


def table(headers: Sequence[str], rows: Iterable[Sequence[str]], *, sortable: bool = False) -> str:
    """A table; ``headers`` and cells are HTML already (a cell may be ``<td ...>`` whole)."""
    head = "".join(f"<th>{h}</th>" for h in headers)
    body = "".join("<tr>" + "".join(c if c.startswith("<td") else f"<td>{c}</td>" for c in r)
                   + "</tr>\n" for r in rows)
    cls = ' class="sortable"' if sortable else ""
    return (f'<div class="scroll"><table{cls}><thead><tr>{head}</tr></thead><tbody>\n{body}'
            "</tbody></table></div>")


def num_cell(text: str, value: float | None) -> str:
    """A right-aligned cell sorted by ``value`` (text ``text``, escaped here)."""
    v = "" if value is None or value != value else repr(float(value))
    return f'<td class="n" data-v="{v}">{esc(text)}</td>'


def section(anchor: str, title: str, *parts: str) -> str:
    inner = "\n".join(p for p in parts if p)
    return f'<section id="{anchor}"><h2>{esc(title)}</h2>\n{inner}</section>\n'
