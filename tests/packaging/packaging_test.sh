#!/usr/bin/env bash
# torchonnx installed and used as a library, as a downstream project would:
#   1. `cmake --install BUILD --prefix P` into a temporary prefix; checks the installed file list
#      (library with its SONAME, CLI, the public headers, CMake package, pkg-config file, nothing
#      else: no internal header);
#   2. the installed CLI: --version and every subcommand's --help (cli_help_test.sh), found
#      library through its RUNPATH, without LD_LIBRARY_PATH;
#   3. examples/ configured and built as an outside project against P (find_package(torchonnx)),
#      checked to use P's headers and library only; the outside-built alexnet_example exports
#      AlexNet and ONNX Runtime runs it; the outside-built custom-op library exports a scripted
#      model through the installed CLI (--load-library);
#   4. a small program compiled and linked with nothing but `pkg-config --cflags --libs torchonnx`.
# The build tree must be built (ctest runs after the build). Temporary folders are removed.
#   packaging_test.sh BUILD_DIR SOURCE_DIR VERSION
set -euo pipefail
if [ $# -ne 3 ]; then
  echo "usage: $0 BUILD_DIR SOURCE_DIR VERSION" >&2
  exit 2
fi
build=$(cd "$1" && pwd)
source_dir=$(cd "$2" && pwd)
version=$3
here=$source_dir/tests/packaging
IFS=. read -r major minor _ <<<"$version"
soname=libtorchonnx.so.$major.$minor

tmp=$(mktemp -d "${TMPDIR:-/tmp}/torchonnx-packaging.XXXXXX")
trap 'rm -rf "$tmp"' EXIT
prefix=$tmp/prefix
unset LD_LIBRARY_PATH PKG_CONFIG_PATH CMAKE_PREFIX_PATH
step() { echo "== $*"; }
die() {
  echo "FAIL: $*" >&2
  exit 1
}
# Compiler cache for the outside builds, keyed on paths relative to the temporary folder.
launcher=()
if command -v ccache >/dev/null 2>&1; then
  export CCACHE_BASEDIR=$tmp
  launcher=(ccache)
fi

step "cmake --install $build --prefix $prefix"
cmake --install "$build" --prefix "$prefix" >"$tmp/install.log" 2>&1 ||
  {
    cat "$tmp/install.log" >&2
    die "cmake --install failed (is the build tree built? the targets torchonnx and torchonnx_cli)"
  }

lib=$(cd "$prefix" && find . -name 'libtorchonnx.so' | sed 's|^\./||')
[ -n "$lib" ] || die "no libtorchonnx.so installed"
libdir=$(dirname "$lib")
# Every installed file, and only those: no test, benchmark, fuzz or example binary, and no header
# but include/torchonnx/*.h (the public API is self-contained).
expected_headers=$(cd "$source_dir/include" && ls torchonnx/*.h | sed 's|^|include/|')
unexpected=$(cd "$prefix" && find . \( -type f -o -type l \) | sed 's|^\./||' | sort |
  grep -Ev "^(bin/torchonnx|$libdir/libtorchonnx\.so(\.$major\.$minor(\.[0-9]+)?)?|$libdir/cmake/torchonnx/torchonnx(Config|ConfigVersion|Targets|Targets-[a-z]+)\.cmake|$libdir/pkgconfig/torchonnx\.pc|include/torchonnx/version\.h)$" |
  grep -Fvx -f <(echo "$expected_headers") || true)
# The Python package (python/), where the build has it: lib/python3.X/dist-packages/torchonnx/.
pydir='lib/python3\.[0-9]+/dist-packages/torchonnx'
unexpected=$(echo "$unexpected" | grep -Ev "^$pydir/([a-z_]+\.py|_C\.cpython-[^/]+\.so)$" || true)
[ -z "$unexpected" ] || die "installed files that should not be: $unexpected"
for f in bin/torchonnx "$libdir/$soname" "$libdir/cmake/torchonnx/torchonnxConfig.cmake" \
  "$libdir/cmake/torchonnx/torchonnxConfigVersion.cmake" \
  "$libdir/cmake/torchonnx/torchonnxTargets.cmake" "$libdir/pkgconfig/torchonnx.pc" \
  include/torchonnx/version.h $expected_headers; do
  [ -e "$prefix/$f" ] || die "$f is not installed"
done
actual_soname=$(readelf -d "$prefix/$lib" | sed -n 's/.*(SONAME).*\[\(.*\)\].*/\1/p')
[ "$actual_soname" = "$soname" ] || die "libtorchonnx.so's SONAME is '$actual_soname', not $soname"
if readelf -d "$prefix/bin/torchonnx" "$prefix/$lib" | grep -E 'R(UN)?PATH' | grep -qF "$build"; then
  die "an installed binary's RUNPATH points into the build tree"
fi
echo "installed $(cd "$prefix" && find . -type f | wc -l) files, SONAME $actual_soname"

if [ -d "$build/python/torchonnx" ]; then
  step "installed Python package: /usr/bin/python3 imports it from the prefix and exports"
  site=$(cd "$prefix" && ls -d lib/python3.*/dist-packages)
  (cd "$tmp" && PYTHONPATH=$prefix/$site /usr/bin/python3 -c "
import io, torch, torchonnx
assert torchonnx.__file__.startswith('$prefix/'), torchonnx.__file__
f = io.BytesIO()
torchonnx.export(torch.nn.Linear(3, 2), torch.randn(1, 3), f)
assert len(f.getvalue()) > 0
maps = open('/proc/self/maps').read()
assert '$prefix/$libdir/$soname' in maps, 'the installed _C does not load the installed library'
") || die "the installed Python package does not import or export"
fi

step "installed CLI: --version and --help of every subcommand"
ldd "$prefix/bin/torchonnx" | grep -F "$soname => $prefix/" >/dev/null ||
  die "the installed CLI does not load $prefix/$libdir/$soname: $(ldd "$prefix/bin/torchonnx" | grep torchonnx)"
bash "$here/cli_help_test.sh" "$prefix/bin/torchonnx" "$version"

step "examples/ as an outside project: find_package(torchonnx) from $prefix"
cmake -S "$source_dir/examples" -B "$tmp/examples-build" -G Ninja -DCMAKE_BUILD_TYPE=Release \
  -DCMAKE_PREFIX_PATH="$prefix" ${launcher:+-DCMAKE_CXX_COMPILER_LAUNCHER=ccache} \
  >"$tmp/configure.log" 2>&1 || {
  cat "$tmp/configure.log" >&2
  die "configuring examples/ against the installed torchonnx failed"
}
found_dir=$(sed -n 's/^torchonnx_DIR:PATH=//p' "$tmp/examples-build/CMakeCache.txt")
[ "$found_dir" = "$prefix/$libdir/cmake/torchonnx" ] ||
  die "find_package(torchonnx) found '$found_dir', not the installed $prefix/$libdir/cmake/torchonnx"
# Only the installed headers and library: nothing from torchonnx's source or build tree.
commands=$(ninja -C "$tmp/examples-build" -t commands)
if grep -E -- "($source_dir/(include|src)|$build)(/| |\"|$)" <<<"$commands"; then
  die "the outside build uses torchonnx's source or build tree (above)"
fi
time cmake --build "$tmp/examples-build" -j 2 >"$tmp/build.log" 2>&1 || {
  cat "$tmp/build.log" >&2
  die "building examples/ against the installed torchonnx failed"
}
for binary in alexnet_example custom_op/libtorchonnx_custom_foo.so; do
  ldd "$tmp/examples-build/$binary" | grep -F "$soname => $prefix/" >/dev/null ||
    die "$binary does not load the installed $soname: $(ldd "$tmp/examples-build/$binary" | grep torchonnx)"
done

step "outside-built alexnet_example"
mkdir "$tmp/alexnet"
"$tmp/examples-build/alexnet_example" "$tmp/alexnet" >"$tmp/alexnet.log" 2>&1 || {
  tail -n 30 "$tmp/alexnet.log" >&2
  die "alexnet_example failed"
}
grep -q "^wrote $tmp/alexnet/alexnet.onnx" "$tmp/alexnet.log" || die "alexnet_example did not say it wrote its model"
[ -s "$tmp/alexnet/alexnet.onnx" ] && [ -s "$tmp/alexnet/alexnet_test_data/input_0.pb" ] &&
  [ -s "$tmp/alexnet/alexnet_test_data/output_0.pb" ] ||
  die "alexnet_example did not write alexnet.onnx and its test data"
node "$source_dir/tools/verify/verify.mjs" "$tmp/alexnet/alexnet.onnx" "$tmp/alexnet/alexnet_test_data" ||
  die "ONNX Runtime does not reproduce libtorch's AlexNet output"
rm -rf "$tmp/alexnet"

step "outside-built custom-op library through the installed CLI (--load-library)"
foo_lib=$tmp/examples-build/custom_op/libtorchonnx_custom_foo.so
/usr/bin/python3 "$source_dir/tests/fixtures/make_custom_op.py" "$foo_lib" "$tmp/foo" foo_scripted ||
  die "scripting FooModel with the outside-built custom-op library failed"
"$prefix/bin/torchonnx" export "$tmp/foo/foo_scripted.pt" -o "$tmp/foo/foo.onnx" \
  --inputs "$tmp/foo/foo_scripted" --load-library "$foo_lib" --custom-opset custom_domain=2 ||
  die "the installed CLI could not export the custom op with the outside-built library"
grep -q "custom_domain" "$tmp/foo/foo.onnx" || die "foo.onnx has no custom_domain node"

step "a program built with pkg-config --cflags --libs torchonnx only"
export PKG_CONFIG_PATH=$prefix/$libdir/pkgconfig
flags=$(pkg-config --cflags --libs torchonnx) || die "pkg-config does not know torchonnx"
echo "pkg-config --cflags --libs torchonnx: $flags"
[ "$(pkg-config --modversion torchonnx)" = "$version" ] || die "torchonnx.pc's version is not $version"
# shellcheck disable=SC2086  # the flags are words
time "${launcher[@]}" g++ -O0 -o "$tmp/pkgconfig_app" "$here/pkgconfig_app.cpp" $flags ||
  die "compiling and linking with pkg-config's flags failed"
LD_LIBRARY_PATH=$prefix/$libdir "$tmp/pkgconfig_app" "$tmp/tiny.onnx" >"$tmp/app.log" 2>&1 || {
  cat "$tmp/app.log" >&2
  die "pkgconfig_app failed"
}
cat "$tmp/app.log"
grep -q "^torchonnx $version: [1-9][0-9]* bytes" "$tmp/app.log" || die "pkgconfig_app printed no export"
LD_LIBRARY_PATH=$prefix/$libdir ldd "$tmp/pkgconfig_app" | grep -F "$soname => $prefix/" >/dev/null ||
  die "pkgconfig_app does not load the installed library"

echo "packaging: install, find_package, outside build of examples/, pkg-config: all ok"
