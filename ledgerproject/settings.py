"""Settings, read from the environment and, for a checkout, from a local ``.env`` file.

``.env`` (git-ignored, written once by ``make run``: a generated ``SECRET_KEY`` and the
development switches) is read through django-environ; a variable set in the environment wins
over the file. ``LEDGER_ENV_FILE`` names another file, or none when empty (the test suite).
A setting that is missing or malformed raises ``ImproperlyConfigured`` with one line saying
what to set; ``manage.py`` prints that line alone.

``DATABASE_URL`` unset gives SQLite in ``db.sqlite3`` beside this project (WAL, IMMEDIATE
transactions, a busy timeout so concurrent writers queue); ``postgres://...`` gives PostgreSQL
through psycopg 3 with persistent connections. ``DEBUG`` is off unless asked for, and the
development defaults for ``SECRET_KEY`` and ``ALLOWED_HOSTS`` apply only while it is on.
"""

from __future__ import annotations

import os
from pathlib import Path

import dj_database_url
import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent

ENV_FILE = os.environ.get("LEDGER_ENV_FILE", str(BASE_DIR / ".env"))
if ENV_FILE and Path(ENV_FILE).is_file():
    environ.Env.read_env(ENV_FILE)  # never overrides what the environment already sets

_env = environ.Env()


def env_bool(name: str, default: bool = False) -> bool:
    try:
        return _env.bool(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be 1 or 0 (true/false), not {exc}.") from exc


def env_int(name: str, default: int) -> int:
    try:
        return _env.int(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a whole number: {exc}.") from exc


def env_float(name: str, default: float) -> float:
    try:
        return _env.float(name, default=default)
    except ValueError as exc:
        raise ImproperlyConfigured(f"{name} must be a number (seconds): {exc}.") from exc


DEBUG = env_bool("DEBUG")
SECRET_KEY = _env.str("SECRET_KEY", default="")
if not SECRET_KEY:
    if not DEBUG and not env_bool("LEDGER_DEV_DEFAULTS"):
        raise ImproperlyConfigured(
            "SECRET_KEY is not set: on a checkout run `make run` once (it writes .env), "
            "in production set SECRET_KEY in the environment."
        )
    SECRET_KEY = "dev-only-insecure-key-do-not-use-in-production"

ALLOWED_HOSTS = [h for h in os.environ.get("ALLOWED_HOSTS", "").split(",") if h]
if not ALLOWED_HOSTS and (DEBUG or env_bool("LEDGER_DEV_DEFAULTS")):
    ALLOWED_HOSTS = ["127.0.0.1", "localhost", "[::1]", "testserver"]
CSRF_TRUSTED_ORIGINS = [o for o in os.environ.get("CSRF_TRUSTED_ORIGINS", "").split(",") if o]

# Deployment hardening: on by default in production (neither DEBUG nor LEDGER_DEV_DEFAULTS), each
# switch overridable from the environment, so that `manage.py check --deploy` is clean there.
PRODUCTION = not DEBUG and not env_bool("LEDGER_DEV_DEFAULTS")
SECURE_SSL_REDIRECT = env_bool("SECURE_SSL_REDIRECT", PRODUCTION)
SECURE_REDIRECT_EXEMPT = [r"^health$"]  # load-balancer probes speak plain HTTP
SESSION_COOKIE_SECURE = env_bool("SESSION_COOKIE_SECURE", PRODUCTION)
CSRF_COOKIE_SECURE = env_bool("CSRF_COOKIE_SECURE", PRODUCTION)
SECURE_HSTS_SECONDS = env_int("SECURE_HSTS_SECONDS", 31_536_000 if PRODUCTION else 0)
SECURE_HSTS_INCLUDE_SUBDOMAINS = env_bool("SECURE_HSTS_INCLUDE_SUBDOMAINS", PRODUCTION)
SECURE_HSTS_PRELOAD = env_bool("SECURE_HSTS_PRELOAD", PRODUCTION)
if env_bool("SECURE_PROXY_SSL_HEADER"):
    # Only behind a proxy that terminates TLS and always sets (never forwards) this header.
    SECURE_PROXY_SSL_HEADER = ("HTTP_X_FORWARDED_PROTO", "https")

INSTALLED_APPS = [
    "ledgerproject.apps.LedgerAdminConfig",
    # Before django.contrib.auth: its changepassword command stands in for Django's.
    "organizations",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "django.contrib.staticfiles",
    "rest_framework",
    "django_filters",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "outbox",
    "instruments",
    "templates_dsl",
    "transactions",
    "journal",
]

MIDDLEWARE = [
    "ledgerproject.actors.RequestMiddleware",  # first: every answer carries its X-Request-Id
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "ledgerproject.actors.StaffMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
]

ROOT_URLCONF = "ledgerproject.urls"
APPEND_SLASH = False

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "ledgerproject" / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
            ],
        },
    },
]

