CREATE OR REPLACE FUNCTION journal_block_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'journal blocks are append-only: % on journal_block refused', TG_OP
        USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER block_append_only
    BEFORE UPDATE OR DELETE ON journal_block
    FOR EACH ROW EXECUTE FUNCTION journal_block_append_only();
