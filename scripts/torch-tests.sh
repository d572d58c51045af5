#!/usr/bin/env bash
# PyTorch 2.6's own ONNX tests (its TorchScript exporter's, from Debian 13's source package),
# unmodified, run twice in the Debian 13 root: as they are (torch.onnx 2.6, the baseline) and with
# torch.onnx's export entry points routed to torchonnx (tests/torch_tests/torchonnx_route.py, a
# pytest plugin). Writes docs/torch-tests.md: per file, passed / failed / skipped for each
# exporter, and the tests torch.onnx passes and torchonnx fails, grouped by their error (issue 36).
#
#   bash scripts/torch-tests.sh                        # the default files (below)
#   bash scripts/torch-tests.sh test_custom_ops.py     # some of them
#   bash scripts/torch-tests.sh --sample               # CI's sample, through torchonnx only
#   bash scripts/torch-tests.sh --sample --record      # ... and rewrite its list of passing tests
#   bash scripts/torch-tests.sh --fresh-baseline       # run torch.onnx's side again (see below)
#
# torch.onnx's results (the baseline) depend only on the test files and the root's python3-torch,
# python3-onnx and python3-onnxruntime: each file's JUnit file is kept in the cache below, keyed by
# those packages' versions, and a later full run reuses it (--fresh-baseline runs it again). So a
# full run after the first runs torchonnx's side only; test_pytorch_onnx_onnxruntime.py (~1.5 h on
# one core) runs as $(nproc) pytests, one per group of its opset classes.
#
# The sample (tests/torch_tests/sample.txt: per file, the -k selection) covers every file and
# both script and trace classes of the parameterized ones; it fails when a test listed in
# tests/torch_tests/sample-passing.txt (the sample's tests torchonnx passed when recorded) does
# not pass. scripts/test.sh runs it on Debian 13 (TORCHONNX_TORCH_TESTS=0 skips it).
#
# The source tarball is fetched once into the root's /var/cache/torchonnx-pytorch-src (its
# SHA-256 checked against Debian's Sources index), and only test/onnx is unpacked. Needs the
# Debian 13 build (bash scripts/debian13.sh bash scripts/setup.sh). The full run (both exporters,
# every file) is not part of the test command: it takes long; CI runs the sample.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root=$PWD

if [ "$(. /etc/os-release && echo "${VERSION_ID:-}")" != 13 ]; then
  exec bash scripts/debian13.sh bash scripts/torch-tests.sh "$@"
fi

sample=0
record=0
fresh_baseline=0
files=()
for arg in "$@"; do
  case "$arg" in
    --sample) sample=1 ;;
    --record) record=1 ;;
    --fresh-baseline) fresh_baseline=1 ;;
    *) files+=("$arg") ;;
  esac
