#!/bin/sh
# plot_benchmarks.py draws the four plots of docs/benchmarks.md from the raw
# figures in docs/data: each a PNG of the size asked for; a data directory
# without the figures fails with the missing file named.
# usage: check_plots.sh PLOT_BENCHMARKS_PY DATA_DIR
set -eu
script=$1 data=$2
command -v gnuplot >/dev/null || { echo "SKIP: gnuplot is not installed (Debian: gnuplot-nox)"; exit 77; }
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
fail() { echo "FAIL: $*"; exit 1; }

python3 "$script" --data "$data" --out "$out/plots" 2>"$out/err" && [ ! -s "$out/err" ] ||
    fail "plot_benchmarks.py failed or warned: $(cat "$out/err")"
for png in rdma-streaming-rounds rdma-latency-rounds tcp-latency zero-copy; do
    f=$out/plots/$png.png
    [ -f "$f" ] || fail "$png.png was not written"
    # PNG signature, then the IHDR chunk's width and height.
    head -c 8 "$f" | od -An -tx1 | tr -d ' \n' | grep -qx '89504e470d0a1a0a' || fail "$png.png is not a PNG"
    size=$(od -An -tu1 -j16 -N8 "$f" | awk '{ print $3 * 256 + $4 "x" $7 * 256 + $8 }')
    case $size in
        1100x500 | 1100x460 | 960x500) ;;
        *) fail "$png.png is ${size}, not a size the script asks for" ;;
    esac
    echo "ok $png.png $size $(wc -c <"$f") bytes"
done

mkdir "$out/empty"
if python3 "$script" --data "$out/empty" --out "$out/plots2" 2>"$out/err2"; then
    fail "an empty data directory was accepted"
fi
grep -q "perftest-run-P.tsv" "$out/err2" || fail "the error does not name the missing file: $(cat "$out/err2")"
echo "ok an empty data directory fails: $(tail -1 "$out/err2")"
