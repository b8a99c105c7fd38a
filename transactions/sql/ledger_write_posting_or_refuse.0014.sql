CREATE OR REPLACE FUNCTION ledger_write_posting_or_refuse(
    p_org uuid, p_ledger uuid, p_assets varchar[], p_accounts uuid[],
    p_transactions jsonb, p_operations jsonb, p_events jsonb, p_balances jsonb
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF NOT ledger_write_posting(p_org, p_ledger, p_assets, p_accounts, p_transactions,
                                p_operations, p_events, p_balances) THEN
        RAISE EXCEPTION 'ledger_write_posting: the guard does not hold; nothing was written'
            USING ERRCODE = 'LG001';
    END IF;
    RETURN true;
END;
$$;
