# make run: a working service on a fresh machine with only Python 3.11+.
# make test: the whole suite. DATABASE_URL=postgres://... switches both to PostgreSQL.
# HOST and PORT choose where `make run` listens: make run HOST=0.0.0.0 PORT=8080
PYTHON ?= python3
VENV := .venv
BIN := $(VENV)/bin
HOST ?= 127.0.0.1
PORT ?= 8000

.PHONY: run test test-citus lint format venv migrate stress bench bench-citus

$(BIN)/.installed: requirements.txt
	test -x $(BIN)/python || $(PYTHON) -m venv $(VENV)
	$(BIN)/python -m pip install --quiet --upgrade pip
	$(BIN)/python -m pip install --quiet -r requirements.txt
	touch $@

venv: $(BIN)/.installed

# The local settings (.env, git-ignored): a generated SECRET_KEY and demo token, written once.
# A DATABASE_URL set in the environment is recorded there at every run, so that the docs'
# manage.py lines use the same database; a PostgreSQL database it names is created if missing.
migrate: venv
	$(BIN)/python -m ledgerproject.localdev write-env .env
	$(BIN)/python -m ledgerproject.localdev create-database .env
	$(BIN)/python manage.py migrate --noinput
	$(BIN)/python manage.py createcachetable

# The port is checked first, so a busy one changes nothing (no migration, no new token).
# Each server has its own control socket (gunicornc -s PATH), named by where it listens: with
# gunicorn's default, one per user, a second `make run` would take the first one's over.
run: venv
	@$(BIN)/python -m ledgerproject.localdev check-port $(HOST) $(PORT)
	$(MAKE) --no-print-directory migrate
	$(BIN)/python manage.py bootstrap_demo --base-url http://$(HOST):$(PORT)
	$(BIN)/gunicorn ledgerproject.wsgi --bind $(HOST):$(PORT) --workers 2 --threads 4 \
		--access-logfile - --graceful-timeout 5 --control-socket $(VENV)/gunicorn-$(HOST)-$(PORT).ctl

# The back-office browser tests drive Chromium: installed from Debian's packages if missing
# (as root; elsewhere install it yourself or set LEDGER_CHROMIUM).
test: venv
	@command -v chromium >/dev/null || [ -n "$$LEDGER_CHROMIUM" ] || \
		(apt-get update -qq && apt-get install -y -qq chromium) >/dev/null 2>&1 || \
		echo "make test: could not install chromium; the browser tests will say how to get it"
	$(BIN)/python -m pytest -q $(PYTEST_ARGS)

# The tenancy, posting, concurrency and check_ledger tests, and the cluster's own, through a
# Citus coordinator (docs/SCALING.md): DATABASE_URL=postgres://...:9700/<name>, with
# test_<name> made on every node first (scripts/citus-cluster createdb test_<name>).
CITUS_TESTS ?= tests/citus tests/concurrency tests/api/test_tenancy_fails_closed.py \
	tests/api/test_not_found_oracle.py tests/transactions/test_posting.py \
	tests/transactions/test_batch.py tests/transactions/test_idempotency.py \
	tests/transactions/test_states.py tests/transactions/test_inline.py \
	tests/transactions/test_check_ledger.py tests/transactions/test_double_entry_in_database.py \
	tests/transactions/test_effective_dates.py tests/transactions/test_closed_periods.py \
	tests/transactions/test_scheduled_postings.py tests/transactions/test_account_trees.py \
	tests/transactions/test_conversions.py tests/transactions/test_balance_monitors.py \
	tests/transactions/test_tree_monitors.py tests/transactions/test_action_preview.py \
	tests/instruments tests/templates_dsl \
	tests/api/test_ledgers.py tests/api/test_organizations.py \
	tests/journal/test_sealing.py tests/journal/test_api.py tests/journal/test_who_did_what.py
test-citus: venv
	LEDGER_CITUS=1 $(BIN)/python -m pytest -q --reuse-db -p no:cacheprovider $(CITUS_TESTS) $(PYTEST_ARGS)

# The slow and PostgreSQL tests with LEDGER_STRESS=1: more examples, a longer load, more kills.
# DATABASE_URL=postgres://... runs them all (on SQLite the PostgreSQL ones skip).
stress: venv
	LEDGER_STRESS=1 $(BIN)/python -m pytest -q -m "slow or postgres" $(PYTEST_ARGS)

lint: venv
	$(BIN)/ruff check .
	$(BIN)/ruff format --check .
	$(BIN)/mypy

format: venv
	$(BIN)/ruff format .
	$(BIN)/ruff check --fix .

# The benchmark (docs/PERFORMANCE.md): gunicorn on its own PostgreSQL database, wrk + Lua,
# pgbench, a million bulk-loaded transactions; prints the goals' ratios, writes
# bench/results/latest.json, then the Citus row. QUICK=1: one short round on 100,000 loaded
# transactions, under 5 minutes, indicative figures, no Citus row. django-hordak, the in-process
# reference, runs from its own virtual environment (HORDAK_VENV), made once; without it
# (offline), its ratio is left out.
BENCH_DATABASE_URL ?= postgres://postgres@127.0.0.1:5432/ledger_bench
HORDAK_VENV ?= $(HOME)/.cache/ledger-hordak
HORDAK := $(HORDAK_VENV)/bin/python
bench: venv
	@command -v wrk >/dev/null || (apt-get update -qq && apt-get install -y -qq wrk) \
		|| { echo "make bench needs wrk (apt-get install wrk)"; exit 1; }
	@command -v pgbench >/dev/null || { echo "make bench needs pgbench (postgresql-client)"; exit 1; }
	@$(HORDAK) -c "import hordak" 2>/dev/null || ($(PYTHON) -m venv $(HORDAK_VENV) && \
		$(HORDAK_VENV)/bin/pip install --quiet django-hordak "psycopg[binary]") \
		|| echo "no django-hordak: its ratio is left out"
	$(BIN)/python -m bench.run --database-url $(BENCH_DATABASE_URL) $(if $(QUICK),--quick) \
		$$($(HORDAK) -c "import hordak" 2>/dev/null && echo --hordak-python $(HORDAK)) \
		$(BENCH_ARGS)
	$(if $(QUICK),,$(MAKE) --no-print-directory bench-citus)

# The Citus row (docs/SCALING.md): postings spread over 16 organizations on single-node
# PostgreSQL, then through a local Citus coordinator with two workers (built from
# CITUS_TARBALL once per machine); writes bench/results/citus-latest.json.
CITUS_TARBALL ?= ../shared/citus/citus-v13.2.2.tar.gz
bench-citus: venv
	@test -f $(CITUS_TARBALL) || { echo "make bench-citus needs a Citus 13 source tarball: CITUS_TARBALL=..."; exit 1; }
	scripts/citus-cluster build $(CITUS_TARBALL)
	scripts/citus-cluster start
	$(BIN)/python -m bench.organizations --database-url $(BENCH_DATABASE_URL)_orgs \
		--citus-url postgres://postgres@127.0.0.1:9700/ledger_bench_orgs \
		--output bench/results/citus-latest.json $(BENCH_CITUS_ARGS)
	scripts/citus-cluster dropdb ledger_bench_orgs
	scripts/citus-cluster stop
