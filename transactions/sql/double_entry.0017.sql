-- Double entry in the database (PostgreSQL): the rules the engine keeps, kept again by the
-- database, whoever writes. Each is a deferred constraint trigger: it runs when the database
-- transaction commits (or at SET CONSTRAINTS ALL IMMEDIATE), when every row of the posting is
-- in place, and it refuses the commit with check_violation. Amounts are integers at a scale;
-- two amounts are compared at a common scale, exactly (numeric). On a Citus coordinator the
-- triggers are created on the distributed tables' shards too, which Citus allows only when
-- asked (a placeholder setting elsewhere).
SET LOCAL citus.enable_unsafe_triggers TO on;

-- A balance row is the head of its account's statement: at version 0 it is zero; otherwise it
-- equals (at equal value: an overdraft limit may raise its scale) what the operation of its
-- version left, and no operation of the account comes after that version.
CREATE OR REPLACE FUNCTION ledger_balance_is_head(p_org uuid, p_account uuid)
RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    b record;
BEGIN
    SELECT available, on_hold, scale, version INTO b FROM organizations_balance
     WHERE organization_id = p_org AND account_id = p_account;
    IF NOT FOUND THEN
        RAISE EXCEPTION 'double entry: account % has no balance', p_account
            USING ERRCODE = 'check_violation';
    END IF;
    IF b.version = 0 THEN
        IF b.available <> 0 OR b.on_hold <> 0 THEN
            RAISE EXCEPTION 'double entry: the balance of account % changed without an operation',
                p_account USING ERRCODE = 'check_violation';
        END IF;
    ELSIF NOT EXISTS (
        SELECT 1 FROM transactions_operation o
         WHERE o.organization_id = p_org AND o.account_id = p_account
           AND o.balance_version = b.version
           AND o.balance_available_after * 10::numeric ^ b.scale
               = b.available * 10::numeric ^ o.balance_scale_after
           AND o.balance_on_hold_after * 10::numeric ^ b.scale
               = b.on_hold * 10::numeric ^ o.balance_scale_after
    ) THEN
        RAISE EXCEPTION 'double entry: the balance of account % (version %) is not what its operation left',
            p_account, b.version USING ERRCODE = 'check_violation';
    END IF;
    IF EXISTS (
        SELECT 1 FROM transactions_operation o
         WHERE o.organization_id = p_org AND o.account_id = p_account
           AND o.balance_version = b.version + 1
    ) THEN
        RAISE EXCEPTION 'double entry: account % has an operation its balance (version %) does not show',
            p_account, b.version USING ERRCODE = 'check_violation';
    END IF;
END;
$$;

-- An operation: its own change is what its type and effect say; it starts where the previous
-- operation of its account ended (version 1 starts at zero); its account's balance shows it;
-- and its transaction's debits equal its credits in every asset.
CREATE OR REPLACE FUNCTION ledger_operation_double_entry() RETURNS trigger
LANGUAGE plpgsql AS $$
DECLARE
    s smallint := NEW.balance_scale_after;
    amount numeric;
    available numeric;
    on_hold numeric;
    unbalanced varchar;
    ok boolean;
