CREATE SEQUENCE IF NOT EXISTS organizations_authepoch_seq;
CREATE OR REPLACE FUNCTION organizations_auth_epoch_bump() RETURNS trigger AS $$
BEGIN
    INSERT INTO organizations_authepoch (id, value)
    VALUES (1, nextval('organizations_authepoch_seq'))
    ON CONFLICT (id) DO UPDATE SET value = EXCLUDED.value;
    RETURN NULL;
END;
$$ LANGUAGE plpgsql;
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_apitoken
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_apitoken_organizations
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
CREATE TRIGGER auth_epoch_bump AFTER INSERT OR UPDATE OR DELETE OR TRUNCATE
    ON organizations_organization
    FOR EACH STATEMENT EXECUTE FUNCTION organizations_auth_epoch_bump();