WSGI_APPLICATION = "ledgerproject.wsgi.application"

_database_url = os.environ.get("DATABASE_URL", "").strip()
if _database_url:
    DATABASES = {
        "default": dj_database_url.parse(
            _database_url,
            conn_max_age=env_int("CONN_MAX_AGE", 60),
            conn_health_checks=True,
        )
    }
else:
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": os.environ.get("SQLITE_PATH", str(BASE_DIR / "db.sqlite3")),
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 30,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
if DATABASES["default"]["ENGINE"] == "django.db.backends.postgresql":
    DATABASES["default"].setdefault("OPTIONS", {})
    if env_bool("PGBOUNCER_TRANSACTION_POOLING"):
        DATABASES["default"]["OPTIONS"]["prepare_threshold"] = None
        DATABASES["default"]["DISABLE_SERVER_SIDE_CURSORS"] = True
    else:
        # Parameters bound by the server, and a statement run PREPARE_THRESHOLD times on a
        # connection prepared by psycopg (Django leaves it off unless told): the posting's
        # statements are then parsed once per connection, not once per request.
        DATABASES["default"]["OPTIONS"]["server_side_binding"] = True
        DATABASES["default"]["OPTIONS"].setdefault(
            "prepare_threshold", env_int("PREPARE_THRESHOLD", 5)
        )

# Django's backends, whose schema editors also write the tenant tables' composite keys
# (ledgerproject.tenancy): the same schema on every database.
DATABASES["default"]["ENGINE"] = {
    "django.db.backends.postgresql": "ledgerproject.backends.postgresql",
    "django.db.backends.sqlite3": "ledgerproject.backends.sqlite3",
}.get(DATABASES["default"]["ENGINE"], DATABASES["default"]["ENGINE"])

DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"

AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {"NAME": "django.contrib.auth.password_validation.MinimumLengthValidator"},
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
    {"NAME": "django.contrib.auth.password_validation.NumericPasswordValidator"},
]

LANGUAGE_CODE = "en-us"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = BASE_DIR / "staticfiles"
STATIC_ROOT.mkdir(exist_ok=True)
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

DATA_UPLOAD_MAX_MEMORY_SIZE = env_int("MAX_REQUEST_BYTES", 1_048_576)


def env_rate(name: str, default: str) -> str | None:
    """A DRF rate (``<count>/<s|sec|m|min|h|hour|d|day>``); ``off`` or empty turns it off."""
    value = os.environ.get(name, default).strip().lower()
    if value in {"", "off", "none", "0"}:
        return None
    count, _, period = value.partition("/")
    if not count.isdigit() or int(count) < 1 or period[:1] not in {"s", "m", "h", "d"}:
        raise ImproperlyConfigured(f"{name} must look like 600/min (or be off), not {value!r}.")
    return value


# Per token, reads and writes counted apart (charts and dry runs are reads). Off unless a rate
# is set: a count kept per process is no limit, and a default budget would turn a busy,
# well-behaved client into 429s. When on, every process counts in the "throttle" cache below.
API_THROTTLE_RATES = {
    "read": env_rate("THROTTLE_READ_RATE", "off"),
    "write": env_rate("THROTTLE_WRITE_RATE", "off"),
}

# "throttle" is shared by every process: Redis when REDIS_URL is set, else a database table
# (`manage.py createcachetable`, which `make migrate` runs; the test database gets it too).
_redis_url = _env.str("REDIS_URL", default="")
CACHES = {
    "default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache"},
    "throttle": (
        {"BACKEND": "django.core.cache.backends.redis.RedisCache", "LOCATION": _redis_url}
        if _redis_url
        else {
            "BACKEND": "django.core.cache.backends.db.DatabaseCache",
            "LOCATION": "ledger_throttle_cache",
        }
    ),
}

REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "ledgerproject.api.authentication.BearerTokenAuthentication"
    ],
    "DEFAULT_PERMISSION_CLASSES": ["ledgerproject.api.permissions.TokenPermission"],
    "DEFAULT_RENDERER_CLASSES": ["ledgerproject.api.renderers.JSONRenderer"],
    "DEFAULT_PARSER_CLASSES": ["ledgerproject.api.parsers.JSONParser"],
    "DEFAULT_THROTTLE_CLASSES": ["ledgerproject.api.throttling.TokenRateThrottle"],
    "DEFAULT_SCHEMA_CLASS": "ledgerproject.api.schema.LedgerAutoSchema",
    "DEFAULT_CONTENT_NEGOTIATION_CLASS": "ledgerproject.api.negotiation.AlwaysJson",
    "EXCEPTION_HANDLER": "ledgerproject.api.exceptions.exception_handler",
    "DATETIME_FORMAT": "%Y-%m-%dT%H:%M:%S%z",
    "UNAUTHENTICATED_USER": None,
    "COERCE_DECIMAL_TO_STRING": False,
}

SPECTACULAR_SETTINGS = {
    "TITLE": "Ledger API",
    "DESCRIPTION": (
        "A multi-tenant double-entry ledger. Every request carries "
        "`Authorization: Bearer <token>`. Errors are `{code, title, description[, fields]}`."
    ),
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
    "COMPONENT_SPLIT_REQUEST": True,
    "POSTPROCESSING_HOOKS": [
        "drf_spectacular.hooks.postprocess_schema_enums",
        "ledgerproject.api.schema.declare_what_the_server_enforces",
        # Summaries, descriptions and examples written for clients, in place of docstrings.
        "ledgerproject.api.operations.describe_for_clients",
    ],
}

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": os.environ.get("LOG_LEVEL", "WARNING")},
}

# Events (docs/EVENTS.md): the webhook worker and the optional RabbitMQ publisher.
# The deadline of one delivery attempt, whole: resolving, connecting, sending and reading.
WEBHOOK_TIMEOUT = env_float("LEDGER_WEBHOOK_TIMEOUT", 10)
WEBHOOK_MAX_ATTEMPTS = env_int("LEDGER_WEBHOOK_MAX_ATTEMPTS", 8)
WEBHOOK_BACKOFF_BASE = env_float("LEDGER_WEBHOOK_BACKOFF_BASE", 5)
WEBHOOK_BACKOFF_MAX = env_float("LEDGER_WEBHOOK_BACKOFF_MAX", 3600)
# Attempts one worker process has in flight at once, and of those, at most so many for one
# organization.
WEBHOOK_CONCURRENCY = env_int("LEDGER_WEBHOOK_CONCURRENCY", 8)
WEBHOOK_CONCURRENCY_PER_ORGANIZATION = env_int("LEDGER_WEBHOOK_CONCURRENCY_PER_ORGANIZATION", 4)
# Failed attempts in a row after which a subscription is suspended for a backoff.
WEBHOOK_SUSPEND_AFTER = env_int("LEDGER_WEBHOOK_SUSPEND_AFTER", 5)
WEBHOOK_MAX_SUBSCRIPTIONS = env_int("LEDGER_WEBHOOK_MAX_SUBSCRIPTIONS", 20)
# Loopback and private addresses are refused, at registration and at delivery, unless this is set.
WEBHOOK_ALLOW_PRIVATE_NETWORKS = env_bool("LEDGER_WEBHOOK_ALLOW_PRIVATE_NETWORKS")
AMQP_URL = _env.str("LEDGER_AMQP_URL", default="")
AMQP_EXCHANGE = _env.str("LEDGER_AMQP_EXCHANGE", default="ledger.events")
# After the broker fails, the worker waits this long before it tries again, doubling to the max.
AMQP_RETRY_BASE = env_float("LEDGER_AMQP_RETRY_BASE", 1)
AMQP_RETRY_MAX = env_float("LEDGER_AMQP_RETRY_MAX", 60)
# The journal (docs/BOOKS.md): "thread" seals each ledger's new entries from a thread of the
# process that wrote them, within a second or so; "off" leaves them to manage.py seal_journal.
JOURNAL_SEALING = _env.str("LEDGER_JOURNAL_SEALING", default="thread")
if JOURNAL_SEALING not in ("thread", "off"):
    raise ImproperlyConfigured("LEDGER_JOURNAL_SEALING must be thread or off.")
SPECTACULAR_SETTINGS["ENUM_NAME_OVERRIDES"] = {
    "WebhookStatusEnum": "outbox.models.WebhookSubscription.STATUSES",
    "TransactionStatusEnum": "transactions.models.Transaction.STATUSES",
    # An operation's type, in the statement's operations too: the name it always had.
    "OperationOutTypeEnum": ["DEBIT", "CREDIT"],
}
