#!/usr/bin/env bash
# Checks renovate.json with Renovate itself, offline: the config validator (--strict), then Renovate's own extraction
# (--platform=local --dry-run=extract) over a copy of the working tree, plus a Dockerfile written in the other form
# (base images as ARG defaults, FROM ${ARG}), and fails unless every dependency a fork relies on is found by the
# manager expected to update it. Renovate looks nothing up in this mode (no registry is reachable here), so it proves
# what Renovate will watch, not the updates it would propose.
#
# Not part of `mvn verify`: Renovate needs Node.js 24 and installs ~560 MB. Both come from the npm registry
# (node@24 ships the Node.js binary as an npm package) into .tools/renovate/ (git-ignored; RENOVATE_HOME=DIR puts them
# elsewhere); a second run reuses them.
# Usage: scripts/check-renovate-config.sh
set -euo pipefail

NODE_PACKAGE="node@24.21.0"
RENOVATE_PACKAGE="renovate@44.121.2"

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="${RENOVATE_HOME:-$ROOT/.tools/renovate}"
log() { printf 'check-renovate-config: %s\n' "$*"; }

mkdir -p "$TOOLS"
if [[ ! -x "$TOOLS/node_modules/.bin/renovate" ]]; then
    log "installing $NODE_PACKAGE and $RENOVATE_PACKAGE into .tools/renovate (a few minutes)"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS" "$NODE_PACKAGE"
    PATH="$TOOLS/node_modules/.bin:$PATH" npm install --silent --no-audit --no-fund --prefix "$TOOLS" "$RENOVATE_PACKAGE"
fi
export PATH="$TOOLS/node_modules/.bin:$PATH"
log "node $(node --version), renovate $(renovate --version)"

work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# The working tree as it is (tracked files, uncommitted edits included), in a git repository of its own.
(cd "$ROOT" && git ls-files -z --cached --others --exclude-standard | xargs -0 tar -cf - 2>/dev/null) | tar -xf - -C "$work"
mkdir -p "$work/renovate-fixture"
cat >"$work/renovate-fixture/Dockerfile" <<'EOF'
ARG BUILD_IMAGE=maven:3.9-eclipse-temurin-25
ARG RUNTIME_IMAGE=eclipse-temurin:25-jre
FROM ${BUILD_IMAGE} AS build
FROM ${RUNTIME_IMAGE}
COPY --from=build /build/target/libs ./libs
EOF
git -C "$work" init -q
git -C "$work" add -A
git -C "$work" -c user.name=check -c user.email=check@localhost commit -q -m snapshot

log "renovate-config-validator --strict"
# Renovate prefers the native re2 engine and falls back to JavaScript regular expressions when its binding does not
# load under this Node.js; the fallback is what its own tests run too, so that warning is filtered out.
(cd "$work" && renovate-config-validator --strict 2>&1 | grep -E '^ *(INFO|WARN|ERROR)' | grep -v -i 're2') \
    || { log "renovate.json is invalid"; exit 1; }

log "renovate --platform=local --dry-run=extract"
(cd "$work" && LOG_LEVEL=warn renovate --platform=local --dry-run=extract --onboarding=false \
    --require-config=optional --report-type=file --report-path="$work/report.json" >"$work/renovate.log" 2>&1) \
    || { cat "$work/renovate.log"; log "renovate failed"; exit 1; }

node - "$work/report.json" <<'EOF'
const report = require(process.argv[2]);
const found = new Set();
for (const repo of Object.values(report.repositories)) {
  for (const [manager, files] of Object.entries(repo.packageFiles)) {
    for (const file of files) {
      for (const dep of file.deps) {
        console.log(`  ${manager.padEnd(15)} ${file.packageFile.padEnd(45)} ${dep.depName} ${dep.currentValue ?? ''}`);
        found.add(`${manager} ${file.packageFile} ${dep.depName}`);
      }
    }
  }
}
const expected = [
  'dockerfile Dockerfile eclipse-temurin', 'dockerfile Dockerfile maven',
  'dockerfile renovate-fixture/Dockerfile eclipse-temurin', 'dockerfile renovate-fixture/Dockerfile maven',
  'maven pom.xml io.helidon.applications:helidon-se', 'maven pom.xml io.lettuce:lettuce-core',
  'maven pom.xml org.cyclonedx:cyclonedx-maven-plugin', 'regex pom.xml io.netty:netty-bom',
  'kustomize k8s/overlays/prod/kustomization.yaml registry.example.com/payments/payments-authorization',
  'github-actions .github/workflows/ci.yml actions/checkout', 'github-actions .github/workflows/ci.yml actions/setup-java',
  'github-actions .github/workflows/ci.yml actions/upload-artifact',
];
const missing = expected.filter(e => !found.has(e));
if (missing.length) {
  console.error('check-renovate-config: not found by Renovate:\n  ' + missing.join('\n  '));
  process.exit(1);
}
console.log(`check-renovate-config: all ${expected.length} expected dependencies found`);
EOF
