DROP TRIGGER IF EXISTS block_append_only_update;
DROP TRIGGER IF EXISTS block_append_only_delete;
