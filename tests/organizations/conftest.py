from tests.organizations.helpers import (  # noqa: F401
    eur,
    other_ledger_url,
    other_organization,
    outsider,
    reader,
    usd,
)
