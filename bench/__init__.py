"""The benchmark behind ``make bench``: a reference floor endpoint, seeding, a bulk loader,
load generators and the runner that prints the table (``python -m bench.run``)."""
