CREATE OR REPLACE FUNCTION ledger_write_posting(
    p_org uuid, p_ledger uuid, p_assets varchar[], p_accounts uuid[],
    p_transactions jsonb, p_operations jsonb, p_events jsonb, p_balances jsonb
) RETURNS boolean LANGUAGE plpgsql AS $$
-- Every row is found by the whole of a unique key, one key at a time (a fenced LATERAL
-- subquery, or one UPDATE per balance): PostgreSQL costs such a lookup at one row whatever it
-- knows of the table, so the plans are the same with statistics and without them. A list of
-- keys matched at once (= ANY, IN) is a choice the planner makes from statistics; without
-- them it read every account and balance of the organization.
DECLARE
    v record;
    updated bigint := 0;
    -- The earliest time a written operation takes effect: none may fall in the ledger's closed
    -- period, before its period_opens_at. Checked on the ledger's row as it is once
    -- share-locked, so a close that committed meanwhile is seen (organizations/periods.py).
    earliest timestamptz := (SELECT min(COALESCE(r->>24, r->>1)::timestamptz)
                             FROM jsonb_array_elements(p_operations) AS r);
BEGIN
    IF NOT (
        (SELECT count(*) FROM unnest(p_assets) AS wanted(code)
          CROSS JOIN LATERAL (SELECT 1 FROM instruments_instrument i
            WHERE i.organization_id = p_org AND i.ledger_id = p_ledger
              AND i.code = wanted.code AND i.deleted_at IS NULL OFFSET 0) AS found
        ) = cardinality(p_assets)
        AND NOT EXISTS (SELECT 1 FROM unnest(p_accounts) AS wanted(id)
          CROSS JOIN LATERAL (SELECT 1 FROM organizations_account a
            WHERE a.organization_id = p_org AND a.id = wanted.id
              AND a.deleted_at IS NOT NULL OFFSET 0) AS deleted)
        AND EXISTS (SELECT 1 FROM organizations_ledger
          WHERE organization_id = p_org AND id = p_ledger AND deleted_at IS NULL
            AND (period_opens_at IS NULL OR earliest IS NULL OR earliest >= period_opens_at)
          FOR KEY SHARE)
    ) THEN
        RETURN false;
    END IF;
    -- A process on an earlier version sends no actor (the columns' defaults), no effective
    -- time (its postings took effect when they were posted), no time to commit a hold at and
    -- no conversion.
    INSERT INTO transactions_transaction (id, created_at, updated_at, organization_id, ledger_id, parent_id, is_reversal, template_id, type, description, status, amount, scale, asset_code, chart_of_accounts_group_name, source, destination, metadata, legs, expires_at, actor_kind, actor_name, actor_id, request_id, effective_at, commit_at, conversion)
    SELECT (r->>0)::uuid AS id,
        (r->>1)::timestamptz AS created_at,
        (r->>2)::timestamptz AS updated_at,
        (r->>3)::uuid AS organization_id,
        (r->>4)::uuid AS ledger_id,
        (r->>5)::uuid AS parent_id,
        (r->>6)::boolean AS is_reversal,
        (r->>7)::uuid AS template_id,
        (r->>8)::varchar AS type,
        (r->>9)::text AS description,
        (r->>10)::varchar AS status,
        (r->>11)::numeric AS amount,
        (r->>12)::smallint AS scale,
        (r->>13)::varchar AS asset_code,
        (r->>14)::varchar AS chart_of_accounts_group_name,
        NULLIF(r->15, 'null') AS source,
        NULLIF(r->16, 'null') AS destination,
        NULLIF(r->17, 'null') AS metadata,
        NULLIF(r->18, 'null') AS legs,
        (r->>19)::timestamptz AS expires_at,
        COALESCE(r->>20, 'system')::varchar AS actor_kind,
        COALESCE(r->>21, '')::varchar AS actor_name,
        (r->>22)::varchar AS actor_id,
        COALESCE(r->>23, '')::varchar AS request_id,
        COALESCE(r->>24, r->>1)::timestamptz AS effective_at,
        (r->>25)::timestamptz AS commit_at,
        NULLIF(r->26, 'null') AS conversion
    FROM jsonb_array_elements(p_transactions) AS r;
    INSERT INTO transactions_operation (id, created_at, updated_at, organization_id, ledger_id, transaction_id, account_id, account_alias, portfolio_id, type, effect, asset_code, chart_of_accounts, description, amount, scale, balance_available, balance_on_hold, balance_scale, balance_available_after, balance_on_hold_after, balance_scale_after, balance_version, metadata, effective_at, conversion)
    SELECT (r->>0)::uuid AS id,
        (r->>1)::timestamptz AS created_at,
        (r->>2)::timestamptz AS updated_at,
        (r->>3)::uuid AS organization_id,
        (r->>4)::uuid AS ledger_id,
        (r->>5)::uuid AS transaction_id,
        (r->>6)::uuid AS account_id,
        (r->>7)::varchar AS account_alias,
        (r->>8)::uuid AS portfolio_id,
        (r->>9)::varchar AS type,
        (r->>10)::varchar AS effect,
        (r->>11)::varchar AS asset_code,
        (r->>12)::varchar AS chart_of_accounts,
        (r->>13)::text AS description,
        (r->>14)::numeric AS amount,
        (r->>15)::smallint AS scale,
        (r->>16)::numeric AS balance_available,
        (r->>17)::numeric AS balance_on_hold,
        (r->>18)::smallint AS balance_scale,
        (r->>19)::numeric AS balance_available_after,
        (r->>20)::numeric AS balance_on_hold_after,
        (r->>21)::smallint AS balance_scale_after,
        (r->>22)::bigint AS balance_version,
        NULLIF(r->23, 'null') AS metadata,
        COALESCE(r->>24, r->>1)::timestamptz AS effective_at,
        NULLIF(r->25, 'null') AS conversion
    FROM jsonb_array_elements(p_operations) AS r;
    INSERT INTO outbox_event (event_id, type, organization_id, ledger_id, resource_id, created_at, data, actor_kind, actor_name, actor_id, request_id, client_address, reason)
    SELECT (r->>0)::uuid AS event_id,
        (r->>1)::varchar AS type,
        (r->>2)::uuid AS organization_id,
        (r->>3)::uuid AS ledger_id,
        (r->>4)::uuid AS resource_id,
        (r->>5)::timestamptz AS created_at,
        NULLIF(r->6, 'null') AS data,
        COALESCE(r->>7, 'system')::varchar AS actor_kind,
        COALESCE(r->>8, '')::varchar AS actor_name,
        (r->>9)::varchar AS actor_id,
        COALESCE(r->>10, '')::varchar AS request_id,
        (r->>11)::inet AS client_address,
        (r->>12)::varchar AS reason
    FROM jsonb_array_elements(p_events) AS r;
    -- A balance of an account the guard does not name is not updated (the guard checked only
    -- those): the function raises rather than write a posting without it.
    SELECT count(*) INTO updated FROM jsonb_to_recordset(p_balances) AS r(account_id uuid)
    WHERE r.account_id IN (SELECT unnest(p_accounts));
    IF updated = jsonb_array_length(p_balances) THEN
        updated := 0;
        FOR v IN SELECT * FROM jsonb_to_recordset(p_balances) AS r(id uuid, account_id uuid,
            available numeric, on_hold numeric, scale smallint, overdraft_limit numeric,
            version bigint, updated_at timestamptz)
        LOOP
            UPDATE organizations_balance
            SET available = v.available, on_hold = v.on_hold, scale = v.scale,
                overdraft_limit = v.overdraft_limit, version = v.version,
                updated_at = v.updated_at
            WHERE organization_id = p_org AND id = v.id AND account_id = v.account_id;
            updated := updated + FOUND::int;
        END LOOP;
    END IF;
    IF updated <> jsonb_array_length(p_balances) THEN
        RAISE EXCEPTION 'ledger_write_posting: % of % balances updated', updated,
            jsonb_array_length(p_balances);
    END IF;
    RETURN true;
END;
$$;
