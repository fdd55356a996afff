#!/usr/bin/env bash
# Makes sure a PostgreSQL server answers on 127.0.0.1:5432 with trust auth and a `test` database,
# installing it from Debian's packages when it is missing.
set -euo pipefail
ready() { pg_isready -h 127.0.0.1 -p 5432 -q 2>/dev/null; }
if command -v pg_isready >/dev/null 2>&1 && ready; then
  echo "postgres: running"
else
  if ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    echo "postgres: installing"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq postgresql postgresql-client >/dev/null
  fi
  echo "postgres: starting"
  if command -v pg_ctlcluster >/dev/null 2>&1 && ls /etc/postgresql/*/main >/dev/null 2>&1; then
    v=$(ls /etc/postgresql | sort -V | tail -n1)
    conf=/etc/postgresql/$v/main
    # trust auth on loopback for the tests
    if ! grep -q '^host all all 127.0.0.1/32 trust' "$conf/pg_hba.conf"; then
      sed -i '1i host all all 127.0.0.1/32 trust\nhost all all ::1/128 trust\nlocal all all trust' "$conf/pg_hba.conf"
    fi
    pg_ctlcluster "$v" main start || service postgresql start
  else
    service postgresql start
  fi
  for _ in $(seq 1 30); do ready && break; sleep 1; done
  ready || { echo "postgres: did not start"; exit 1; }
fi
# the `test` database
if ! psql -h 127.0.0.1 -U postgres -d test -c 'select 1' >/dev/null 2>&1; then
  psql -h 127.0.0.1 -U postgres -c 'create database test' >/dev/null
fi
echo "postgres: ready on 127.0.0.1:5432 (database test)"
