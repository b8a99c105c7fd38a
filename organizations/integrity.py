"""The organization tree's integrity: every organization's materialised path is its parent's
path plus its own id, and following parents never comes back to where it started. A token's
reach is tested against the paths, so a path that disagrees with the parents would show a
tenant to the wrong token. ``manage.py check_ledger`` runs this once per call."""

from __future__ import annotations

import uuid

from organizations.models import Organization


def tree_problems() -> list[str]:
    """The violations, as sentences; linear in the number of organizations."""
    rows = {
        pk: (parent, path)
        for pk, parent, path in Organization.objects.values_list("pk", "parent_id", "path")
    }
    problems: list[str] = []
    for pk, (parent, path) in rows.items():
        parent_path = rows[parent][1] if parent in rows else "/"
        if path != f"{parent_path}{pk.hex}/":
            problems.append(
                f"organization {pk}: path {path} does not follow its parent ({parent_path})"
            )
    done: set[uuid.UUID] = set()
    for start in rows:
        trail: list[uuid.UUID] = []
        on_trail: set[uuid.UUID] = set()
        node: uuid.UUID | None = start
        while node is not None and node not in done:
            if node in on_trail:
                cycle = trail[trail.index(node) :]
                problems.append(
                    "organizations form a cycle of parents: " + " -> ".join(map(str, cycle))
                )
                break
            trail.append(node)
            on_trail.add(node)
            node = rows[node][0] if node in rows else None
        done.update(trail)
    return problems
