DROP TRIGGER IF EXISTS block_append_only ON journal_block;
DROP FUNCTION IF EXISTS journal_block_append_only();