BEGIN
    IF NEW.scale > s OR NEW.balance_scale > s THEN
        RAISE EXCEPTION 'double entry: operation % is at a larger scale than the balance it left', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    amount := NEW.amount * 10::numeric ^ (s - NEW.scale);
    available := NEW.balance_available * 10::numeric ^ (s - NEW.balance_scale);
    on_hold := NEW.balance_on_hold * 10::numeric ^ (s - NEW.balance_scale);
    ok := CASE NEW.effect
        WHEN 'POST' THEN NEW.balance_on_hold_after = on_hold AND NEW.balance_available_after
            = available + CASE NEW.type WHEN 'DEBIT' THEN -amount ELSE amount END
        WHEN 'HOLD' THEN NEW.balance_available_after = available - amount
            AND NEW.balance_on_hold_after = on_hold + amount
        WHEN 'SETTLE' THEN NEW.balance_available_after = available
            AND NEW.balance_on_hold_after = on_hold - amount
        WHEN 'RELEASE' THEN NEW.balance_available_after = available + amount
            AND NEW.balance_on_hold_after = on_hold - amount
        ELSE false
    END;
    IF NOT ok THEN
        RAISE EXCEPTION 'double entry: operation % does not change its balance by its amount', NEW.id
            USING ERRCODE = 'check_violation';
    END IF;
    ok := CASE WHEN NEW.balance_version = 1
        THEN NEW.balance_available = 0 AND NEW.balance_on_hold = 0
        ELSE EXISTS (
            SELECT 1 FROM transactions_operation p
             WHERE p.organization_id = NEW.organization_id AND p.account_id = NEW.account_id
               AND p.balance_version = NEW.balance_version - 1
               AND p.balance_available_after * 10::numeric ^ NEW.balance_scale
                   = NEW.balance_available * 10::numeric ^ p.balance_scale_after
               AND p.balance_on_hold_after * 10::numeric ^ NEW.balance_scale
                   = NEW.balance_on_hold * 10::numeric ^ p.balance_scale_after)
    END;
    IF NOT ok THEN
        RAISE EXCEPTION 'double entry: operation % does not start where the previous one of its account ended',
            NEW.id USING ERRCODE = 'check_violation';
    END IF;
    IF NOT EXISTS (
        SELECT 1 FROM organizations_balance b
         WHERE b.organization_id = NEW.organization_id AND b.account_id = NEW.account_id
           AND b.asset_code = NEW.asset_code AND b.ledger_id = NEW.ledger_id
    ) OR NOT EXISTS (
        SELECT 1 FROM transactions_transaction t
         WHERE t.organization_id = NEW.organization_id AND t.id = NEW.transaction_id
           AND t.ledger_id = NEW.ledger_id
    ) THEN
        RAISE EXCEPTION 'double entry: operation % is not in the asset and ledger of its account and transaction',
            NEW.id USING ERRCODE = 'check_violation';
    END IF;
    PERFORM ledger_balance_is_head(NEW.organization_id, NEW.account_id);
    SELECT o.asset_code INTO unbalanced FROM transactions_operation o
     WHERE o.organization_id = NEW.organization_id AND o.transaction_id = NEW.transaction_id
     GROUP BY o.asset_code
    HAVING sum(CASE
        WHEN o.type = 'DEBIT' AND o.effect IN ('POST', 'SETTLE') THEN o.amount * 10::numeric ^ (18 - o.scale)
        WHEN o.type = 'CREDIT' AND o.effect = 'POST' THEN -o.amount * 10::numeric ^ (18 - o.scale)
        ELSE 0 END) <> 0
     LIMIT 1;
    IF FOUND THEN
        RAISE EXCEPTION 'double entry: the debits of transaction % do not equal its credits in %',
            NEW.transaction_id, unbalanced USING ERRCODE = 'check_violation';
    END IF;
    RETURN NULL;
END;
$$;

CREATE OR REPLACE FUNCTION ledger_balance_double_entry() RETURNS trigger
LANGUAGE plpgsql AS $$
BEGIN
    IF TG_OP = 'DELETE' THEN
        IF OLD.version > 0 THEN
            RAISE EXCEPTION 'double entry: the balance of account % has operations and is kept', OLD.account_id
                USING ERRCODE = 'check_violation';
        END IF;
        RETURN NULL;
    END IF;
    IF TG_OP = 'UPDATE' AND (NEW.account_id, NEW.asset_code, NEW.ledger_id)
        IS DISTINCT FROM (OLD.account_id, OLD.asset_code, OLD.ledger_id) THEN
        RAISE EXCEPTION 'double entry: the balance of account % keeps its account, asset and ledger',
            OLD.account_id USING ERRCODE = 'check_violation';
    END IF;
    IF NOT EXISTS (
        SELECT 1 FROM organizations_account a
         WHERE a.organization_id = NEW.organization_id AND a.id = NEW.account_id
           AND a.asset_code = NEW.asset_code AND a.ledger_id = NEW.ledger_id
    ) THEN
        RAISE EXCEPTION 'double entry: the balance of account % is not in its account''s asset and ledger',
            NEW.account_id USING ERRCODE = 'check_violation';
    END IF;
    PERFORM ledger_balance_is_head(NEW.organization_id, NEW.account_id);
    RETURN NULL;
END;
$$;

CREATE CONSTRAINT TRIGGER operation_double_entry
    AFTER INSERT ON transactions_operation DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_operation_double_entry();

CREATE CONSTRAINT TRIGGER balance_double_entry
    AFTER INSERT OR UPDATE OF available, on_hold, scale, version, account_id, asset_code, ledger_id
    ON organizations_balance
    DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_balance_double_entry();

CREATE CONSTRAINT TRIGGER balance_kept
    AFTER DELETE ON organizations_balance DEFERRABLE INITIALLY DEFERRED
    FOR EACH ROW EXECUTE FUNCTION ledger_balance_double_entry();
