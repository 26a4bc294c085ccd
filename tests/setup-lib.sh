# Set-up shared by tests/run.sh and tools/demo.sh: install what is missing
# from tests/debian-packages.txt (as root, from the Debian archive), and
# configure a Meson build directory. Source it; it defines functions only.

missing_packages() {
  local p
  for p in $(awk '!/^[[:space:]]*(#|$)/ { print $1 }' "$TW_ROOT/tests/debian-packages.txt"); do
    [ "$(dpkg-query -W -f='${Status}' "$p" 2>/dev/null)" = "install ok installed" ] || printf '%s ' "$p"
  done
}

apt_lists_empty() { ! compgen -G '/var/lib/apt/lists/*_Packages*' >/dev/null; }

install_packages() {
  local missing
  command -v dpkg-query >/dev/null || { echo "not a Debian system: install the packages of tests/debian-packages.txt yourself"; return 0; }
  missing=$(missing_packages)
  if [ -z "$missing" ]; then
    echo "all packages of tests/debian-packages.txt are installed"
    return 0
  fi
  if [ "$(id -u)" != 0 ]; then
    echo "missing packages, and not root to install them: $missing"
    echo "(apt-get install $missing) - continuing; the build or some tests may fail or skip"
    return 0
  fi
  echo "installing: $missing"
  export DEBIAN_FRONTEND=noninteractive
  apt_lists_empty && apt-get update -q
  # shellcheck disable=SC2086 # a list of package names
  apt-get install -y -q --no-install-recommends $missing ||
    { apt-get update -q && apt-get install -y -q --no-install-recommends $missing; }
}

# configure BUILD_DIR [MESON-OPTION...]: set up a new directory, or apply the
# options to an existing one. A new directory is a unity build (Meson compiles
# ten sources as one), which cuts a build made once by about a third of its
# compile time (the main build: 318 s against 221 s on 2 cores); an
# existing one keeps its setting, and -Dunity=off (last wins) makes a
# directory for editing one file at a time.
unity_build=(-Dunity=on -Dunity_size=10)
configure() {
  local dir=$1
  shift
  if [ -f "$dir/meson-private/coredata.dat" ]; then
    if [ $# -gt 0 ]; then meson configure "$dir" "$@"; else echo "reusing $dir"; fi
  else
    meson setup "$dir" "${unity_build[@]}" "$@"
  fi
}
