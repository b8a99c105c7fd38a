"""Hardening: tokens kept only as hashes, body limits (413), per-token throttling (429), a clean
``check --deploy`` in production, the admin's standard protections, and no SQL built from input."""

from __future__ import annotations

import ast
import hashlib
import io
import json
import os
import re
import secrets
import subprocess
import sys
from pathlib import Path

import pytest
import redis
from django.contrib.auth.models import User
from django.contrib.auth.password_validation import validate_password
from django.core.cache import caches
from django.core.exceptions import ValidationError
from django.core.management import call_command
from django.db import connection
from django.test import Client, override_settings

from organizations.models import Organization
from templates_dsl import limits
from templates_dsl.models import TransactionTemplate
from tests.conftest import Api, assert_error, make_token
from tests.transactions.conftest import FUND
from transactions.models import Transaction

ROOT = Path(__file__).resolve().parents[2]


def _raw_rows(table: str) -> list[tuple]:
    with connection.cursor() as cursor:
        cursor.execute(f"SELECT * FROM {connection.ops.quote_name(table)}")
        return list(cursor.fetchall())


# --- tokens -----------------------------------------------------------------------------------


def test_it_keeps_tokens_only_as_hashes_in_the_database(db, organization):
    raws = [make_token("service"), make_token("limited", organization_ids=[organization["id"]])]
    out = io.StringIO()
    call_command("create_token", "from-command", "--read-only", stdout=out)
    raws.append(out.getvalue().strip().splitlines()[-1])
    tables = [
        "organizations_apitoken",
        *[
            t
            for t in connection.introspection.table_names()
            if t.startswith("organizations_apitoken_")
        ],
    ]
    dump = repr([_raw_rows(table) for table in tables])
    for raw in raws:
        secret = raw.split("_", 2)[2]  # lgr_<prefix>_<secret>; the secret may hold "_"
        assert raw not in dump and secret not in dump
        assert hashlib.sha256(raw.encode()).hexdigest() in dump
        assert Api(raw).get("/v1/organizations").status_code == 200


# --- body limits ------------------------------------------------------------------------------

LIMIT = 4096


@override_settings(DATA_UPLOAD_MAX_MEMORY_SIZE=LIMIT)
def test_it_answers_a_json_body_over_the_limit_with_413_and_writes_nothing(api, db):
    before = Organization.objects.count()
    big = {"legalName": "Big", "legalDocument": "1", "metadata": {"pad": "x" * LIMIT}}
    body = assert_error(api.post("/v1/organizations", big), 413, "0122")
    assert "too large" in body["description"]
    assert Organization.objects.count() == before
    small = {"legalName": "Small", "legalDocument": "1", "metadata": {"pad": "x" * 100}}
    assert api.post("/v1/organizations", small).status_code == 201


def test_it_answers_bodies_over_the_default_one_mebibyte_with_413(book):
    pad = "x" * (1024 * 1024)
    before = Transaction.objects.count()
    response = book.post(
        {
            "transactionTypeCode": "FUND",
            "variables": {"amount": 1, "account": "@alice"},
            "metadata": {"pad": pad},
        }
    )
    assert_error(response, 413, "0122")
    assert Transaction.objects.count() == before
    response = book.api.post(
        f"{book.url}/transaction-templates", FUND + ";" + pad, content_type="text/plain"
    )
    assert_error(response, 413, "0122")


def test_it_answers_template_text_over_its_limit_with_413_and_writes_nothing(book, monkeypatch):
    monkeypatch.setattr(limits, "MAX_TEMPLATE_BYTES", LIMIT)
    url = f"{book.url}/transaction-templates"
    text = FUND.replace("(code FUND)", "(code FUND2)") + ";"
    at_limit = text + "x" * (LIMIT - len(text.encode()))
    before = TransactionTemplate.objects.count()
    for content_type in ("text/plain", "application/octet-stream", "application/json"):
        response = book.api.post(url, at_limit + "x", content_type=content_type)
        assert_error(response, 413, "0122")
    response = book.api.put(f"{url}/FUND", FUND + ";" + "x" * LIMIT, content_type="text/plain")
    assert_error(response, 413, "0122")
    assert TransactionTemplate.objects.count() == before
    assert book.api.get(f"{url}/FUND").content.decode() == FUND
    assert book.api.post(url, at_limit, content_type="text/plain").status_code == 201


