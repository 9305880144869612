"""What a report links to: the commit it is about and, under GitHub Actions, the run that made
it (``cli/github.py`` reads them from the runner); the renderers take it beside the record."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class RunLink:
    """The commit a report is about and, under GitHub Actions, the run that made it."""

    sha: str | None
    url: str | None = None


def commit_of(link: RunLink | None, environment: dict[str, Any] | None) -> str | None:
    """The commit a report names: the link's, else the one its record ran at."""
    return (link.sha if link else None) or (environment or {}).get("git_commit")
