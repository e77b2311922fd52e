#!/usr/bin/env bash
# Installs the Debian packages npukit needs that are not installed yet.
# Idempotent and silent when everything is present. Usage: install-deps.sh [build|test|all|fuzz]
set -euo pipefail
what=${1:-all}

# ocl-icd-opencl-dev: Debian builds oneDNN with its OpenCL GPU runtime, so dnnl-config.cmake requires OpenCL,
# but libdnnl-dev only recommends the package and apt runs here without recommends.
build_pkgs=(cmake g++ make ccache pkg-config libprotobuf-dev protobuf-compiler libonnx-dev
            libeigen3-dev libdnnl-dev ocl-icd-opencl-dev libcli11-dev nlohmann-json3-dev libxxhash-dev libgtest-dev libhdf5-dev
            libtree-sitter-dev libxlsxwriter-dev libinih-dev libsqlite3-dev ca-certificates
            libomp-dev  # LLVM's OpenMP runtime: cheaper fork and join than libgomp's (libcore/CMakeLists.txt)
            pybind11-dev python3-dev)  # pyACL, the Python module `acl` over libascendcl
# python3-opencv: OpenCV DNN, the independent reference the TensorFlow and Caffe tests compare with.
# dpkg-dev and file: cpack -G DEB reads the .deb's dependencies off the binaries (make package and its test).
test_pkgs=(dpkg-dev file python3 python3-numpy libopenblas0-pthread python3-onnx python3-torch python3-torchvision
           python3-h5py python3-protobuf python3-openpyxl python3-opencv
           slurmctld slurmd slurm-client munge  # a single-node Slurm cluster for the batch-job test (tests/e2e/test_slurm.py)
           chromium)  # renders msaccucmp's HTML report headless (tests/msaccucmp/test_html_report.py)
fuzz_pkgs=(clang libclang-rt-dev)  # make fuzz: libFuzzer and the sanitizer runtimes

case "$what" in
  build) want=("${build_pkgs[@]}") ;;
  test|all) want=("${build_pkgs[@]}" "${test_pkgs[@]}") ;;
  fuzz) want=("${build_pkgs[@]}" "${test_pkgs[@]}" "${fuzz_pkgs[@]}") ;;
  *) echo "usage: $0 [build|test|all|fuzz]" >&2; exit 2 ;;
esac

missing=()
for p in "${want[@]}"; do
  dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed" || missing+=("$p")
done

install_missing() {
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
}

# transplt parses Python with the tree-sitter-python grammar. Debian packages the runtime (ABI 14) but not
# this grammar, so its generated C sources come from the npm registry, through npm itself (`npm pack`, the
# machine's configured registry), at the 0.20.x release built for that ABI, checked against a pinned digest,
# into .deps/ (git-ignored; never committed).
fetch_grammar() {
  local ver=0.20.4 sum=644cb3faabb8faae1a1c734d1a636f94f40b18e94265f018c4b90dc8cb9b00ba
  local root; root=$(cd "$(dirname "$0")/.." && pwd)
  local dest="$root/.deps/tree-sitter-python-$ver"
  [ -f "$dest/src/parser.c" ] && return 0
  command -v npm >/dev/null || {
    echo "install-deps: npm is needed to fetch tree-sitter-python@$ver (install Node.js with npm, e.g. Debian's npm package)" >&2; exit 1; }
  local tmp; tmp=$(mktemp -d)
  (cd "$tmp" && npm pack --silent "tree-sitter-python@$ver" >/dev/null 2>"$tmp/err") || {
    echo "install-deps: npm pack tree-sitter-python@$ver failed:" >&2; cat "$tmp/err" >&2; rm -rf "$tmp"; exit 1; }
  local tgz="$tmp/tree-sitter-python-$ver.tgz"
  echo "$sum  $tgz" | sha256sum -c --quiet - || {
    echo "install-deps: tree-sitter-python-$ver.tgz does not match the pinned sha256 $sum" >&2; rm -rf "$tmp"; exit 1; }
  tar xzf "$tgz" -C "$tmp" package/src package/LICENSE
  mkdir -p "$root/.deps" && rm -rf "$dest" && mv "$tmp/package" "$dest"
  rm -rf "$tmp"
}

[ ${#missing[@]} -eq 0 ] || install_missing
fetch_grammar
