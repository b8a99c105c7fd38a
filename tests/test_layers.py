"""The code's layering, read from the imports of every module (not run):

- the domain knows nothing of HTTP: no module of the four apps outside ``views``,
  ``serializers``, ``urls``, ``filters`` and ``schema`` imports ``ledgerproject.api``;
- apps depend in one direction, outbox <- journal <- organizations <- instruments <-
  templates_dsl <- transactions: an app imports only itself and the apps to its left;
- no project module is imported inside a function (the usual way to dodge a cycle).

Migrations are history and are not read."""

from __future__ import annotations

import ast
import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
APPS = ["outbox", "journal", "organizations", "instruments", "templates_dsl", "transactions"]
HTTP_MODULES = {"views", "serializers", "urls", "filters", "schema"}
PROJECT = (*APPS, "ledgerproject")


def _modules():
    for app in APPS:
        for path in sorted((ROOT / app).rglob("*.py")):
            if "migrations" not in path.parts:
                yield app, path


def _imports(tree: ast.Module):
    """(imported module, line, inside a function) for every import of the module."""
    found = []

    def visit(node: ast.AST, in_function: bool) -> None:
        for child in ast.iter_child_nodes(node):
            nested = in_function or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.Import):
                found.extend((alias.name, child.lineno, in_function) for alias in child.names)
            elif isinstance(child, ast.ImportFrom) and child.module and not child.level:
                found.append((child.module, child.lineno, in_function))
            visit(child, nested)

    visit(tree, False)
    return found


def _violations():
    http, direction, local = [], [], []
    for app, path in _modules():
        where = path.relative_to(ROOT)
        for module, line, in_function in _imports(ast.parse(path.read_text())):
            top = module.split(".")[0]
            if module.startswith("ledgerproject.api") and path.stem not in HTTP_MODULES:
                http.append(f"{where}:{line} imports {module}")
            if top in APPS and APPS.index(top) > APPS.index(app):
                direction.append(f"{where}:{line} imports {module}")
            if in_function and top in PROJECT:
                local.append(f"{where}:{line} imports {module} inside a function")
    return http, direction, local


def test_the_domain_does_not_import_the_http_layer():
    assert _violations()[0] == []


def test_apps_depend_in_one_direction():
    assert _violations()[1] == []


def test_no_project_module_is_imported_inside_a_function():
    assert _violations()[2] == []


def test_the_scan_reads_the_code():
    assert sum(1 for _ in _modules()) > 40
    assert any(
        m == "ledgerproject.errors"
        for m, _, _ in _imports(ast.parse((ROOT / "transactions" / "run.py").read_text()))
    )


def _migrations():
    for app in (*APPS, "ledgerproject"):
        yield from sorted((ROOT / app).glob("migrations/0*.py"))


def test_no_migration_is_built_from_another_migration():
    """Each migration stands alone: none imports another (to slice its text, say)."""
    found = []
    for path in _migrations():
        for module, line, _ in _imports(ast.parse(path.read_text())):
            if module.split(".")[0] in PROJECT and ".migrations" in module:
                found.append(f"{path.relative_to(ROOT)}:{line} imports {module}")
        if "import_module" in path.read_text():
            found.append(f"{path.relative_to(ROOT)} calls import_module")
    assert found == []


def test_functions_and_triggers_live_in_sql_files():
    """SQL that matters (a function, a trigger) is a file of ``<app>/sql/`` that migrations
    load by name (``migration_ops.postgresql_sql_files``), never a string in a migration."""
    inline = [
        str(path.relative_to(ROOT))
        for path in _migrations()
        if re.search(r"CREATE\s+(OR\s+REPLACE\s+)?(FUNCTION|TRIGGER)", path.read_text(), re.I)
    ]
    assert inline == []
    files = sorted(p.name for p in ROOT.glob("*/sql/*.sql"))
    assert "operation_append_only.sql" in files and "auth_epoch_bump.sql" in files
    assert any(name.startswith("ledger_write_posting.") for name in files)


