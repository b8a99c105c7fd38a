"""An idempotency key's row is kept whole and uncompressed up to a page
(``toast_tuple_target``), as an event's is (outbox 0002): the answer it records for a posting
is about 2 KB, just over the size past which PostgreSQL compresses a row's large values, so a
keyed posting paid for a compression on its key's row to save about 1 KB, and every replay for
the matching decompression. A larger answer (a batch's) is compressed until it fits a page,
not down to about 2 KB as before."""

from django.db import migrations

from ledgerproject.migration_ops import rows_kept_whole


class Migration(migrations.Migration):
    dependencies = [("transactions", "0010_write_posting_balance_index")]

    operations = [rows_kept_whole("transactions_idempotencykey")]
