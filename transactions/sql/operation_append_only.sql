CREATE OR REPLACE FUNCTION transactions_operation_append_only() RETURNS trigger AS $$
BEGIN
    RAISE EXCEPTION 'operations are append-only: % on transactions_operation refused', TG_OP
        USING ERRCODE = 'check_violation';
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER operation_append_only
    BEFORE UPDATE OR DELETE ON transactions_operation
    FOR EACH ROW EXECUTE FUNCTION transactions_operation_append_only();
