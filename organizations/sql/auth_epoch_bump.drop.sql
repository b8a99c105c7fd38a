DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_apitoken_organizations;
DROP TRIGGER IF EXISTS auth_epoch_bump ON organizations_organization;
DROP FUNCTION IF EXISTS organizations_auth_epoch_bump();
DROP SEQUENCE IF EXISTS organizations_authepoch_seq;