def test_the_schema_documents_413_and_429(anon, db):
    schema = json.loads(anon.get("/v1/openapi.json").content)
    writes = [
        (path, method, operation["responses"])
        for path, item in schema["paths"].items()
        for method, operation in item.items()
        if method in {"post", "put", "patch"}
    ]
    assert writes
    for path, method, responses in writes:
        assert {"413", "429"} <= set(responses), (method, path)


# --- throttling -------------------------------------------------------------------------------


@pytest.fixture
def throttled(settings):
    caches["throttle"].clear()
    settings.API_THROTTLE_RATES = {"read": "5/min", "write": "3/min"}
    yield
    caches["throttle"].clear()


def test_it_throttles_each_token_with_429_in_the_envelope(api, throttled):
    other = Api(make_token("other"))
    for index in range(3):
        body = {"legalName": f"Org {index}", "legalDocument": str(index)}
        assert api.post("/v1/organizations", body).status_code == 201
    response = api.post("/v1/organizations", {"legalName": "Over", "legalDocument": "9"})
    body = assert_error(response, 429, "0123")
    assert body["title"] == "Too Many Requests"
    assert 1 <= int(response["Retry-After"]) <= 60
    assert not Organization.objects.filter(legal_name="Over").exists()
    # Reads have their own budget; another token has its own.
    assert api.get("/v1/organizations").status_code == 200
    assert (
        other.post("/v1/organizations", {"legalName": "B", "legalDocument": "8"}).status_code == 201
    )
    for _ in range(4):
        api.get("/v1/organizations")
    assert_error(api.get("/v1/organizations"), 429, "0123")


def test_it_counts_charts_and_dry_runs_as_reads(book, throttled):
    url = book.url
    for _ in range(4):
        response = book.api.post(f"{url}/charts", {"type": "totalAmountByAsset"})
        assert response.status_code == 200, response.content
    dry = {"transactionTypeCode": "FUND", "variables": {"amount": 1, "account": "@alice"}}
    assert book.api.post(f"{url}/transactions?dryRun=true", dry).status_code == 200
    assert_error(book.api.post(f"{url}/transactions?dryRun=true", dry), 429, "0123")
    assert book.post(dry).status_code == 201


def _python(code: str, env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", code],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )


def _production_env(**extra: str) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if k not in {"DEBUG", "LEDGER_DEV_DEFAULTS"}}
    env.pop("DATABASE_URL", None)
    env.update(
        DJANGO_SETTINGS_MODULE="ledgerproject.settings",
        SECRET_KEY=secrets.token_urlsafe(50),
        ALLOWED_HOSTS="ledger.example.com",
        **extra,
    )
    return env


def test_it_counts_in_a_cache_every_process_shares(api, throttled, settings):
    """The default: a table of the database, which every server process reads and writes."""
    assert settings.CACHES["throttle"]["BACKEND"].endswith("DatabaseCache")
    api.post("/v1/organizations", {"legalName": "A", "legalDocument": "1"})
    table = settings.CACHES["throttle"]["LOCATION"]
    with connection.cursor() as cursor:
        cursor.execute("SELECT cache_key FROM " + connection.ops.quote_name(table))
        keys = [row[0] for row in cursor.fetchall()]
    assert any("throttle_write_" in key for key in keys)


def test_it_counts_in_redis_when_redis_url_is_set(api, settings):
    url = "redis://127.0.0.1:6379/15"
    settings.CACHES = {
        **settings.CACHES,
        "throttle": {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": url},
    }
    settings.API_THROTTLE_RATES = {"read": "2/min", "write": None}
    caches["throttle"].clear()
    try:
        assert api.get("/v1/organizations").status_code == 200
        # Another process's view of the same count: a separate connection to the server.
        keys = redis.Redis.from_url(url).keys("*throttle_read_*")
        assert len(keys) == 1
        assert api.get("/v1/organizations").status_code == 200
        assert_error(api.get("/v1/organizations"), 429, "0123")
    finally:
        caches["throttle"].clear()


def test_throttling_is_off_unless_a_rate_is_set():
    code = "from ledgerproject import settings as s; print(s.API_THROTTLE_RATES)"
    done = _python(code, _production_env())
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'read': None, 'write': None}"


