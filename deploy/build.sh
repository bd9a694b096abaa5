#!/bin/sh
# The build steps of deploy/Dockerfile, runnable outside Docker (and run by
# test/package/pack.integration.test.ts), from a project folder holding
# package.json, package-lock.json and schema.ts.
#
#   sh deploy/build.sh build [SCHEMA] [OUT]   install everything, generate OUT (default: service) from SCHEMA (default: schema.ts)
#   sh deploy/build.sh runtime                install production dependencies only (npm ci --omit=dev)
set -eu
step="${1:-}"
case "$step" in
  build)
    schema="${2:-schema.ts}"
    out="${3:-service}"
    npm ci --no-audit --no-fund --loglevel=error
    npx --no-install svc-gen build --schema "$schema" --out "$out"
    ;;
  runtime)
    npm ci --omit=dev --no-audit --no-fund --loglevel=error
    ;;
  *)
    echo "usage: sh deploy/build.sh build [SCHEMA] [OUT] | runtime" >&2
    exit 2
    ;;
esac
