DROP FUNCTION IF EXISTS ledger_write_posting(uuid, uuid, varchar[], uuid[], jsonb, jsonb,
    jsonb, jsonb);