def test_it_reads_throttle_rates_from_the_environment():
    code = "from ledgerproject import settings as s; print(s.API_THROTTLE_RATES)"
    done = _python(code, _production_env(THROTTLE_READ_RATE="7/sec", THROTTLE_WRITE_RATE="off"))
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "{'read': '7/sec', 'write': None}"
    done = _python(code, _production_env(THROTTLE_WRITE_RATE="lots"))
    assert done.returncode != 0 and "THROTTLE_WRITE_RATE must look like" in done.stderr


# --- deployment -------------------------------------------------------------------------------


def _check_deploy(env: dict[str, str]) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "manage.py", "check", "--deploy", "--fail-level", "WARNING"],
        cwd=ROOT,
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )


def test_it_passes_check_deploy_under_production_settings():
    done = _check_deploy(_production_env())
    assert done.returncode == 0, done.stdout + done.stderr
    assert "no issues" in done.stdout
    # HSTS is the environment's to set, and the check notices when it is turned off.
    done = _check_deploy(_production_env(SECURE_HSTS_SECONDS="0"))
    assert done.returncode != 0 and "security.W004" in done.stdout + done.stderr
    code = (
        "from ledgerproject import settings as s; "
        "print(s.SECURE_HSTS_SECONDS, s.SECURE_PROXY_SSL_HEADER, s.SESSION_COOKIE_SECURE)"
    )
    done = _python(code, _production_env(SECURE_HSTS_SECONDS="600", SECURE_PROXY_SSL_HEADER="1"))
    assert done.stdout.split() == ["600", "('HTTP_X_FORWARDED_PROTO',", "'https')", "True"]


def test_it_refuses_to_start_in_production_without_a_secret_key():
    env = _production_env()
    env.pop("SECRET_KEY")
    done = _python("import ledgerproject.settings", env)
    assert done.returncode != 0 and "SECRET_KEY is not set" in done.stderr


# --- the admin --------------------------------------------------------------------------------


def test_it_protects_the_admin_login_with_csrf(db):
    User.objects.create_superuser("boss", "boss@example.com", "a-long-Unusual-passphrase-42")
    strict = Client(enforce_csrf_checks=True)
    login = {"username": "boss", "password": "a-long-Unusual-passphrase-42"}
    assert strict.post("/admin/login/", login).status_code == 403
    page = strict.get("/admin/login/")
    assert page["X-Frame-Options"] == "DENY"
    token = re.search(r'name="csrfmiddlewaretoken" value="([^"]+)"', page.content.decode())
    assert token is not None
    response = strict.post("/admin/login/", {**login, "csrfmiddlewaretoken": token.group(1)})
    assert response.status_code == 302
    assert response.cookies["sessionid"]["httponly"]
    # The session that the admin accepts is worthless on the API.
    assert_error(strict.get("/v1/organizations"), 401, "0041")


@pytest.mark.parametrize("password", ["password", "12345678", "short", "boss-boss"])
def test_it_refuses_weak_staff_passwords(db, password):
    user = User(username="boss-boss", email="boss@example.com")
    with pytest.raises(ValidationError):
        validate_password(password, user)
    validate_password("a-long-Unusual-passphrase-42", user)


# --- SQL --------------------------------------------------------------------------------------

SQL_CALLS = {"execute", "executemany", "raw", "extra", "RawSQL"}


def _source_files() -> list[Path]:
    skip = {".venv", "tests", "node_modules", "staticfiles", "bench"}
    return [p for p in ROOT.rglob("*.py") if not skip.intersection(p.relative_to(ROOT).parts[:-1])]


