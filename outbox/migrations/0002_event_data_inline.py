"""An event's row is kept whole and uncompressed up to a page (``toast_tuple_target``).

An event carries its resource's rendering; a posting's is about 2 KB of ``jsonb``, just over
the size (about 2 KB) past which PostgreSQL compresses a row's large values before storing
them. So every posting's event was compressed as it was written, and again read back
uncompressed by whatever read it. Up to a page (8,160 bytes) the row is now stored as it is:
the CPU of the compression saved on every posting, for about 1 KB more of table and WAL. A
larger row (a posting with many legs) is compressed until it fits a
page, not down to about 2 KB as before."""

from django.db import migrations

from ledgerproject.migration_ops import rows_kept_whole


class Migration(migrations.Migration):
    dependencies = [("outbox", "0001_events_and_webhooks")]

    operations = [rows_kept_whole("outbox_event")]
