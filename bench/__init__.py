"""The benchmark behind ``make bench`` (``python -m bench.run``, docs/PERFORMANCE.md), the Citus
row (``python -m bench.organizations``), the reports' timings (``python -m bench.reports``) and
django-hordak's side (``bench/hordak_compare.py``)."""
