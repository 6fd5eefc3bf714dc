-- Grafana's read-only login on the xaclab database: LOGIN and nothing else,
-- CONNECT on the database, USAGE on the schema public, SELECT on its tables
-- and, through default privileges, on every table the owner creates later
-- (the server's migrations), and read-only transactions by default.
--
-- Run by psql as a superuser, connected to the xaclab database, with
--   -v reader=ROLE -v owner=ROLE -v set_password=true|false
-- (owner: the role that owns the tables) and the password in the
-- environment variable XACLAB_GRAFANA_DB_PASSWORD.  The password is set when
-- the role is created or set_password is true.  Each step looks first and
-- acts only when needed, printing a line "changed: ..." when it does, so a
-- second run prints nothing.  Used by the xaclab_server role and by
-- docker/postgres-init/10-grafana-reader.sh.
\set ON_ERROR_STOP 1
\getenv password XACLAB_GRAFANA_DB_PASSWORD

SELECT current_database() AS db,
       NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'reader') AS create_role,
       (:'set_password')::boolean AS set_password
\gset
\if :create_role
  \set set_password true
\endif
\if :set_password
  \if :{?password}
  \else
    DO $$ BEGIN RAISE EXCEPTION 'the environment variable XACLAB_GRAFANA_DB_PASSWORD is not set'; END $$;
  \endif
\endif

\if :create_role
  CREATE ROLE :"reader" LOGIN PASSWORD :'password';
  \echo changed: created the role :reader
\elif :set_password
  ALTER ROLE :"reader" PASSWORD :'password';
  \echo changed: set the password of :reader
\endif

SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = :'owner') AS owner_missing
\gset
\if :owner_missing
  DO $$ BEGIN RAISE EXCEPTION 'the owner role does not exist'; END $$;
\endif

SELECT r.oid AS reader_oid,
       (SELECT oid FROM pg_roles WHERE rolname = :'owner') AS owner_oid,
       r.rolsuper OR r.rolcreatedb OR r.rolcreaterole OR r.rolreplication OR r.rolbypassrls
         OR NOT r.rolcanlogin AS fix_attributes
FROM pg_roles r
WHERE r.rolname = :'reader'
\gset
\if :fix_attributes
  ALTER ROLE :"reader" LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS;
  \echo changed: took every privilege but LOGIN from :reader
\endif

SELECT NOT EXISTS (
         SELECT FROM pg_database d, aclexplode(d.datacl) a
         WHERE d.datname = current_database() AND a.grantee = :reader_oid AND a.privilege_type = 'CONNECT'
       ) AS grant_connect,
       NOT EXISTS (
         SELECT FROM pg_namespace n, aclexplode(n.nspacl) a
         WHERE n.nspname = 'public' AND a.grantee = :reader_oid AND a.privilege_type = 'USAGE'
       ) AS grant_usage,
       EXISTS (
         SELECT FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
         WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm', 'f')
           AND NOT has_table_privilege(:reader_oid, c.oid, 'SELECT')
       ) AS grant_select,
       NOT EXISTS (
         SELECT FROM pg_default_acl d, aclexplode(d.defaclacl) a
         WHERE d.defaclrole = :owner_oid AND d.defaclnamespace = 'public'::regnamespace
           AND d.defaclobjtype = 'r' AND a.grantee = :reader_oid AND a.privilege_type = 'SELECT'
       ) AS default_select,
       NOT EXISTS (
         SELECT FROM pg_db_role_setting s
         WHERE s.setdatabase = 0 AND s.setrole = :reader_oid
           AND 'default_transaction_read_only=on' = ANY (s.setconfig)
       ) AS set_read_only
\gset

\if :grant_connect
  GRANT CONNECT ON DATABASE :"db" TO :"reader";
  \echo changed: granted CONNECT on :db to :reader
\endif
\if :grant_usage
  GRANT USAGE ON SCHEMA public TO :"reader";
  \echo changed: granted USAGE on the schema public to :reader
\endif
\if :grant_select
  GRANT SELECT ON ALL TABLES IN SCHEMA public TO :"reader";
  \echo changed: granted SELECT on the tables of the schema public to :reader
\endif
\if :default_select
  ALTER DEFAULT PRIVILEGES FOR ROLE :"owner" IN SCHEMA public GRANT SELECT ON TABLES TO :"reader";
  \echo changed: granted SELECT on the future tables of :owner to :reader
\endif
\if :set_read_only
  ALTER ROLE :"reader" SET default_transaction_read_only = on;
  \echo changed: made read-only transactions the default of :reader
\endif
