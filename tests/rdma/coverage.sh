#!/usr/bin/env bash
# Line coverage of rdma_plugin/ from the RDMA suites run in the SoftRoCE guest.
#   tests/rdma/coverage.sh [BUILD_DIR]     (default: build-coverage)
# Configures BUILD_DIR with -Db_coverage=true, runs every test that drives
# the plugin in the guest (`meson test --suite rdma --suite conformance-rdma`;
# the kvd test over RDMA is in `rdma` too; the guest writes the .gcda files
# into the shared build tree) and prints gcovr's summary for rdma_plugin/src.
# Needs gcovr (Debian package gcovr).
set -euo pipefail
src=$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd -P)
build=${1:-$src/build-coverage}
if [ ! -d "$build" ]; then
  meson setup "$build" "$src" -Db_coverage=true -Dbuildtype=debug
fi
ninja -C "$build"
find "$build" -name '*.gcda' -delete
meson test -C "$build" --suite rdma --suite conformance-rdma --num-processes 1 --print-errorlogs || echo "coverage.sh: some RDMA tests failed (coverage still reported)" >&2
cd "$src"
gcovr --root "$src" --object-directory "$build" --filter 'rdma_plugin/src/' --exclude-unreachable-branches \
  --print-summary --txt "$build/rdma-coverage.txt" >/dev/null
cat "$build/rdma-coverage.txt"
