#!/usr/bin/env bash
# Installs the Debian packages npukit needs that are not installed yet.
# Idempotent and silent when everything is present. Usage: install-deps.sh [build|test|all]
set -euo pipefail
what=${1:-all}

build_pkgs=(cmake g++ make ccache pkg-config libprotobuf-dev protobuf-compiler libonnx-dev
            libeigen3-dev libcli11-dev nlohmann-json3-dev libxxhash-dev libgtest-dev libhdf5-dev)
test_pkgs=(python3 python3-numpy libopenblas0-pthread python3-onnx python3-torch python3-torchvision
           python3-h5py python3-protobuf)

case "$what" in
  build) want=("${build_pkgs[@]}") ;;
  test|all) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|all]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "install-deps: installing ${missing[*]}"
sudo=""
[ "$(id -u)" -eq 0 ] || sudo="sudo"
export DEBIAN_FRONTEND=noninteractive
# Refresh the package lists only when apt cannot find a candidate for a missing package.
if ! $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >/tmp/npukit-apt.log 2>&1; then
  $sudo apt-get update -qq >>/tmp/npukit-apt.log 2>&1
  $sudo apt-get install -y -qq --no-install-recommends "${missing[@]}" >>/tmp/npukit-apt.log 2>&1 || {
    echo "install-deps: apt-get failed; see /tmp/npukit-apt.log" >&2; tail -20 /tmp/npukit-apt.log >&2; exit 1; }
fi
