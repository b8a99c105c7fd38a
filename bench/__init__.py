"""The benchmark behind ``make bench`` (``python -m bench.run``, docs/PERFORMANCE.md), the Citus
row (``python -m bench.organizations``) and the in-process tools
(``bench.instructions``, ``bench/hordak_compare.py``)."""
