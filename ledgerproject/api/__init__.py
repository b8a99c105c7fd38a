"""API plumbing shared by every app: errors, authentication, tenancy, pagination, fields."""