# Django documents these of a model (the ``_meta`` API, ``_default_manager``, ``_state``).
DOCUMENTED_PRIVATE = {"_meta", "_default_manager", "_state"}


def _project_files():
    for top in PROJECT:
        for path in sorted((ROOT / top).rglob("*.py")):
            if "migrations" not in path.parts:
                yield path


def test_no_private_name_of_a_library_is_used():
    """No ``obj._name`` of psycopg, Django, DRF or any other library, and no override of one (a
    ``super()._name(...)`` call): a patch release may change it. A private name the project
    defines itself (a function, a class, an attribute it sets) is its own; any other read of
    one is a library's."""
    trees = {path: ast.parse(path.read_text()) for path in _project_files()}
    own = set()
    for tree in trees.values():
        for node in ast.walk(tree):
            if isinstance(node, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
                own.add(node.name)
            elif isinstance(node, ast.Name) and isinstance(node.ctx, ast.Store):
                own.add(node.id)
            elif (
                isinstance(node, ast.Attribute)
                and isinstance(node.ctx, ast.Store)
                and getattr(node.value, "id", "") in {"self", "cls"}
            ):
                own.add(node.attr)  # set on an object of the project's own class
            elif isinstance(node, ast.arg):
                own.add(node.arg)
    found = set()
    for path, tree in trees.items():
        where = str(path.relative_to(ROOT))
        for node in ast.walk(tree):
            name = getattr(node, "attr", "")
            if (
                isinstance(node, ast.Attribute)
                and name.startswith("_")
                and not name.startswith("__")
                and name not in DOCUMENTED_PRIVATE | own
            ):
                found.add((where, name))
            # A private name read or written through a string: ``getattr(obj, "_name")``.
            if (
                isinstance(node, ast.Call)
                and getattr(node.func, "id", "") in {"getattr", "setattr", "hasattr", "delattr"}
                and len(node.args) >= 2
                and isinstance(node.args[1], ast.Constant)
                and isinstance(node.args[1].value, str)
                and node.args[1].value.startswith("_")
                and not node.args[1].value.startswith("__")
                and node.args[1].value not in DOCUMENTED_PRIVATE | own
            ):
                found.add((where, node.args[1].value))
            # An override of a library's private method calls it on ``super()``.
            value = getattr(node, "value", None)
            if (
                isinstance(node, ast.Attribute)
                and name.startswith("_")
                and not name.startswith("__")
                and isinstance(value, ast.Call)
                and getattr(value.func, "id", "") == "super"
            ):
                found.add((where, name))
    assert found == set()


# The modules that read which database they run on (``.vendor``): ``ledgerproject/db.py``, where
# ``by_database`` chooses the form of a function once (and the amount column's type follows the
# field API's connection); the migration operations (``migration_ops``, and the tenant keys'
# in ``tenancy``), which change the schema the way each database's schema editor can; the
# system check, which checks each configured database by its alias. Everything else calls a
# function with a form per database (or, to report it, ``db.database_name``).
ASKS_WHICH_DATABASE = {
    "ledgerproject/db.py",
    "ledgerproject/migration_ops.py",
    "ledgerproject/tenancy.py",
    "ledgerproject/checks.py",
}


def test_one_module_chooses_between_the_databases():
    """No read of ``.vendor`` (a comparison, a ``match``, a lookup by it) outside
    ``ASKS_WHICH_DATABASE``: where PostgreSQL and SQLite need different code, both forms sit
    side by side behind one function (``db.by_database``)."""
    found = set()
    for path in _project_files():
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.Attribute) and node.attr == "vendor":
                found.add(str(path.relative_to(ROOT)))
    assert found - ASKS_WHICH_DATABASE == set()
    assert "ledgerproject/db.py" in found  # the scan sees a read where there is one
