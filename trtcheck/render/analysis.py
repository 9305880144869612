"""``trtcheck analyze``'s table: each case's predicted path, pure function of the record."""

from __future__ import annotations

from typing import Any

from tabulate import tabulate

from trtcheck.render.escape import plain
from trtcheck.render.text import NONE, headline
from trtcheck.results.record import Record


def _complex(analysis: dict[str, Any]) -> str:
    ops = analysis.get("complex", {}).get("ops", [])
    if not ops:
        return NONE
    subgraphs = len(analysis["complex"].get("subgraphs", []))
    seed_bad = sum(not op["seed"] for op in ops)
    fallback = sum(op["broad"] == "fallback" for op in ops)
    return (f"{subgraphs} subgraph(s), {len(ops)} op(s): "
            f"seed {'ok' if not seed_bad else f'{seed_bad} unsupported'}, "
            f"broad {'ok' if not fallback else f'{fallback} fallback'}")


def _int64(analysis: dict[str, Any]) -> str:
    info = analysis.get("int64", {})
    parts = [f"{len(info.get(k, []))} {k}" for k in ("inputs", "ops", "outputs") if info.get(k)]
    beyond = sum(item["count"] for item in info.get("out_of_int32_range", []))
    if beyond:
        parts.append(f"{beyond} input values beyond int32")
    return ", ".join(parts) or NONE


def _limitations(analysis: dict[str, Any]) -> str:
    return ", ".join(p["limitation"] for p in analysis.get("predictions", [])) or NONE


def render_analysis(record: Record, *, verbose: bool = False) -> str:
    """A table of every case's path, then (verbose) each prediction with the guide's text it cites."""
    table = []
    for row in record.rows:
        analysis = record.analyses.get(row.case_id)
        if analysis is None:
            table.append([plain(row.case_id), "error", plain(headline(row)), "", ""])
            continue
        path = "+".join(analysis.get("path", [])) or "none"
        table.append([plain(row.case_id), path, _complex(analysis), _int64(analysis),
                      _limitations(analysis)])
    text = tabulate(table, headers=["case", "path", "complex", "int64", "limitations"],
                    tablefmt="simple")
    if verbose:
        lines = [text, ""]
        for row in record.rows:
            for p in (record.analyses.get(row.case_id) or {}).get("predictions", []):
                lines.append(f"{plain(row.case_id)}: {p['limitation']} at {', '.join(p['nodes'])}"
                             f" — seed: {p['seed']}; broad: {p['broad']}")
                lines.append(f"    {p['cite']}")
        text = "\n".join(lines)
    return text
