CREATE TRIGGER block_append_only_update BEFORE UPDATE ON journal_block
BEGIN
    SELECT RAISE(ABORT, 'journal blocks are append-only: UPDATE on journal_block refused');
END;
CREATE TRIGGER block_append_only_delete BEFORE DELETE ON journal_block
BEGIN
    SELECT RAISE(ABORT, 'journal blocks are append-only: DELETE on journal_block refused');
END;