done
if [ $sample = 0 ] && [ ${#files[@]} -eq 0 ]; then
  files=(test_utility_funs.py test_custom_ops.py test_symbolic_helper.py test_autograd_funs.py
         test_onnx_opset.py test_pytorch_onnx_no_runtime.py test_verification.py
         test_pytorch_onnx_shape_inference.py test_models.py test_models_onnxruntime.py
         test_models_quantized_onnxruntime.py test_pytorch_onnx_onnxruntime.py)
fi

source scripts/install-packages.sh
install_missing torch-tests python3-parameterized python3-expecttest python3-pytest \
  python3-onnxruntime python3-onnx python3-torchvision python3-setuptools curl xz-utils

cache=/var/cache/torchonnx-pytorch-src
version=2.6.0+dfsg
tarball=pytorch_${version}.orig.tar.xz
mkdir -p "$cache"
if [ ! -d "$cache/pytorch-v2.6.0/test/onnx" ]; then
  mirror=${TORCHONNX_DEBIAN_MIRROR:-http://deb.debian.org/debian}
  curl -sSf -o "$cache/Sources.xz" "$mirror/dists/trixie/main/source/Sources.xz"
  expected=$(xz -dc "$cache/Sources.xz" | awk '/^Package: pytorch$/,/^$/' |
             awk -v f="$tarball" '$3 == f && length($1) == 64 {print $1; exit}')
  [ -n "$expected" ] || { echo "torch-tests: $tarball is not in trixie's Sources" >&2; exit 2; }
  [ -f "$cache/$tarball" ] || curl -sSf -o "$cache/$tarball" "$mirror/pool/main/p/pytorch/$tarball"
  echo "$expected  $cache/$tarball" | sha256sum -c --quiet
  tar -xJf "$cache/$tarball" -C "$cache" --wildcards '*/test/onnx/*'
fi
tests=$cache/pytorch-v2.6.0/test/onnx

build=${TORCHONNX_BUILD_DIR:-build-debian13}
out=$(mktemp -d /tmp/torch-tests.XXXXXX)
cd "$tests"
route=(env PYTHONPATH="$root/$build/python:$root/tests/torch_tests" OMP_NUM_THREADS=1
       python3 -m pytest -q -p no:cacheprovider -p torchonnx_route --tb=no)

if [ $sample = 1 ]; then
  start=$SECONDS
  # One pytest per line of sample.txt, and per `or` clause of a selection of top-level clauses
  # (one test class each), $(nproc) at a time: each runs on one thread (OMP_NUM_THREADS=1).
  # Part K of FILE writes FILE.K.torchonnx.xml.
  parts=()
  while IFS=$'\t' read -r f selection; do
    case "$f" in ''|'#'*) continue ;; esac
    if [[ $selection == *" or "* && $selection != *"("* ]]; then
      while IFS= read -r clause; do parts+=("$f"$'\t'"$clause"); done \
        < <(sed 's/ or /\n/g' <<<"$selection")
    else
      parts+=("$f"$'\t'"$selection")
    fi
  done < "$root/tests/torch_tests/sample.txt"
  k=0
  for job in "${parts[@]}"; do
    f=${job%%$'\t'*} selection=${job#*$'\t'}
    while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
    echo "torch-tests: sample of $f ($selection)"
    k=$((k + 1))  # here: a background command expands its words in its own subshell
    "${route[@]}" "$f" -k "$selection" --junitxml="$out/${f%.py}.$k.torchonnx.xml" \
      >/dev/null 2>&1 &
  done
  wait
  check=(python3 "$root/tests/torch_tests/report.py" --check "$out"
         "$root/tests/torch_tests/sample-passing.txt")
  [ $record = 1 ] && check+=(--record)
  status=0
  "${check[@]}" || status=1
  echo "torch-tests: sample $([ $status = 0 ] && echo passed || echo FAILED) in $((SECONDS - start)) s"
  exit $status
fi
# Each file twice (torch.onnx 2.6, then routed to torchonnx), $(nproc) pytests at a time, one
# thread each; test_pytorch_onnx_onnxruntime.py first, as $(nproc) parts per exporter (part K of
# FILE writes FILE.K.<exporter>.xml; its classes are TestONNXRuntime_opset_version_N_..., opsets 7
# to 20, dealt out to the parts in turn). torch.onnx's side comes from the baseline cache when it
# holds the file.
start=$SECONDS
key=$(dpkg-query -W -f='${Package}=${Version} ' python3-torch python3-onnx python3-onnxruntime |
      sha256sum | cut -c1-16)
baseline=$cache/baseline/$version-$key
mkdir -p "$baseline"
big=test_pytorch_onnx_onnxruntime.py
parts=$(nproc)
jobs_for() {  # FILE: one "FILE<TAB>K<TAB>selection" line per part ("" K and selection: whole)
  if [ "$1" != "$big" ]; then printf '%s\t\t\n' "$1"; return; fi
  for ((k = 0; k < parts; k++)); do
    selection=""
    for ((v = 7 + k; v <= 20; v += parts)); do
      selection+="${selection:+ or }opset_version_${v}_is"
    done
    printf '%s\t%s\t%s\n' "$1" "$k" "$selection"
  done
}
ordered=()
for f in "${files[@]}"; do [ "$f" = "$big" ] && ordered+=("$f"); done
for f in "${files[@]}"; do [ "$f" != "$big" ] && ordered+=("$f"); done
cached=()
for f in "${ordered[@]}"; do
  name=${f%.py}
  for exporter in base torchonnx; do
    if [ $exporter = base ] && [ $fresh_baseline = 0 ] &&
       compgen -G "$baseline/$name.*base.xml" >/dev/null; then
      cp "$baseline/$name".*base.xml "$out/"
      cached+=("$f")
      continue
    fi
    while IFS=$'\t' read -r file k selection; do
      while (($(jobs -rp | wc -l) >= $(nproc))); do wait -n || true; done
      xml="$out/$name${k:+.$k}.$exporter.xml"
      select=()
      [ -n "$selection" ] && select=(-k "$selection")
      echo "torch-tests: $f${k:+ part $k} with $([ $exporter = base ] && echo torch.onnx 2.6 ||
                                                echo torchonnx)"
      if [ $exporter = base ]; then
        OMP_NUM_THREADS=1 python3 -m pytest -q -p no:cacheprovider --tb=no "$file" \
          "${select[@]}" --junitxml="$xml" >/dev/null 2>&1 &
      else
        "${route[@]}" "$file" "${select[@]}" --junitxml="$xml" >/dev/null 2>&1 &
      fi
    done < <(jobs_for "$f")
  done
done
wait
# The baseline of each file torch.onnx ran for (all its parts present) goes to the cache.
for f in "${ordered[@]}"; do
  name=${f%.py}
  [[ " ${cached[*]} " == *" $f "* ]] && continue
  n=$(jobs_for "$f" | wc -l)
  [ "$(compgen -G "$out/$name.*base.xml" | wc -l)" -eq "$n" ] && cp "$out/$name".*base.xml "$baseline/"
done
echo "torch-tests: ran ${#files[@]} files in $((SECONDS - start)) s (torch.onnx's side from the" \
  "baseline cache for ${#cached[@]} of them)"
python3 "$root/tests/torch_tests/report.py" "$out" "$root/docs/torch-tests.md" "${files[@]}"
echo "torch-tests: wrote docs/torch-tests.md (JUnit files in $out)"
