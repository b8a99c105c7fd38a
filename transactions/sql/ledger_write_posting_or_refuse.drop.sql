DROP FUNCTION IF EXISTS ledger_write_posting_or_refuse(
    uuid, uuid, varchar[], uuid[], jsonb, jsonb, jsonb, jsonb
);