def _constant_strings(tree: ast.Module) -> set[str]:
    """Module-level names bound once to a plain string literal, or to an f-string of such
    names, and the names imported from a module of the service where they are one."""
    names: set[str] = set()
    for node in tree.body:
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            source = ROOT.joinpath(*node.module.split(".")).with_suffix(".py")
            if source.is_file():
                theirs = _constant_strings(ast.parse(source.read_text(), str(source)))
                names.update(a.asname or a.name for a in node.names if a.name in theirs)
        if not isinstance(node, ast.Assign):
            continue
        value = node.value
        plain = isinstance(value, ast.Constant) and isinstance(value.value, str)
        composed = isinstance(value, ast.JoinedStr) and all(
            isinstance(part, ast.Constant)
            or (
                isinstance(part, ast.FormattedValue)
                and isinstance(part.value, ast.Name)
                and part.value.id in names
                and part.format_spec is None
            )
            for part in value.values
        )
        if plain or composed:
            names.update(t.id for t in node.targets if isinstance(t, ast.Name))
    return names


# The one statement run from a variable: ``rows.Select`` joins its literal parts (checked at
# every ``Select(...)`` below) with the model's column names, from Django's model metadata.
# And the tenant keys' DDL, which Django's schema editor composes from the models' metadata and
# the catalog's names (``tenancy._ddl``), and the migrations' PostgreSQL-only SQL, a module
# constant of each migration (``migration_ops.postgresql_only``).
# ``db.bind_arrays`` adds to a statement only placeholders and a cast from a fixed list
# (``db.ArrayParam`` refuses any other), so ``execute(*bind_arrays(sql, ...))`` is judged by
# its ``sql``.
COMPOSED = {
    # psycopg's own composition: the database's name quoted as an identifier by psycopg.
    ("ledgerproject/localdev.py", "sql.SQL('CREATE DATABASE {}').format(sql.Identifier(name))"),
    ("ledgerproject/rows.py", "self.sql"),
    ("ledgerproject/tenancy.py", "statement"),
    ("ledgerproject/migration_ops.py", "sql"),
    # The health check's execute wrapper passes on the statement Django hands it, unchanged.
    ("ledgerproject/health.py", "sql"),
    # A module constant and one of the three lock strengths, module constants too.
    ("organizations/locking.py", "LEDGER_LOCK + strength"),
    # The tree walk (a constant, with a placeholder per root and the depth bound) and a module
    # constant of organizations.rollups or transactions.rollups.
    ("organizations/rollups.py", "tree + select"),
}


def test_it_builds_no_sql_from_input():
    """Every raw SQL call in the service takes a literal statement (or a module constant that
    is one), and every ``rows.Select`` is made of literal parts; values travel as parameters,
    never spliced into the text."""
    checked, offenders = 0, []
    for path in _source_files():
        tree = ast.parse(path.read_text(), str(path))
        constants = _constant_strings(tree)
        where = str(path.relative_to(ROOT))

        def literal(node: ast.AST, constants: set[str] = constants) -> bool:
            return (isinstance(node, ast.Constant) and isinstance(node.value, str)) or (
                isinstance(node, ast.Name) and node.id in constants
            )

        for node in ast.walk(tree):
            if not isinstance(node, ast.Call):
                continue
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", "")
            if name == "Select" and len(node.args) >= 3:
                checked += 1
                parts = [node.args[2]]
                for keyword in node.keywords:
                    if keyword.arg == "extra" and isinstance(keyword.value, ast.List | ast.Tuple):
                        parts += keyword.value.elts
                    elif keyword.arg == "extra":
                        parts.append(keyword.value)
                offenders += [
                    f"{where}:{node.lineno} {ast.unparse(p)}" for p in parts if not literal(p)
                ]
                continue
            if name not in SQL_CALLS or not node.args:
                continue
            statement = node.args[0]
            if (
                isinstance(statement, ast.Starred)
                and isinstance(statement.value, ast.Call)
                and getattr(statement.value.func, "id", "") == "bind_arrays"
            ):  # ``execute(*bind_arrays(sql, params))``: its text only adds placeholders
                statement = statement.value.args[0]
            checked += 1
            if not literal(statement) and (where, ast.unparse(statement)) not in COMPOSED:
                offenders.append(f"{where}:{node.lineno} {ast.unparse(statement)}")
    assert checked >= 8, "the scan found few SQL calls; is it looking in the right place?"
    assert not offenders, offenders
