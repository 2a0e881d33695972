#!/usr/bin/env bash
# Renders every kustomization under k8s/ (base, overlays/*, examples/*) with
# `kubectl kustomize` and validates the output offline with validate.mjs
# (Kubernetes schemas from the kubernetes-models package, unknown fields,
# chessd's deployment policy). Installs nothing: kubectl comes from Debian's
# kubernetes-client package (or any kubectl on PATH, or $KUBECTL) and the
# node packages from `npm ci --prefix tests/k8s` (make deps).
#
# It works on a copy of k8s/ without any secrets/ directory, so the real
# secret inputs never leave k8s/: first it checks that an overlay does not
# render without them (no placeholder secret can reach a cluster), then it
# writes test values and renders. Exits non-zero on any failure.
set -uo pipefail
cd "$(dirname "$0")/../.."
KUBECTL="${KUBECTL:-kubectl}"
if ! command -v "$KUBECTL" >/dev/null 2>&1; then
    echo "tests/k8s/run.sh: $KUBECTL not found; install Debian's kubernetes-client (make deps)" >&2
    exit 2
fi
if [ ! -d tests/k8s/node_modules ]; then
    echo "tests/k8s/run.sh: tests/k8s/node_modules is missing; run npm ci --prefix tests/k8s (make deps)" >&2
    exit 2
fi

passed=0
failed=0
ok() { passed=$((passed + 1)); echo "ok - $1"; }
not_ok() { failed=$((failed + 1)); echo "not ok - $1"; }

# kubectl up to 1.20 embeds kustomize v2.0.3, whose `$patch: delete` leaves
# empty documents behind: the examples are skipped there.
minor=$("$KUBECTL" version --client -o json 2>/dev/null |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{try{console.log(parseInt(JSON.parse(s).clientVersion.minor,10)||0)}catch{console.log(0)}})')
echo "# $("$KUBECTL" version --client 2>/dev/null | head -2 | tr '\n' ' ')"

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
mkdir -p "$work/k8s" "$work/out"
tar -C k8s --exclude=secrets -cf - . | tar -C "$work/k8s" -xf -

targets=()
for dir in "$work"/k8s/base "$work"/k8s/overlays/*/ "$work"/k8s/examples/*/; do
    [ -f "$dir/kustomization.yaml" ] || continue
    target=${dir%/}
    target=${target#"$work"/k8s/}
    if [ "$target" != "${target#examples/}" ] && [ "$minor" -le 20 ]; then
        echo "# skip $target: kubectl 1.$minor (kustomize v2) leaves empty documents for \$patch: delete"
        continue
    fi
    targets+=("$target")
done

# Secret inputs each target reads (secretGenerator files: KEY=secrets/NAME).
secret_files() { grep -oE '=secrets/[A-Za-z0-9._-]+' "$work/k8s/$1/kustomization.yaml" | cut -c2-; }

for target in "${targets[@]}"; do
    if [ -n "$(secret_files "$target")" ]; then
        if "$KUBECTL" kustomize "$work/k8s/$target" >/dev/null 2>&1; then
            not_ok "$target: renders without its secrets/ files (it must refuse)"
        else
            ok "$target: refuses to render without its secrets/ files"
        fi
    fi
done

for target in "${targets[@]}"; do
    for f in $(secret_files "$target"); do
        case "$f" in
            *redis-url*)
                case "$target" in
                    *tls*) value="rediss://:test-password@redis.test.invalid:6380/0" ;;
                    *) value="redis://:test-password@redis.test.invalid:6379/0" ;;
                esac ;;
            *) value="test-only-$(basename "$f")-not-a-real-secret" ;;
        esac
        mkdir -p "$work/k8s/$target/secrets"
        printf %s "$value" >"$work/k8s/$target/$f"
    done
done

rendered=()
for target in "${targets[@]}"; do
    out="$work/out/${target//\//_}.yaml"
    if "$KUBECTL" kustomize "$work/k8s/$target" >"$out" 2>"$out.err"; then
        ok "$target: kubectl kustomize renders"
        rendered+=("$target=$out")
    else
        not_ok "$target: kubectl kustomize renders"
        sed 's/^/#   /' "$out.err"
    fi
done

node tests/k8s/validate.mjs --passed "$passed" --failed "$failed" --self-test "${rendered[@]}"
exit $?
