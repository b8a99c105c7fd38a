"""The benchmark behind ``make bench``: a reference floor endpoint, seeding, a bulk loader,
load generators, the programs it drives (``tools``: gunicorn, wrk, pgbench), the run's
settings (``config``), the runner that prints the table (``python -m bench.run``), and the
Citus row (``python -m bench.organizations``, ``make bench-citus``)."""
