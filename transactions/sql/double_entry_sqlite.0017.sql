-- Double entry in the database, as far as SQLite can hold it (docs/BOOKS.md). SQLite has no
-- deferred triggers: these run on each row as it is written, so they hold what is already true
-- of a row then. A posting writes its operations first and its balances last: an operation
-- can be checked against the operation before it, and a balance against the operation it
-- shows. Whether a transaction's debits equal its credits is known only when all its
-- operations are written, which no trigger of SQLite waits for.
--
-- Amounts are stored as text. Two amounts are compared as text, exactly, after the one at the
-- smaller scale is written at the larger (its digits followed by zeros: '12' at scale 0 is
-- '1200' at scale 2; zero stays '0'). Arithmetic is SQLite's 64-bit integers: an operation's
-- own change is checked where every amount of it, at the scale of the balance it left, has at
-- most 18 significant digits.

CREATE TRIGGER balance_double_entry
AFTER UPDATE OF available, on_hold, scale, version ON organizations_balance
FOR EACH ROW
WHEN NOT (
    (NEW.version = 0 AND NEW.available = '0' AND NEW.on_hold = '0')
    OR EXISTS (
        SELECT 1 FROM transactions_operation o
         WHERE o.organization_id = NEW.organization_id AND o.account_id = NEW.account_id
           AND o.balance_version = NEW.version
           AND NEW.scale >= o.balance_scale_after
           AND NEW.available = CASE WHEN o.balance_available_after = '0' THEN '0'
               ELSE o.balance_available_after
                    || substr('000000000000000000', 1, NEW.scale - o.balance_scale_after) END
           AND NEW.on_hold = CASE WHEN o.balance_on_hold_after = '0' THEN '0'
               ELSE o.balance_on_hold_after
                    || substr('000000000000000000', 1, NEW.scale - o.balance_scale_after) END
    )
) OR EXISTS (
    SELECT 1 FROM transactions_operation o
     WHERE o.organization_id = NEW.organization_id AND o.account_id = NEW.account_id
       AND o.balance_version = NEW.version + 1
)
BEGIN
    SELECT RAISE(ABORT, 'double entry: a balance is not what the last operation of its account left');
END;

CREATE TRIGGER balance_double_entry_insert
AFTER INSERT ON organizations_balance
FOR EACH ROW
WHEN NOT (NEW.version = 0 AND NEW.available = '0' AND NEW.on_hold = '0')
BEGIN
    SELECT RAISE(ABORT, 'double entry: a balance without operations is zero');
END;

CREATE TRIGGER operation_double_entry
BEFORE INSERT ON transactions_operation
FOR EACH ROW
WHEN NOT CASE WHEN NEW.balance_version = 1
    THEN NEW.balance_available = '0' AND NEW.balance_on_hold = '0'
    ELSE EXISTS (
        SELECT 1 FROM transactions_operation p
         WHERE p.organization_id = NEW.organization_id AND p.account_id = NEW.account_id
           AND p.balance_version = NEW.balance_version - 1
           AND NEW.balance_scale >= p.balance_scale_after
           AND NEW.balance_available = CASE WHEN p.balance_available_after = '0' THEN '0'
               ELSE p.balance_available_after
                    || substr('000000000000000000', 1, NEW.balance_scale - p.balance_scale_after) END
           AND NEW.balance_on_hold = CASE WHEN p.balance_on_hold_after = '0' THEN '0'
               ELSE p.balance_on_hold_after
                    || substr('000000000000000000', 1, NEW.balance_scale - p.balance_scale_after) END
    )
END
BEGIN
    SELECT RAISE(ABORT, 'double entry: an operation does not start where the previous one of its account ended');
END;

CREATE TRIGGER operation_changes_by_its_amount
BEFORE INSERT ON transactions_operation
FOR EACH ROW
WHEN NEW.scale > NEW.balance_scale_after OR NEW.balance_scale > NEW.balance_scale_after OR (
    max(length(ltrim((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END), '-0')), length(ltrim((CASE WHEN NEW.balance_available = '0' THEN '0' ELSE NEW.balance_available || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END), '-0')), length(ltrim((CASE WHEN NEW.balance_on_hold = '0' THEN '0' ELSE NEW.balance_on_hold || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END), '-0')), length(ltrim(NEW.balance_available_after, '-0')), length(ltrim(NEW.balance_on_hold_after, '-0'))) <= 18
    AND NOT CASE NEW.effect
        WHEN 'POST' THEN CAST(NEW.balance_on_hold_after AS INTEGER) = CAST((CASE WHEN NEW.balance_on_hold = '0' THEN '0' ELSE NEW.balance_on_hold || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER)
            AND CAST(NEW.balance_available_after AS INTEGER) = CAST((CASE WHEN NEW.balance_available = '0' THEN '0' ELSE NEW.balance_available || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) + CASE NEW.type WHEN 'DEBIT' THEN -CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER) ELSE CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER) END
        WHEN 'HOLD' THEN CAST(NEW.balance_available_after AS INTEGER) = CAST((CASE WHEN NEW.balance_available = '0' THEN '0' ELSE NEW.balance_available || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) - CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER) AND CAST(NEW.balance_on_hold_after AS INTEGER) = CAST((CASE WHEN NEW.balance_on_hold = '0' THEN '0' ELSE NEW.balance_on_hold || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) + CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER)
        WHEN 'SETTLE' THEN CAST(NEW.balance_available_after AS INTEGER) = CAST((CASE WHEN NEW.balance_available = '0' THEN '0' ELSE NEW.balance_available || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) AND CAST(NEW.balance_on_hold_after AS INTEGER) = CAST((CASE WHEN NEW.balance_on_hold = '0' THEN '0' ELSE NEW.balance_on_hold || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) - CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER)
        WHEN 'RELEASE' THEN CAST(NEW.balance_available_after AS INTEGER) = CAST((CASE WHEN NEW.balance_available = '0' THEN '0' ELSE NEW.balance_available || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) + CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER) AND CAST(NEW.balance_on_hold_after AS INTEGER) = CAST((CASE WHEN NEW.balance_on_hold = '0' THEN '0' ELSE NEW.balance_on_hold || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.balance_scale) END) AS INTEGER) - CAST((CASE WHEN NEW.amount = '0' THEN '0' ELSE NEW.amount || substr('000000000000000000', 1, NEW.balance_scale_after - NEW.scale) END) AS INTEGER)
        ELSE 0
    END
)
BEGIN
    SELECT RAISE(ABORT, 'double entry: an operation does not change its balance by its amount');
END;
