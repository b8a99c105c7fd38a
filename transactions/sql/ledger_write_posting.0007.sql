CREATE OR REPLACE FUNCTION ledger_write_posting(
    p_org uuid, p_ledger uuid, p_assets varchar[], p_accounts uuid[],
    p_transactions jsonb, p_operations jsonb, p_events jsonb, p_balances jsonb
) RETURNS boolean LANGUAGE plpgsql AS $$
BEGIN
    IF NOT (
        (SELECT count(*) FROM instruments_instrument
          WHERE organization_id = p_org AND ledger_id = p_ledger
            AND code = ANY(p_assets) AND deleted_at IS NULL) = cardinality(p_assets)
        AND NOT EXISTS (SELECT 1 FROM organizations_account
          WHERE organization_id = p_org AND id = ANY(p_accounts) AND deleted_at IS NOT NULL)
        AND EXISTS (SELECT 1 FROM organizations_ledger
          WHERE organization_id = p_org AND id = p_ledger AND deleted_at IS NULL
          FOR KEY SHARE)
    ) THEN
        RETURN false;
    END IF;
    INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id,
      ledger_id, parent_id, is_reversal, template_id, type, description, status, amount, scale,
      asset_code, chart_of_accounts_group_name, source, destination, metadata, legs, expires_at)
    SELECT * FROM jsonb_to_recordset(p_transactions) AS t(id uuid, created_at timestamptz,
      updated_at timestamptz, organization_id uuid, ledger_id uuid, parent_id uuid,
      is_reversal boolean, template_id uuid, type varchar, description text, status varchar,
      amount numeric, scale smallint, asset_code varchar, chart_of_accounts_group_name varchar,
      source jsonb, destination jsonb, metadata jsonb, legs jsonb, expires_at timestamptz);
    INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id,
      transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code,
      chart_of_accounts, description, amount, scale, balance_available, balance_on_hold,
      balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after,
      balance_version, metadata)
    SELECT * FROM jsonb_to_recordset(p_operations) AS o(id uuid, created_at timestamptz,
      updated_at timestamptz, organization_id uuid, ledger_id uuid, transaction_id uuid,
      account_id uuid, account_alias varchar, portfolio_id uuid, type varchar, effect varchar,
      asset_code varchar, chart_of_accounts varchar, description text, amount numeric,
      scale smallint, balance_available numeric, balance_on_hold numeric,
      balance_scale smallint, balance_available_after numeric, balance_on_hold_after numeric,
      balance_scale_after smallint, balance_version bigint, metadata jsonb);
    INSERT INTO outbox_event (event_id, type, organization_id, ledger_id, resource_id,
      created_at, data)
    SELECT * FROM jsonb_to_recordset(p_events) AS e(event_id uuid, type varchar,
      organization_id uuid, ledger_id uuid, resource_id uuid, created_at timestamptz,
      data jsonb);
    UPDATE organizations_balance AS b
    SET available = v.available, on_hold = v.on_hold, scale = v.scale,
        overdraft_limit = v.overdraft_limit, version = v.version, updated_at = v.updated_at
    FROM jsonb_to_recordset(p_balances) AS v(id uuid, available numeric, on_hold numeric,
      scale smallint, overdraft_limit numeric, version bigint, updated_at timestamptz)
    WHERE b.organization_id = p_org AND b.id = v.id;
    RETURN true;
END;
$$;
